"""How long a corpus takes to import again from a file with texts added (this week's tweets), keeping the vectors of
the texts it had, against a fresh import of the same file: real tweets of the scale corpus, the first ``--n`` imported
first, then the first ``--n`` + ``--added`` (in another order); both timed in the same run, alternating, median of
``--repeat``; the packaged model, in process.

    python -m bench.reimport [--n 5000] [--added 500] [--repeat 3]
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
    a = p.parse_args(argv)
    run_folder("reimport", sys.argv)
    tweets = pd.read_csv(SCALE, nrows=a.n + a.added, dtype=str, keep_default_na=False,
                         usecols=["id", "text", "date", "author"])
    model = load_model("default", "cpu")  # loaded once: both sides time the import, not the model's load
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        tweets.iloc[:a.n].to_csv(tmp / "v1.csv", index=False)
        tweets.sample(frac=1, random_state=0).to_csv(tmp / "v2.csv", index=False)
        base = tmp / "base"
        import_corpus(ImportSpec(input=tmp / "v1.csv", name="t"), root=base, model_loader=lambda n, d: model)
        times: dict[str, list[float]] = {"again, vectors kept": [], "fresh": []}
        vectors: dict[str, np.ndarray] = {}
        agree = 1.0
        for r in range(a.repeat):
            for side in (times if r % 2 == 0 else list(times)[::-1]):
                root = tmp / f"{side[:5]}-{r}"
                if side == "fresh":
                    spec = ImportSpec(input=tmp / "v2.csv", name="t")
                else:
                    shutil.copytree(base, root)
                    spec = ImportSpec(input=tmp / "v2.csv", name="t", overwrite=True)
                t = time.perf_counter()
                c = import_corpus(spec, root=root, model_loader=lambda n, d: model)
                times[side].append(time.perf_counter() - t)
                vectors[side] = np.array(c.embeddings)
                shutil.rmtree(root)
            agree = min(agree, float((vectors["again, vectors kept"] * vectors["fresh"]).sum(axis=1).min()))
        for side, ts in times.items():
            emit(texts=a.n + a.added, added=a.added, side=side, seconds=round(statistics.median(ts), 1),
                 runs=[round(x, 1) for x in ts])
        emit(min_cosine_kept_against_fresh=round(agree, 6))
    return 0


if __name__ == "__main__":
    sys.exit(main())
