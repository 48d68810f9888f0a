"""The keyword index of a corpus imported before the index folded its texts as the in-memory search does
(core/search/textindex.py, EDITION): a phrase typed across a Windows line break (CRLF) is missed there, and a
short word inside a shortened link's code (t.co/...) found. Builds it again in the corpus's data folder, with a
progress bar; each file is replaced atomically, so searches meanwhile read the old ones and an interrupted run
leaves the old index (run it again). The app offers the same on the Annotate page.

    python -m precompute.reindex --corpus NAME [--force]

An index that is already today's is left as it is unless --force.
"""

from __future__ import annotations

import argparse
import logging
import sys

from core import paths
from core.corpus import load_corpus, reindex_keywords
from core.search import textindex
from precompute._cli import run_main

log = logging.getLogger(__name__)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m precompute.reindex", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--corpus", required=True)
    p.add_argument("--force", action="store_true", help="build it again even where it is today's")
    a = p.parse_args(argv)
    c = load_corpus(paths.check_name(a.corpus), check=False)
    if c.keyword_index_file is None:
        log.info("corpus %s has no keyword index on disk (it is searched in memory, %s texts): nothing to do",
                 c.name, f"{c.n:,}")
        return 0
    if not c.keyword_index_outdated and not a.force:
        log.info("corpus %s's keyword index is today's (edition %d); --force builds it again", c.name,
                 textindex.EDITION)
        return 0
    from tqdm import tqdm

    with tqdm(total=c.n, unit="texts", desc="indexing the words for keyword search", file=sys.stderr) as bar:
        def step(done: int, total: int, info: dict | None = None) -> None:
            bar.update(max(0, min(done, c.n) - bar.n))  # the quotes' index after it: the bar stays full

        seconds = reindex_keywords(c, progress=step, force=a.force)
    if seconds is None:
        log.info("corpus %s: nothing built (its index was built meanwhile, or the corpus imported again)", c.name)
        return 0
    log.info("corpus %s: keyword index built again (edition %d) in %.1f s, in %s", c.name, textindex.EDITION,
             seconds, c.data_folder)
    return 0


if __name__ == "__main__":
    sys.exit(run_main(main))
