"""How many more copies, and how many false merges (a copy group spanning two labels), if leading hashtags were
taken out too? Labelled corpora: crisislex_t26 (events), plus the troll corpus's count only."""
import sys; sys.path.insert(0, "/work/main")
import numpy as np, pandas as pd, pyarrow as pa, pyarrow.compute as pc
import core.copies as cp

def codes_v3(texts, mode):
    old = cp.RETWEET
    cp.RETWEET = old + (r"|^\s*(?:#\w+\s+)+" if mode == "lead" else "")
    try:
        if mode == "all":
            texts = pd.Series(texts).str.replace(r"#\w+", " ", regex=True)
        return cp.codes_of(pd.Series(texts))
    finally:
        cp.RETWEET = old

for name in ("crisislex_t26", "russian_troll_tweets_recent300k", "czech_politicians_tweets_2021", "searchsnippets"):
    f = pd.read_csv(f"../shared/data/{name}.csv", dtype=str, keep_default_na=False)
    lab = f["label"] if "label" in f else None
    for mode in ("v2", "lead", "all"):
        codes = cp.codes_of(f["text"]) if mode == "v2" else codes_v3(f["text"].tolist(), mode)
        sizes = np.bincount(codes)
        copies = int((sizes[sizes > 1] - 1).sum())
        line = f"{name} {mode}: copies of an earlier text {copies} ({100 * copies / len(f):.1f}%)"
        if lab is not None:
            g = pd.DataFrame({"c": codes, "l": lab})
            multi = g.groupby("c")["l"].nunique()
            bad = multi[multi > 1].index
            rows_bad = int(g["c"].isin(bad).sum())
            line += f"; copy groups spanning 2+ labels {len(bad)} ({rows_bad} rows)"
        print(line, flush=True)
