"""Scale corpora for benchmarks.

Two forms:

``python -m bench.make_scale_corpus [--name scale]``
    the 300k UI corpus (issue 14): the real texts, dates and authors of
    ../shared/data/russian_troll_tweets_recent300k.csv with *synthetic* clustered unit vectors,
    written straight into the data root.

``python -m bench.make_scale_corpus --rows N [--out FOLDER]``
    an import's input of N short texts (issue 29: 1M to 10M), derived from every real corpus in
    ../shared/data (troll tweets, Czech politicians' tweets, crisis tweets, the four clustering
    benchmarks) with variation (a retweet prefix, an added hashtag or link, a dropped or swapped
    word), dated (the source's date moved by up to a year; sources without dates get one in
    2015-2021) and with authors (the source's, or one of N/20 others). Beside it their vectors: a
    synthetic clustered unit vector per source text (500 topics), each variant a small perturbation
    of its source's, so variants of one text are neighbours as real embeddings would make them
    (embedding 10M texts on 2 CPU cores would take days). Written as ``texts.parquet`` (id, text,
    date, author) and ``vectors.npy`` (float16, one row per text, in order), block by block; and
    ``made.json`` saying all this.
"""

from __future__ import annotations

import argparse
import json
import time
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pandas as pd

from core import __version__, paths
from core.atomic import save_json, save_npy, save_parquet
from core.ingest import Options, read_table, sha256_file, validate
from testbed.common import SCALE, SHARED, clustered

SOURCES = {  # file -> (text, date, author) columns; None: the source has none
    "russian_troll_tweets_recent300k.csv": ("text", "date", "author"),
    "czech_politicians_tweets_2021.csv": ("text", "date", "author"),
    "crisislex_t26.csv": ("text", "date", None),
    "stackoverflow.csv": ("text", None, None),
    "agnews8000.csv": ("text", None, None),
    "biomedical.csv": ("text", None, None),
    "searchsnippets.csv": ("text", None, None),
}
BLOCK = 500_000
TAGS = ["#news", "#breaking", "#politics", "#covid", "#election", "#usa", "#praha", "#volby", "#crisis",
        "#tech", "#health", "#sport", "#world", "#economy", "#ukraine", "#cz", "#maga", "#resist"]


def source_pool(shared: Path = SHARED) -> pd.DataFrame:
    """Every text of the real corpora with its date (NaT where none) and author ('' where none)."""
    parts = []
    for name, (text, date, author) in SOURCES.items():
        cols = [c for c in (text, date, author) if c]
        f = pd.read_csv(shared / name, usecols=cols, dtype=str, keep_default_na=False)
        parts.append(pd.DataFrame({
            "text": f[text].str.replace(r"\s+", " ", regex=True).str.strip(),
            "date": pd.to_datetime(f[date], errors="coerce", utc=True, format="mixed") if date
            else pd.Series(pd.NaT, index=f.index, dtype="datetime64[ns, UTC]"),
            "author": f[author] if author else "", "source": name}))
    pool = pd.concat(parts, ignore_index=True)
    return pool[pool["text"] != ""].reset_index(drop=True)


def _vary(texts: np.ndarray, authors: np.ndarray, kinds: np.ndarray, rng: np.random.Generator) -> list[str]:
    out = []
    picks = rng.integers(0, 1 << 30, len(texts))
    for t, a, k, p in zip(texts, authors, kinds, picks):
        if k == 1:
            out.append(f"RT @{a or 'user' + str(p % 9973)}: {t}")
        elif k == 2:
            out.append(f"{t} {TAGS[p % len(TAGS)]}")
        elif k == 3:
            out.append(f"{t} https://t.co/{p:08x}")
        elif k == 4 and " " in t:  # one word dropped
            w = t.split(" ")
            del w[p % len(w)]
            out.append(" ".join(w))
        elif k == 5 and t.count(" ") >= 2:  # two neighbouring words swapped
            w = t.split(" ")
            i = p % (len(w) - 1)
            w[i], w[i + 1] = w[i + 1], w[i]
            out.append(" ".join(w))
        else:
            out.append(t)
    return out


