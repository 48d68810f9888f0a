import sys, threading, importlib, traceback
mods = sys.argv[1:]
errs = []
barrier = threading.Barrier(len(mods))
def go(m):
    barrier.wait()
    try:
        importlib.import_module(m)
    except Exception as e:
        errs.append(f"{m}: {type(e).__name__}: {e}")
ts = [threading.Thread(target=go, args=(m,)) for m in mods]
[t.start() for t in ts]; [t.join() for t in ts]
print("FAIL " + " | ".join(errs) if errs else "ok")
