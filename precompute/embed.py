"""Import a corpus: validate, embed with one or more models, PCA, write atomically (resumable).

    python -m precompute.embed tweets.csv --name tweets [--model M ...] [--dim 512]
"""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

from tqdm import tqdm

from core.corpus import ImportSpec, import_corpus
from core.ingest import Columns, Options
from precompute._cli import add_engine_args, engine_args, run_main, whole

log = logging.getLogger(__name__)


def parse(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m precompute.embed", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("input", type=Path, help="CSV, TSV, Parquet or JSONL file, or a workbook (.xlsx, .xls, .ods)")
    p.add_argument("--name", required=True, help="corpus name (folder under the data root)")
    p.add_argument("--model", action="append", dest="models",
                   help="'default' (packaged all-MiniLM-L6-v2, English), 'multilingual-e5-small' (packaged, "
                        "Czech and ~100 languages, slower), 'auto' (by the corpus's language: the default), "
                        "or any sentence-transformers name or local path; repeat for an ensemble")
    p.add_argument("--dim", type=int, default=512, help="PCA target when the models' concatenation is wider")
    p.add_argument("--batch-size", type=whole(1), default=32, help="32 was fastest on 2 CPU cores (bench.embed)")
    p.add_argument("--chunk-size", type=whole(1), default=2048, help="rows per checkpoint")
    p.add_argument("--device", choices=["auto", "cpu", "cuda"], default="auto")
    p.add_argument("--id-column", default="id", help="'' for row numbers")
    p.add_argument("--text-column", default="text")
    p.add_argument("--sheet", help="a workbook's sheet, by its name (default: the first with a column of texts)")
    p.add_argument("--date-column", default="date", help="'' for none")
    p.add_argument("--author-column", default="author", help="'' for none")
    p.add_argument("--dedupe", choices=["error", "first"], default="error",
                   help="duplicate ids: stop with the list (default) or keep the first of each")
    p.add_argument("--keep-empty", action="store_true",
                   help="keep empty/whitespace-only texts (default: drop them, counted in the manifest)")
    p.add_argument("--bad-dates", choices=["error", "drop", "null"], default="error")
    p.add_argument("--timezone", default="UTC",
                   help="the corpus's time zone (IANA name, e.g. Europe/Prague): dates written without an offset "
                        "are its wall times, and the pages show and bin dates in it (default UTC)")
    p.add_argument("--overwrite", action="store_true",
                   help="replace an existing corpus of that name (its groups, saved or being built, are kept: by "
                        "their texts' ids)")
    p.add_argument("--seed", type=whole(0), default=0, help="seed of the PCA")
    p.add_argument("--vectors", type=Path, help="vectors computed elsewhere instead of embedding here: a .npy "
                   "matrix (one row per data row of the input, in order) or Parquet with 'id' and a vector column")
    p.add_argument("--vectors-model", help="the model that computed --vectors (recorded in the manifest)")
    p.add_argument("--vectors-column", default="embedding", help="the vector column of a Parquet --vectors file")
    p.add_argument("--precision", choices=["auto", "fp32", "fp16"], default="auto",
                   help="how the vectors are kept: fp32 in embeddings.npy, or fp16 in a memory-mapped store "
                        "(half the disk and memory; 'auto': fp16 from 1,000,000 rows)")
    add_engine_args(p)
    p.add_argument("--quotes-set", action="store_true",
                   help="also make the embedding set 'quotes' (each quote read with the tweet it quotes by the "
                        "semantic searches; python -m precompute.quotes makes it later): embeds the quoted tweets too")
    p.add_argument("--indexes", choices=["auto", "on", "off"], default="auto",
                   help="build the keyword index (word postings and folded texts) and Suggest's word matrix now; 'auto': "
                        "from 1,000,000 rows (smaller corpora search in memory and build words on first use)")
    a = p.parse_args(argv)
    if any(not m.strip() for m in a.models or []):  # embedded with the default, recorded as '' in the manifest
        p.error("--model: name a model (auto, default, multilingual-e5-small, or a sentence-transformers name or path)")
    if a.vectors is None and (a.vectors_model or a.vectors_column != "embedding"):  # was silently ignored
        p.error("--vectors-model and --vectors-column describe the file given with --vectors, and there is none")
    return a


def main(argv: list[str] | None = None) -> int:
    a = parse(argv)
    spec = ImportSpec(
        input=a.input, name=a.name, models=a.models or ["auto"], dim=a.dim,
        batch_size=a.batch_size, device=a.device, chunk_size=a.chunk_size, overwrite=a.overwrite,
        seed=a.seed, sheet=a.sheet,
        columns=Columns(id=a.id_column or None, text=a.text_column, date=a.date_column or None,
                        author=a.author_column or None),
        options=Options(dedupe=a.dedupe, keep_empty=a.keep_empty, bad_dates=a.bad_dates, timezone=a.timezone),
        vectors=a.vectors, vectors_model=a.vectors_model, vectors_column=a.vectors_column, precision=a.precision,
        indexes=a.indexes, **engine_args(a),
        quotes_set=a.quotes_set,
    )
    bars: dict[int | str, tqdm] = {}

    def progress(done: int, total: int, info: dict) -> None:
        if not total:  # a step that cannot be counted: its name
            log.info("%s…", info.get("stage", "working"))
            return
        i = info["stage"] if "unit" in info else info.get("model_index", 0)  # a counted step's bar is its own
        bar = bars.get(i)
        if bar is None:
            desc = info["stage"] if "unit" in info else f"embed [{i + 1}/{info.get('models', 1)}] {info.get('model')}"
            bar = bars[i] = tqdm(total=total, desc=desc, unit=info.get("unit", "text"), file=sys.stderr,
                                 initial=done)
            if info.get("resumed_from"):
                log.info("resumed: %d of %d rows were already embedded", info["resumed_from"], total)
        bar.update(done - bar.n)  # tqdm shows texts/s and the time left
        if done >= total:
            bar.close()

    corpus = import_corpus(spec, progress=progress)  # warnings are logged
    for note in corpus.manifest.get("validation", {}).get("notes", []):  # what the checks dropped or read so
        log.info("%s", note)
    log.info("corpus %r: %d rows, dimension %d, in %s", corpus.name, corpus.n, corpus.dim, corpus.folder)
    return 0


if __name__ == "__main__":
    sys.exit(run_main(main))
