"""How long a corpus takes to import again from a file with texts added (this week's tweets), keeping the vectors of
the texts it had, against a fresh import of the same file: real tweets of the scale corpus, the first ``--n`` imported
first, then the first ``--n`` + ``--added`` (in another order); both timed in the same run, alternating, median of
``--repeat``; the packaged model, in process, or ``--models`` (an ensemble wider than ``--dim`` is combined by PCA:
the import again projects its new texts by the PCA kept with the corpus, where a fresh import fits its own, so their
vectors are not compared).

    python -m bench.reimport [--n 5000] [--added 500] [--repeat 3] [--models default multilingual-e5-small --dim 256]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from core.corpus import ImportSpec, import_corpus
from core.embed import load_model
from testbed.common import SCALE, emit, run_folder


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--n", type=int, default=5000)
    p.add_argument("--added", type=int, default=500)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--models", nargs="+", default=["default"])
    p.add_argument("--dim", type=int, default=512)
    a = p.parse_args(argv)
    run_folder("reimport", sys.argv)
    tweets = pd.read_csv(SCALE, nrows=a.n + a.added, dtype=str, keep_default_na=False,
                         usecols=["id", "text", "date", "author"])
    loaded = {m: load_model(m, "cpu") for m in a.models}  # loaded once: both sides time the import, not the loads
    spec = dict(name="t", models=a.models, dim=a.dim)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        tweets.iloc[:a.n].to_csv(tmp / "v1.csv", index=False)
        tweets.sample(frac=1, random_state=0).to_csv(tmp / "v2.csv", index=False)
        base = tmp / "base"
        first = import_corpus(ImportSpec(input=tmp / "v1.csv", **spec), root=base, model_loader=lambda n, d: loaded[n])
        pca = first.manifest["pca"]["applied"]
        times: dict[str, list[float]] = {"again, vectors kept": [], "fresh": []}
        vectors: dict[str, np.ndarray] = {}
        agree = 1.0
        for r in range(a.repeat):
            for side in (times if r % 2 == 0 else list(times)[::-1]):
                root = tmp / f"{side[:5]}-{r}"
                if side == "fresh":
                    how = ImportSpec(input=tmp / "v2.csv", **spec)
                else:
                    shutil.copytree(base, root)
                    how = ImportSpec(input=tmp / "v2.csv", overwrite=True, **spec)
                t = time.perf_counter()
                c = import_corpus(how, root=root, model_loader=lambda n, d: loaded[n])
                if side != "fresh":
                    note = next(n for n in c.manifest["validation"]["notes"] if "embedded" in n)
                times[side].append(time.perf_counter() - t)
                vectors[side] = np.array(c.embeddings)
                shutil.rmtree(root)
            agree = min(agree, float((vectors["again, vectors kept"] * vectors["fresh"]).sum(axis=1).min()))
        for side, ts in times.items():
            emit(texts=a.n + a.added, added=a.added, models=a.models, pca=pca, side=side,
                 seconds=round(statistics.median(ts), 1), runs=[round(x, 1) for x in ts])
        emit(note=note, **({} if pca else {"min_cosine_kept_against_fresh": round(agree, 6)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
