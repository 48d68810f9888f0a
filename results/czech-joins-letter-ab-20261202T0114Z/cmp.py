# python cmp.py old.json new.json: every join that differs, by how many texts hold the form
import json, sys
old, new = (json.load(open(f)) for f in sys.argv[1:3])
for key in ("key_lemmas_cs", "suggest_cs", "suggest_en"):
    a, b = old[key], new[key]
    c = old.get(key + "_counts") or {}
    changed = sorted({w for w in set(a) | set(b) if a.get(w) != b.get(w)}, key=lambda w: (-c.get(w, 0), w))
    print(f"## {key}: {len(a)} joined before, {len(b)} after, {len(changed)} differ")
    for w in changed:
        print(f"{w} ({c.get(w, '')}): {a.get(w, '-')} -> {b.get(w, '-')}")
