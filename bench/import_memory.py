"""An import's own peak memory and time when it embeds (not brings) the vectors of millions of texts: the texts of
``bench.make_scale_corpus --rows N`` (its ``texts.parquet``; the first ``--rows`` of them), embedded by a stand-in
model of ``--dim`` dimensions (random vectors, made in a moment: the import's own gathering, normalising, combining
and writing are measured, not a model's encoding, which would take days on 2 cores), each import in a fresh process
of the code in ``--tree`` (repeat it to compare two trees in the same sitting; a worktree of an older commit). Peak
memory: VmHWM (resident pages, a memory-mapped file's included: those are the page cache's, dropped under pressure)
and the process's own, RssAnon, sampled every 50 ms; the disk it takes at most (the growth of the used space of
the disk of ``--work``, sampled every 0.5 s). Median of ``--repeat``.

    python -m bench.import_memory --texts data/.scale-input/rows-10000000/texts.parquet --rows 1000000 \\
        [--tree . --tree /tmp/before] [--dim 384] [--models 1] [--repeat 2]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pyarrow.parquet as pq

from testbed.common import emit, run_folder

STEP = """
import json, re, sys, threading, time
from pathlib import Path
import numpy as np
import core
from core.corpus import ImportSpec, import_corpus
src, root, dim, models = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])

class StandIn:  # random vectors, a batch at a time: the import's own work is measured, not a model's
    def get_sentence_embedding_dimension(self):
        return dim
    def encode(self, texts, **kw):
        return np.random.default_rng(len(texts)).standard_normal((len(texts), dim), dtype=np.float32)

def anon():  # the process's own memory: mapped files' pages (a memory-mapped matrix's) are the page cache's
    return int(re.search(r"RssAnon:\\s+(\\d+)", Path("/proc/self/status").read_text()).group(1))

most = [0]
def watch():
    while True:
        most[0] = max(most[0], anon())
        time.sleep(0.05)

threading.Thread(target=watch, daemon=True).start()
t = time.perf_counter()
c = import_corpus(ImportSpec(input=src, name="c", models=[f"m{i}" for i in range(models)], dim=dim,
                             chunk_size=65536, batch_size=8192), root=root, model_loader=lambda m, d: StandIn())
s = time.perf_counter() - t
peak = int(re.search(r"VmHWM:\\s+(\\d+)", Path("/proc/self/status").read_text()).group(1))
print(json.dumps({"s": s, "peak_mb": peak / 1e3, "peak_anon_mb": max(most[0], anon()) / 1e3, "rows": len(c.frame),
                  "dim": c.dim, "core": core.__file__, "embed_seconds": c.manifest.get("embed_seconds")}))
"""


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--texts", type=Path, required=True, help="texts.parquet of bench.make_scale_corpus --rows N")
    p.add_argument("--rows", type=int, default=1_000_000)
    p.add_argument("--dim", type=int, default=384)
    p.add_argument("--models", type=int, default=1, help="stand-in models: 2 or more are combined (by a PCA to "
                                                         "--dim)")
    p.add_argument("--tree", type=Path, action="append", help="the code to run (default: this tree); repeatable")
    p.add_argument("--repeat", type=int, default=2)
    p.add_argument("--work", type=Path, default=None, help="where the slice and the corpora go (default: a temp dir)")
    a = p.parse_args(argv)
    folder = run_folder("import-memory", sys.argv)
    trees = [t.resolve() for t in (a.tree or [Path(__file__).resolve().parents[1]])]
    python = Path.cwd() / ".venv" / "bin" / "python"
    python = python if python.exists() else Path(sys.executable)
    with tempfile.TemporaryDirectory(dir=a.work) as tmp:
        src = Path(tmp) / f"texts-{a.rows}.parquet"
        table = pq.ParquetFile(a.texts)
        with pq.ParquetWriter(src, table.schema_arrow) as out:  # the first --rows, a row group at a time
            left = a.rows
            for batch in table.iter_batches(batch_size=min(left, 1 << 18)):
                out.write_batch(batch.slice(0, left))
                left -= min(left, len(batch))
                if not left:
                    break
        runs: dict[Path, list[dict]] = {t: [] for t in trees}
        for _ in range(a.repeat):
            for tree in trees:  # alternating, so that both see the same machine
                root = Path(tmp) / "data"
                env = {**os.environ, "PYTHONPATH": str(tree)}
                base = shutil.disk_usage(tmp).used
                with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
                    child = subprocess.Popen([str(python), "-c", STEP, str(src), str(root), str(a.dim),
                                              str(a.models)], cwd=tree, env=env, stdout=out, stderr=err, text=True)
                    disk = 0
                    while child.poll() is None:  # the disk the import takes at most (its work folder and corpus)
                        disk = max(disk, shutil.disk_usage(tmp).used - base)
                        time.sleep(0.5)
                    out.seek(0), err.seek(0)
                    done = subprocess.CompletedProcess(child.args, child.returncode, out.read(), err.read())
                if done.returncode:
                    emit(tree=str(tree), failed=done.returncode, stderr=done.stderr[-2000:])
                    shutil.rmtree(root, ignore_errors=True)
                    continue
                r = {**json.loads(done.stdout.strip().splitlines()[-1]), "peak_disk_gb": disk / 1e9}
                assert r["core"].startswith(str(tree)), f"{r['core']} is not the code of {tree}"
                runs[tree].append(r)
                emit(tree=str(tree), run=r)
                shutil.rmtree(root, ignore_errors=True)
        for tree, rs in runs.items():
            if rs:
                emit(tree=str(tree), rows=a.rows, dim=a.dim, models=a.models, runs=len(rs),
                     import_s=round(statistics.median(r["s"] for r in rs), 1),
                     peak_mb=round(statistics.median(r["peak_mb"] for r in rs)),
                     peak_anon_mb=round(statistics.median(r["peak_anon_mb"] for r in rs)),
                     peak_disk_gb=round(statistics.median(r["peak_disk_gb"] for r in rs), 1),
                     embed_s=round(statistics.median(r["embed_seconds"] for r in rs), 1))
    print(f"results: {folder}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
