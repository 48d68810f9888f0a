"""Run a command; sample its RSS and its private (anonymous) memory every 0.5 s; print each output line with the
time and the peaks since the previous line (a stage's peaks show on the line that starts the next)."""
import subprocess, sys, threading, time
cmd = sys.argv[1:]
p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, bufsize=0)
stage = {"VmRSS": 0, "RssAnon": 0}
overall = dict(stage)
t0 = time.time()
def read(pid):
    out = {}
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                k = line.split(":")[0]
                if k in stage:
                    out[k] = int(line.split()[1]) * 1024
    except OSError:
        pass
    return out
def sample():
    while p.poll() is None:
        for k, v in read(p.pid).items():
            stage[k] = max(stage[k], v); overall[k] = max(overall[k], v)
        time.sleep(0.5)
threading.Thread(target=sample, daemon=True).start()
buf = b""
while True:
    ch = p.stdout.read(4096)
    if not ch:
        break
    buf += ch
    while b"\n" in buf:
        line, buf = buf.split(b"\n", 1)
        line = line.decode(errors="replace").split("\r")[-1]
        print(f"{time.time() - t0:7.1f}s  rss {stage['VmRSS'] / 1e9:5.2f} anon {stage['RssAnon'] / 1e9:5.2f} GB | {line[:150]}",
              flush=True)
        stage.update({k: 0 for k in stage})
p.wait()
print(f"{time.time() - t0:7.1f}s  end; peaks: rss {overall['VmRSS'] / 1e9:.2f} GB, private {overall['RssAnon'] / 1e9:.2f} GB;"
      f" rc {p.returncode}")