def make(rows: int, out: Path, dim: int = 384, seed: int = 0, log=print) -> dict:
    """Write texts.parquet, vectors.npy and made.json for ``rows`` texts into ``out`` (skipped when a
    finished set of the same size is there)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    out.mkdir(parents=True, exist_ok=True)
    made = out / "made.json"
    if made.exists() and json.loads(made.read_text()).get("rows") == rows:
        return json.loads(made.read_text())
    t0 = time.time()
    pool = source_pool()
    rng = np.random.default_rng(seed)
    base, topic = clustered(len(pool), dim, clusters=500, seed=seed)  # one vector per source text
    dates = pool["date"].dt.tz_convert(None).to_numpy().astype("datetime64[s]")
    missing = np.isnat(dates)
    lo, hi = np.datetime64("2015-01-01T00:00:00"), np.datetime64("2021-12-31T00:00:00")
    dates[missing] = lo + rng.integers(0, int((hi - lo) / np.timedelta64(1, "s")), int(missing.sum())).astype("timedelta64[s]")
    authors = pool["author"].to_numpy(object)
    texts = pool["text"].to_numpy(object)
    vec_tmp = out / ".vectors.npy.tmp"
    vectors = np.lib.format.open_memmap(vec_tmp, mode="w+", dtype=np.float16, shape=(rows, dim))
    writer = pq.ParquetWriter(out / ".texts.parquet.tmp", pa.schema([("id", pa.string()), ("text", pa.string()),
                                                                     ("date", pa.timestamp("s", tz="UTC")),
                                                                     ("author", pa.string())]))
    for s in range(0, rows, BLOCK):
        m = min(BLOCK, rows - s)
        src = rng.integers(0, len(pool), m)
        kinds = rng.integers(0, 6, m)
        who = np.where(rng.random(m) < 0.7, authors[src], "")
        others = np.char.add("user", rng.integers(0, max(1, rows // 20), m).astype(str)).astype(object)
        who = np.where(who == "", others, who)
        when = dates[src] + rng.integers(-365 * 86400, 365 * 86400, m).astype("timedelta64[s]")
        block = pa.table({"id": pa.array([f"s{i}" for i in range(s, s + m)]),
                          "text": pa.array(_vary(texts[src], who, kinds, rng)),
                          "date": pa.array(when, pa.timestamp("s", tz="UTC")), "author": pa.array(who.tolist())})
        writer.write_table(block)
        v = base[src] + (0.3 / np.sqrt(dim)) * rng.standard_normal((m, dim), dtype=np.float32)  # about 0.95 cosine to the source
        v /= np.linalg.norm(v, axis=1, keepdims=True)
        vectors[s:s + m] = v.astype(np.float16)
        log(f"{s + m:,} / {rows:,} texts ({time.time() - t0:.0f} s)")
    writer.close()
    vectors.flush()
    del vectors
    vec_tmp.replace(out / "vectors.npy")
    (out / ".texts.parquet.tmp").replace(out / "texts.parquet")
    info = {"rows": rows, "dim": dim, "seed": seed, "texts": "derived from " + ", ".join(SOURCES) + " (../shared/data) "
            "with variation: retweet prefix, hashtag, link, dropped word, swapped words, or as is",
            "vectors": "synthetic: a clustered unit vector per source text (500 topics), variants perturbed; "
                       "float16", "source_texts": len(pool), "seconds": round(time.time() - t0, 1),
            "made_at": datetime.now(timezone.utc).isoformat(timespec="seconds"), "tool_version": __version__}
    save_json(made, info)
    return info


def make_ui_corpus(name: str, dim: int, source: Path) -> None:
    frame, report = validate(read_table(source), str(source), options=Options(dedupe="first"))
    x, _ = clustered(len(frame), dim, clusters=500)
    folder = paths.corpus_dir(name)
    save_parquet(folder / "corpus.parquet", frame)
    save_npy(folder / "embeddings.npy", x)
    save_json(folder / "manifest.json", {
        "name": name, "source": {"path": str(source), "sha256": sha256_file(source)},
        "models": [{"name": "synthetic clustered unit vectors (benchmark only)", "dim": dim}],
        "dim": dim, "rows": len(frame), "validation": report.record(),
        "created_at": datetime.now(timezone.utc).isoformat(timespec="seconds"), "tool_version": __version__})
    print(f"{name}: {len(frame):,} rows in {folder}")


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rows", type=int, help="write an import's input of this many texts (and their vectors)")
    p.add_argument("--out", type=Path, help="folder for --rows (default data/.scale-input/rows-N)")
    p.add_argument("--name", default="scale", help="without --rows: the UI corpus's name")
    p.add_argument("--dim", type=int, default=384)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--source", type=Path, default=SCALE, help="without --rows: a CSV of ../shared/data")
    a = p.parse_args(argv)
    if a.rows is None:
        make_ui_corpus(a.name, a.dim, a.source)
        return
    if a.rows < 1000:
        p.error("--rows must be at least 1000")
    out = a.out or paths.data_root() / ".scale-input" / f"rows-{a.rows}"
    info = make(a.rows, out, a.dim, a.seed)
    print(json.dumps({"folder": str(out), **info}))


if __name__ == "__main__":
    main()
