import json, random
o = json.load(open("/tmp/s48/old.json")); n = json.load(open("/tmp/s48/new.json"))
counts = o["counts"]; old, new = o["merged"], n["merged"]
only_old = sorted(set(old) - set(new), key=lambda f: -counts[f])
only_new = sorted(set(new) - set(old), key=lambda f: -counts[f])
diff = sorted((f for f in set(old) & set(new) if old[f] != new[f]), key=lambda f: -counts[f])
print("joins old", len(old), "new", len(new), "only old", len(only_old), "only new", len(only_new), "differ", len(diff))
print("TOP only old", [(f, old[f], counts[f]) for f in only_old[:40]])
print("TOP only new", [(f, new[f], counts[f]) for f in only_new[:40]])
print("TOP differ", [(f, old[f], new[f], counts[f]) for f in diff[:30]])
random.seed(1)
for name, m, only in (("old", old, only_old), ("new", new, only_new)):
    print("SAMPLE", name, [(f, m[f]) for f in random.sample(only, 50)])
print("SAMPLE differ", [(f, old[f], new[f]) for f in random.sample(diff, 30)])
