"""The Czech topic benchmark's data: topics defined by words that are then removed from every text
(``python -m bench.czech_topics`` explains and writes it)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import regex


# topic: (defining words, removed from every text; the annotator's first query, kept)
TOPICS = {
    "vaccination": (r"očkov\w*|naočkov\w*|přeočkov\w*|vakcín\w*|vakcin\w*", "covid"),
    "afghanistan": (r"afghánist\w*|afghan\w*|afgháns\w*|taliban\w*|tálib\w*", "evakuace"),
    "budget": (r"rozpočt\w*|rozpočet|schodk\w*|schodek", "deficit"),
    "masks": (r"respirátor\w*|rouš\w*|roušk\w*", "nošení"),
    "migration": (r"migra\w*|migrant\w*|uprchl\w*", "hranice"),
    "pandora": (r"pandor\w*", "offshore"),
    "olympics": (r"olympi\w*|tokyo2020|tokio", "medaile"),
    "tornado": (r"tornád\w*|tornad\w*", "hodonín"),
}


def build(source: Path, min_size: int = 30) -> tuple[pd.DataFrame, dict]:
    f = pd.read_csv(source, dtype=str, keep_default_na=False)
    patterns = {t: regex.compile(rf"(?i)#?\b(?:{words})\b") for t, (words, _) in TOPICS.items()}
    hits = pd.DataFrame({t: f["text"].map(lambda s, p=p: bool(p.search(s))) for t, p in patterns.items()})
    n_topics = hits.sum(axis=1)
    keep = n_topics <= 1
    sizes = hits[keep].sum()
    used = [t for t in TOPICS if sizes[t] >= min_size]
    label = hits[used].idxmax(axis=1).where(hits[used].any(axis=1), "")
    text = f["text"]
    for t in TOPICS:  # every defining word goes, also of the topics too small to keep
        text = text.map(lambda s, p=patterns[t]: regex.sub(r"\s{2,}", " ", p.sub("", s)).strip())
    out = pd.DataFrame({"id": f["id"], "text": text, "date": f["date"], "author": f["author"],
                        "label": label, "label_name": label.map(lambda t: TOPICS[t][1] if t else "")})
    out = out[keep & (out["text"].str.strip() != "")]
    info = {"rows": len(out), "dropped_two_topics": int((n_topics > 1).sum()),
            "topics": {t: int((out["label"] == t).sum()) for t in used},
            "left_out": {t: int(sizes[t]) for t in TOPICS if t not in used}}
    return out, info
