"""A server's memory for one corpus (issue 29): private memory (USS) and RSS apart from the memory-mapped
vectors, after opening the corpus as the server does and running every search once and a keyword search.

    python -m bench.server_memory scale-1000000

Opens through ``ui.resources`` (the server's own cached functions), so it measures an earlier tree the
same way when run from that tree's folder with ``SEMANNO_DATA`` pointing at the same data.
"""

from __future__ import annotations

import os
import sys

import numpy as np

sys.path.insert(0, os.getcwd())  # the checkout measured is the current folder's

from bench.scale import memory  # noqa: E402
from core import paths  # noqa: E402
from testbed.common import emit, run_folder  # noqa: E402
from ui import resources  # noqa: E402


def main(argv=None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    name = argv[0]
    run_folder("server-memory", sys.argv)
    root = str(paths.data_root())
    c = resources._corpus(root, name, 0.0)
    ctx = resources._search_context(root, name, 0.0)
    ctx.word_index.matrix  # noqa: B018 -- loaded as the first Suggest would
    from core.search import REGISTRY
    from core.search.keyword import find_rows

    rng = np.random.default_rng(0)
    inc, exc = np.sort(rng.choice(c.n, 20, replace=False)), np.sort(rng.choice(c.n, 20, replace=False))
    for m in ("cos", "lda", "nn1", "nn2", "suggest"):
        REGISTRY[m].search(ctx, inc, exc, 100)
    find_rows(ctx.keyword_index, "trump")
    REGISTRY["keyword"].search(ctx, inc, exc, None, query="trump")
    emit(kind="server_memory", corpus=name, rows=c.n, tree=os.getcwd(),
         **memory(str(c.vector_file) if c.vector_file else None))


if __name__ == "__main__":
    main()
