"""The embedding set ``quotes``: each quote's vector moved towards the tweet it quotes (core/quoted.py), so that
COS, LDA, NN1, NN2 and Suggest find a quote whose own words say nothing of its topic ("This!").

    python -m precompute.quotes --corpus NAME [--weight 1.0] [--batch-size 64] [--engine ray [--ray-address A]]

Embeds what the corpus's quotes quote with the corpus's own models, each quoted tweet once however often it is
quoted, and none the set made before kept (run again after a new import, only the tweets quoted since are embedded;
a few kept ones are embedded again to check the model); a progress bar; chunks are kept, so a killed run resumes
where it stopped when run again; then writes the set whole or not at all. Pick it on the Annotate
page's sidebar (*Embedding set*); the import's own vectors are not touched.
"""

from __future__ import annotations

import argparse
import logging
import sys

from core import paths, quoted
from core.corpus import load_corpus
from precompute._cli import add_engine_args, engine_args, number, run_main, whole

log = logging.getLogger(__name__)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m precompute.quotes", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--corpus", required=True)
    p.add_argument("--weight", type=number(0, 100, lo_open=True), default=quoted.WEIGHT,
                   help=f"how much what a quote quotes weighs beside its own words (default {quoted.WEIGHT})")
    p.add_argument("--batch-size", type=whole(1), default=64)
    add_engine_args(p)
    a = p.parse_args(argv)
    c = load_corpus(paths.check_name(a.corpus))
    from tqdm import tqdm

    bar = None

    def progress(done: int, total: int, info: dict) -> None:
        nonlocal bar
        if bar is None and total:
            bar = tqdm(total=total, unit="texts", desc="embedding what the quotes quote", file=sys.stderr)
        if bar is not None:
            bar.update(done - bar.n)

    try:
        out = quoted.build(c, weight=a.weight, batch_size=a.batch_size, progress=progress,
                           engine=engine_args(a))
    finally:
        if bar is not None:
            bar.close()
    m = out.manifest
    log.info("corpus %s: embedding set %r written (%d quotes read with what they quote, weight %g; %d quoted tweets, "
             "%d embedded now, the others kept from the set made before) in %s; pick it as the Embedding set in the "
             "Annotate page's sidebar", c.name, out.name, m["quotes"], a.weight, m["quoted_tweets"], m["embedded"],
             out.path)
    return 0


if __name__ == "__main__":
    sys.exit(run_main(main))
