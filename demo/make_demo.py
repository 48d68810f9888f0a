"""Build the demo corpus shipped with the app: 2,400 English crisis-event tweets with dates.

    python -m demo.make_demo [--source ../shared/data/crisislex_t26.csv]

From CrisisLex T26 (Olteanu, Vieweg & Castillo, CSCW 2015; MIT licence): 16 events in
English-speaking places, 150 tweets each, those labelled related to the crisis first, a fixed
seed. Written as a gzipped CSV (id, text, date, event) beside this file.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

HERE = Path(__file__).resolve().parent
OUT = HERE / "crisislex_demo.csv.gz"
EVENTS = ["2012_Colorado_wildfires", "2013_Queensland_floods", "2013_Australia_bushfire",
          "2013_Glasgow_helicopter_crash", "2013_Typhoon_Yolanda", "2013_LA_airport_shootings",
          "2012_Philipinnes_floods", "2012_Typhoon_Pablo", "2013_Alberta_floods", "2013_Boston_bombings",
          "2013_Colorado_floods", "2013_Manila_floods", "2013_NY_train_crash", "2013_Singapore_haze",
          "2013_West_Texas_explosion", "2013_Russia_meteor"]
PER_EVENT = 150


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--source", type=Path, default=HERE.parents[1] / "shared" / "data" / "crisislex_t26.csv")
    a = p.parse_args(argv)
    f = pd.read_csv(a.source, dtype=str, keep_default_na=False).drop_duplicates("id")
    f = f[f["label"].isin(EVENTS)]
    f = f.assign(related=(f["informativeness"] != "Not related").astype(int))
    picked = (f.sample(frac=1.0, random_state=0).sort_values("related", ascending=False, kind="stable")
              .groupby("label", group_keys=False).head(PER_EVENT))
    out = picked.rename(columns={"label": "event"})[["id", "text", "date", "event"]].sort_values("date")
    out.to_csv(OUT, index=False, compression={"method": "gzip", "mtime": 0})
    print(f"{len(out):,} tweets, {out['event'].nunique()} events -> {OUT} ({OUT.stat().st_size / 1e3:.0f} kB)")


if __name__ == "__main__":
    main()
