"""The scatter's low-dimensional sketch of a corpus's vectors (core/sketch.py), for a corpus imported before
the import made one, or again with other columns; and its hover sample (core/hover.py) where it has none.

    python -m precompute.sketch --corpus NAME [--dim 32] [--force]

Reads the corpus's vectors once (block by block, with a progress bar) and writes sketch.npy and sketch.json
beside them, each atomically: an interrupted run leaves the old sketch (or none) and is simply run again.
A sketch that is already there and fits the corpus is kept unless --force.
"""

from __future__ import annotations

import argparse
import logging
import sys

from core import hover, paths, sketch
from core.corpus import load_corpus
from precompute._cli import run_main, whole

log = logging.getLogger(__name__)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m precompute.sketch", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--corpus", required=True)
    p.add_argument("--dim", type=whole(1), default=sketch.DIM, help=f"columns (default {sketch.DIM})")
    p.add_argument("--force", action="store_true", help="make it again even if a fitting one is there")
    a = p.parse_args(argv)
    c = load_corpus(paths.check_name(a.corpus), check=False)
    rows, _ = hover.sample(c.data_folder, c.frame["text"])  # drawn here (where missing), not on a first scatter
    log.info("corpus %s: hover sample of %d texts in %s", c.name, len(rows), c.data_folder / hover.FILE)
    try:
        have = sketch.load(c.data_folder, c.n)
    except sketch.SketchError as exc:
        log.warning("the sketch there is not usable (%s): making it again", exc)
        have = None
    if have is not None and not a.force and have[1].get("dim") == a.dim:
        log.info("corpus %s already has a sketch of %d columns (%s); --force makes it again",
                 c.name, a.dim, c.data_folder / sketch.FILE)
        return 0
    from tqdm import tqdm

    with tqdm(total=c.n, unit="texts", desc="sketching", file=sys.stderr) as bar:
        meta = sketch.build(c.embeddings, c.data_folder, dim=a.dim,
                            progress=lambda done, total: bar.update(done - bar.n))
    log.info("corpus %s: sketch of %d x %d written in %.1f s (%.0f%% of the variance) to %s", c.name, c.n, a.dim,
             meta["seconds"], 100 * meta["explained_variance"], c.data_folder / sketch.FILE)
    return 0


if __name__ == "__main__":
    sys.exit(run_main(main))
