import sys, threading, importlib, time, random
mods = sys.argv[2:]
delay = float(sys.argv[1])
errs = []
def go(i, m):
    time.sleep(i * delay)
    try:
        importlib.import_module(m)
    except Exception as e:
        errs.append(f"{m}: {type(e).__name__}: {e}")
ts = [threading.Thread(target=go, args=(i, m)) for i, m in enumerate(mods)]
[t.start() for t in ts]; [t.join() for t in ts]
print("FAIL " + " | ".join(errs) if errs else "ok")
