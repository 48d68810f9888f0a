"""What the embedding set ``quotes`` (core/quoted.py) gives the simulated annotator where quotes say nothing of
their topic themselves: a labelled benchmark, every ``--share`` of its texts made a quote of itself (its own words
replaced by a short reaction such as "This!" or "Exactly.", the original text as what it quotes, as an import of
Twitter's JSON writes core.ingest.QUOTED), imported with the packaged model; then bench.annotator (the page's own
functions; the keyword search with *Quoted tweets too*, as the page ticks it) on the import's vectors and on the
set, the same classes and methods, in the same run.

    python -m bench.quote_vectors [--data ../shared/data/stackoverflow.csv] [--share 0.2] [--classes 6]
        [--methods cos,suggest] [--weight 1.0 ...] [--rows N]

Prints one line per set (and weight) with each method's mean recall at 1x / 1.5x / 2x a class's size and how long
the set took to make; bench.annotator's own folders (beside this run's) hold its lines. Said plainly: the quotes are made, not read from a corpus
(no labelled corpus here has quotes); a real quote often has words of its own on its topic, where this measures the
case the set is for.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from testbed.common import emit, run_folder

REACTIONS = ["This!", "Exactly.", "So true", "Wow.", "Read this", "Yes!!", "Interesting...", "Agreed.",
             "Look at this", "Same here", "Finally!", "Great question", "lol", "+1", "Hmm", "Worth a read",
             "Couldn't agree more", "Thoughts?", "Important.", "Please share", "Ha!", "Nope.", "Wait what", "Oh no"]


def quoted_benchmark(data: Path, label: str, share: float, rows: int | None, seed: int) -> pd.DataFrame:
    """The benchmark with every ``share`` of its texts a quote of itself (a reaction, what it quotes the text)."""
    from core.ingest import QUOTED

    frame = pd.read_csv(data, dtype=str, keep_default_na=False, nrows=rows)
    rng = np.random.default_rng(seed)
    quotes = np.sort(rng.choice(len(frame), int(round(share * len(frame))), replace=False))
    frame[QUOTED] = ""
    frame.loc[quotes, QUOTED] = "@user" + frame.loc[quotes, "id"] + ": " + frame.loc[quotes, "text"]
    frame.loc[quotes, "text"] = rng.choice(REACTIONS, len(quotes))
    keep = ["id", "text", label, QUOTED] + (["label_name"] if "label_name" in frame.columns else [])
    return frame[keep]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.quote_vectors", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data", type=Path, default=Path(__file__).resolve().parents[2] / "shared/data/stackoverflow.csv")
    p.add_argument("--label-column", default="label")
    p.add_argument("--share", type=float, default=0.2, help="of the texts made quotes (default 0.2)")
    p.add_argument("--classes", type=int, default=6, help="the first N classes by label (default 6)")
    p.add_argument("--methods", default="cos,suggest")
    p.add_argument("--weight", type=float, nargs="+", default=[1.0])
    p.add_argument("--quoted-words", nargs="+", choices=["on", "off"], default=["on"],
                   help="Suggest's words of a quote with what it quotes ('on', as the app) or its own only ('off'); "
                        "both: each set run both ways")
    p.add_argument("--rows", type=int, default=None)
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args(argv)
    folder = run_folder("quote-vectors", sys.argv if argv is None else ["bench/quote_vectors.py", *argv])
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    root = Path(tempfile.mkdtemp(prefix="quote-vectors-"))
    os.environ["SEMANNO_DATA"] = str(root)  # a data root of its own: the user's corpora untouched
    from core import quoted
    from core.corpus import ImportSpec, import_corpus, load_corpus

    frame = quoted_benchmark(a.data, a.label_column, a.share, a.rows, a.seed)
    src = root / f"{a.data.stem}-quotes.csv"
    frame.to_csv(src, index=False)
    name = f"{a.data.stem}-quotes"
    t0 = time.time()
    import_corpus(ImportSpec(input=src, name=name, models=["default"]), root=root)
    imported = time.time() - t0
    c = load_corpus(name, root)
    classes = sorted(set(frame[a.label_column]) - {""}, key=lambda v: (len(v), v))[:a.classes]
    is_quote = (frame[quoted.QUOTED] != "").to_numpy()
    emit(data=str(a.data), rows=c.n, quotes=int(is_quote.sum()), classes=classes, import_s=round(imported, 1))
    arms = [("import", None)] + [(quoted.SET, w) for w in a.weight]
    for set_name, weight in arms:
        made = None
        if weight is not None:
            t0 = time.time()
            quoted.build(c, weight=weight)
            made = round(time.time() - t0, 1)
        for words in a.quoted_words:
            out = folder / f"{set_name}-{weight}-{words}"
            cmd = [sys.executable, "-m", "bench.annotator", "--data", str(src), "--corpus", name, "--label-column",
                   a.label_column, "--classes", *classes, "--methods", a.methods, "--embedding-set", set_name,
                   "--quoted-words", words, "--out", str(out)]
            subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, cwd=Path(__file__).resolve().parents[1])
            summary = json.loads((out / f"annotator_{name}.json").read_text())
            emit(set=set_name, weight=weight, quoted_words=words, set_s=made, classes=len(classes), methods={
                m: {k: v for k, v in s.items() if k.startswith("recall@")} for m, s in summary["methods"].items()})
    shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
