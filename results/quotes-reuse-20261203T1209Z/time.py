"""The set quotes made at import and made again: one-off timing (2026-12-03, session 61).

    PYTHONPATH=. python results/quotes-reuse-*/time.py [--tree PATH] [--rounds 3] ARM...

ARM: import (the import command on 20,000 StackOverflow titles, a fifth made quotes, with and without --quotes-set,
alternating), reuse (19,000 imported and the set made; then all 20,000 imported again and the set made again; then
the set made with another weight), dup (4,000 quotes of only 400 titles: the set made from nothing). --tree: the code
to time (a worktree of an earlier commit for "before"). MiniLM ("default"), this machine's 2 cores."""
import argparse, json, os, shutil, subprocess, sys, tempfile, time
from pathlib import Path

p = argparse.ArgumentParser()
p.add_argument("arms", nargs="+")
p.add_argument("--tree", default=".")
p.add_argument("--rounds", type=int, default=3)
a = p.parse_args()
tree = Path(a.tree).resolve()
sys.path.insert(0, str(tree))
os.environ["HF_HUB_OFFLINE"] = "1"
import numpy as np
import pandas as pd
import core
assert Path(core.__file__).resolve().parents[1] == tree, core.__file__  # the code timed is the tree's
from bench.quote_vectors import quoted_benchmark

SO = Path("/work/shared/data/stackoverflow.csv")
frame = quoted_benchmark(SO, "label", 0.2, None, 0)
work = Path(tempfile.mkdtemp(prefix="quotes-reuse-"))
py = str(Path.cwd() / ".venv" / "bin" / "python")  # the venv itself (a resolved link is the bare interpreter)


def emit(**kw):
    print(json.dumps({"tree": str(tree), **kw}), flush=True)


def cmd(src, name, *flags):
    env = {**os.environ, "SEMANNO_DATA": str(work / "d"), "PYTHONPATH": str(tree)}
    t0 = time.perf_counter()
    subprocess.run([py, "-m", "precompute.embed", str(src), "--name", name, "--model", "default", *flags],
                   cwd=tree, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return round(time.perf_counter() - t0, 1)


def build(name, **kw):
    from core import quoted
    from core.corpus import load_corpus
    c = load_corpus(name, work / "d")
    t0 = time.perf_counter()
    made = quoted.build(c, **kw)
    return round(time.perf_counter() - t0, 1), made.manifest


for r in range(a.rounds):
    if "import" in a.arms:
        src = work / "so.csv"
        frame.to_csv(src, index=False)
        for arm, flags in ((("plain", ()), ("quotes-set", ("--quotes-set",))) if r % 2 == 0
                           else (("quotes-set", ("--quotes-set",)), ("plain", ()))):
            shutil.rmtree(work / "d", ignore_errors=True)
            emit(arm=f"import {arm}", round=r, seconds=cmd(src, "so", *flags))
    if "reuse" in a.arms:
        shutil.rmtree(work / "d", ignore_errors=True)
        os.environ["SEMANNO_DATA"] = str(work / "d")
        part = work / "week1.csv"
        frame.iloc[:19_000].to_csv(part, index=False)
        cmd(part, "so")
        s0, m0 = build("so")
        emit(arm="set from nothing (19,000 rows)", round=r, seconds=s0, quotes=m0["quotes"],
             embedded=m0.get("embedded", m0["quotes"]))
        whole = work / "week2.csv"
        frame.to_csv(whole, index=False)
        emit(arm="import again (20,000 rows)", round=r, seconds=cmd(whole, "so", "--overwrite"))
        s1, m1 = build("so")
        emit(arm="set made again after the new import", round=r, seconds=s1, quotes=m1["quotes"],
             embedded=m1.get("embedded", m1["quotes"]))
        s2, m2 = build("so", weight=0.5)
        emit(arm="set made again, another weight", round=r, seconds=s2, embedded=m2.get("embedded", m2["quotes"]))
    if "dup" in a.arms:
        from core.ingest import QUOTED
        shutil.rmtree(work / "d", ignore_errors=True)
        dup = frame.copy()
        q = np.flatnonzero(dup[QUOTED].to_numpy() != "")
        dup.loc[q, QUOTED] = dup.loc[q[np.arange(len(q)) % 400], QUOTED].to_numpy()  # 400 titles, each quoted 10x
        src = work / "dup.csv"
        dup.to_csv(src, index=False)
        cmd(src, "dup")
        s, m = build("dup")
        emit(arm="set from nothing, 4,000 quotes of 400 titles", round=r, seconds=s, quotes=m["quotes"],
             embedded=m.get("embedded", m["quotes"]))
shutil.rmtree(work, ignore_errors=True)
