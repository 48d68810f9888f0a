"""Idle CPU of the server with one open tab: Streamlit's file watcher on (its default) and off (ours).

    python -m bench.idle [--seconds 30] [--corpus demo]

Starts `streamlit run streamlit_app.py` from the project folder (where .venv lives) with
``server.fileWatcherType`` set each way, opens the Annotate page in chromium, waits for it to
settle, then reads the server process's CPU time (user + system, children included) over
``--seconds``. One JSON line per setting: percent of one core.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

from testbed.common import emit, run_folder
from core import paths

ROOT = Path(__file__).resolve().parents[1]


def cpu_seconds(pid: int) -> float:
    """User + system CPU of a process and its reaped children, from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = sum(int(v) for v in fields[11:15])
    return ticks / os.sysconf("SC_CLK_TCK")


def measure(watcher: str, seconds: float, corpus: str) -> dict:
    from testbed.browser import browser_page, free_port, wait_idle

    port = free_port()
    log = open(f"/tmp/semanno-idle-{watcher}.log", "w")
    proc = subprocess.Popen([str(Path(sys.executable).parent / "streamlit"), "run", "streamlit_app.py",
                             "--server.port", str(port), "--server.headless", "true",
                             "--server.fileWatcherType", watcher], cwd=ROOT, stdout=log, stderr=subprocess.STDOUT,
                            env={**os.environ, "SEMANNO_DATA": str(paths.data_root())})
    try:
        with browser_page() as page:
            deadline = time.time() + 120
            while time.time() < deadline:
                try:
                    page.goto(f"http://127.0.0.1:{port}/Annotate?corpus={corpus}")
                    break
                except Exception:
                    time.sleep(1)
            page.get_by_label("Keyword or regular expression").wait_for(timeout=120_000)
            wait_idle(page)
            time.sleep(10)  # let start-up work (watchers walking folders, caches) settle
            c0, t0 = cpu_seconds(proc.pid), time.monotonic()
            time.sleep(seconds)
            c1, t1 = cpu_seconds(proc.pid), time.monotonic()
    finally:
        proc.terminate()
        proc.wait(20)
        log.close()
    overflow = Path(f"/tmp/semanno-idle-{watcher}.log").read_text().count("Inotify")
    return {"watcher": watcher, "idle_cpu_percent_of_one_core": round(100 * (c1 - c0) / (t1 - t0), 1),
            "seconds": seconds, "inotify_log_lines": overflow}


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--seconds", type=float, default=30)
    p.add_argument("--corpus", default="demo")
    a = p.parse_args(argv)
    run_folder("idle", sys.argv)
    for watcher in ("auto", "none"):
        emit(**measure(watcher, a.seconds, a.corpus))


if __name__ == "__main__":
    main()
