"""Build the demo corpus shipped with the app: 2,400 English crisis-event tweets with dates, and their vectors.

    python -m demo.make_demo [--source ../shared/data/crisislex_t26.csv] [--vectors-only]

From CrisisLex T26 (Olteanu, Vieweg & Castillo, CSCW 2015; MIT licence): 16 events in
English-speaking places, 150 tweets each, those labelled related to the crisis first, a fixed
seed. Written as a gzipped CSV (id, text, date, event) beside this file, then embedded by the import itself with
the packaged model (all-MiniLM-L6-v2) and the vectors written beside it in the file's row order, as float16
(``crisislex_demo.vectors.npy``, 1.8 MB): the app's demo import brings them (core/brought.py) instead of embedding
2,400 texts on a new user's machine. ``--vectors-only`` makes the vectors again for the CSV as it is.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

HERE = Path(__file__).resolve().parent
OUT = HERE / "crisislex_demo.csv.gz"
VECTORS = HERE / "crisislex_demo.vectors.npy"  # core.paths.DEMO_VECTORS
VECTORS_MODEL = "default"  # the packaged all-MiniLM-L6-v2, as a demo import without them would embed
EVENTS = ["2012_Colorado_wildfires", "2013_Queensland_floods", "2013_Australia_bushfire",
          "2013_Glasgow_helicopter_crash", "2013_Typhoon_Yolanda", "2013_LA_airport_shootings",
          "2012_Philipinnes_floods", "2012_Typhoon_Pablo", "2013_Alberta_floods", "2013_Boston_bombings",
          "2013_Colorado_floods", "2013_Manila_floods", "2013_NY_train_crash", "2013_Singapore_haze",
          "2013_West_Texas_explosion", "2013_Russia_meteor"]
PER_EVENT = 150


def write_vectors() -> None:
    """The demo's vectors, by the import itself (the same model, batches and texts as an import that embeds)."""
    import tempfile

    import numpy as np

    from core.corpus import ImportSpec, import_corpus, load_corpus

    with tempfile.TemporaryDirectory(prefix="demo-vectors-") as tmp:
        import_corpus(ImportSpec(input=OUT, name="demo", models=[VECTORS_MODEL], indexes="off"), root=Path(tmp))
        corpus = load_corpus("demo", Path(tmp))
        order = pd.Series(range(len(corpus.frame)), index=corpus.frame["id"].astype(str))
        ids = pd.read_csv(OUT, dtype=str, keep_default_na=False)["id"]
        vectors = np.asarray(corpus.embeddings, dtype=np.float32)[order.loc[ids].to_numpy()]
    part = VECTORS.with_suffix(".part.npy")
    np.save(part, vectors.astype(np.float16))
    part.replace(VECTORS)
    print(f"{len(vectors):,} vectors of {vectors.shape[1]} -> {VECTORS} ({VECTORS.stat().st_size / 1e6:.1f} MB)")


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--source", type=Path, default=HERE.parents[1] / "shared" / "data" / "crisislex_t26.csv")
    p.add_argument("--vectors-only", action="store_true", help="embed the CSV as it is, without making it again")
    a = p.parse_args(argv)
    if a.vectors_only:
        write_vectors()
        return
    f = pd.read_csv(a.source, dtype=str, keep_default_na=False).drop_duplicates("id")
    f = f[f["label"].isin(EVENTS)]
    f = f.assign(related=(f["informativeness"] != "Not related").astype(int))
    picked = (f.sample(frac=1.0, random_state=0).sort_values("related", ascending=False, kind="stable")
              .groupby("label", group_keys=False).head(PER_EVENT))
    out = picked.rename(columns={"label": "event"})[["id", "text", "date", "event"]].sort_values("date")
    out.to_csv(OUT, index=False, compression={"method": "gzip", "mtime": 0})
    print(f"{len(out):,} tweets, {out['event'].nunique()} events -> {OUT} ({OUT.stat().st_size / 1e3:.0f} kB)")
    write_vectors()


if __name__ == "__main__":
    main()
