"""Make the 300k scale corpus for UI benchmarks: real texts, dates and authors from
../shared/data/russian_troll_tweets_recent300k.csv, with *synthetic* clustered unit embeddings
(384-d like the default model; embedding 300k tweets on 2 CPU cores takes over an hour, and page
latency does not depend on the values).

    python -m bench.make_scale_corpus [--name scale] [--dim 384]
"""

from __future__ import annotations

import argparse
from pathlib import Path
from datetime import datetime, timezone

from testbed.common import SCALE, clustered
from core import __version__, paths
from core.atomic import save_json, save_npy, save_parquet
from core.ingest import Options, read_table, sha256_file, validate


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--name", default="scale")
    p.add_argument("--dim", type=int, default=384)
    p.add_argument("--source", type=Path, default=SCALE, help="a CSV of ../shared/data (default: the 300k tweets)")
    a = p.parse_args(argv)
    SOURCE = a.source
    frame, report = validate(read_table(SOURCE), str(SOURCE), options=Options(dedupe="first"))
    x, _ = clustered(len(frame), a.dim, clusters=500)
    folder = paths.corpus_dir(a.name)
    save_parquet(folder / "corpus.parquet", frame)
    save_npy(folder / "embeddings.npy", x)
    save_json(folder / "manifest.json", {
        "name": a.name, "source": {"path": str(SOURCE), "sha256": sha256_file(SOURCE)},
        "models": [{"name": "synthetic clustered unit vectors (benchmark only)", "dim": a.dim}],
        "dim": a.dim, "rows": len(frame), "validation": report.record(),
        "created_at": datetime.now(timezone.utc).isoformat(timespec="seconds"), "tool_version": __version__})
    print(f"{a.name}: {len(frame):,} rows in {folder}")


if __name__ == "__main__":
    main()
