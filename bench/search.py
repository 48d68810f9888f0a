"""Median latency of each search method (200 included, 100 excluded) and a numpy baseline.

    python -m bench.search [--n 203057] [--dim 512] [--texts PATH] [--repeat 9]

Synthetic clustered unit vectors of the given size; with --texts, keyword search over the
texts of a real CSV (the 300k scale corpus by default when present). One JSON object per line.
"""

from __future__ import annotations

import sys
import argparse
import time

import numpy as np

from testbed.common import SCALE, clustered, emit, median_ms, run_folder
from core.search import REGISTRY, SearchContext
from core.embed import pick_device
from core.search.index import VectorIndex


def round_by_round(calls: dict, repeat: int) -> dict[str, float]:
    """Each call timed once a round, the rounds one after another so that every call sees the same machine: the
    median milliseconds of each."""
    runs: dict[str, list[float]] = {op: [] for op in calls}
    for _ in range(repeat):
        for op, call in calls.items():
            t = time.perf_counter()
            call()
            runs[op].append((time.perf_counter() - t) * 1000)
    return {op: round(float(np.median(ms)), 2) for op, ms in runs.items()}


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--n", type=int, default=203_057)
    p.add_argument("--dim", type=int, default=512)
    p.add_argument("--repeat", type=int, default=9)
    p.add_argument("--device", default="auto")
    p.add_argument("--texts", default=str(SCALE), help="CSV with a text column for keyword search ('' to skip)")
    a = p.parse_args(argv)
    run_folder("search", sys.argv if argv is None else ["bench/search.py", *argv])
    device = pick_device(a.device)
    x, labels = clustered(a.n, a.dim)
    rng = np.random.default_rng(1)
    target = np.flatnonzero(labels == labels[0])
    inc = rng.choice(target, min(200, len(target)), replace=False)
    exc = rng.choice(np.flatnonzero(labels != labels[0]), 100, replace=False)
    labelled = np.r_[inc, exc]
    ctx = SearchContext(VectorIndex(x, device=device), device=device)
    xv = ctx.vectors

    def numpy_baseline():
        s = xv @ xv[inc].mean(0)
        s[labelled] = -np.inf
        top = np.argpartition(-s, 10)[:10]
        return top[np.argsort(-s[top])]

    emit(op="numpy_X@q_top10", median_ms=round(median_ms(numpy_baseline, a.repeat), 2), n=a.n, dim=a.dim, device="cpu")
    for name in ("cos", "lda", "nn1", "nn2", "suggest"):
        m = REGISTRY[name]
        ms = median_ms(lambda: m.search(ctx, inc, exc, 10), a.repeat)
        extra = {"chosen": m.search(ctx, inc, exc, 10).info["chosen"]} if name == "suggest" else {}
        emit(op=name, median_ms=round(ms, 2), n=a.n, dim=a.dim, device=device, **extra)

    if a.texts:
        import pandas as pd

        from core.search.keyword import KeywordIndex

        texts = pd.read_csv(a.texts, usecols=["text"], dtype=str, keep_default_na=False)["text"].tolist()
        n = len(texts)
        kx, _ = clustered(n, 64, seed=2)
        t = time.perf_counter()
        kctx = SearchContext(VectorIndex(kx), KeywordIndex(texts))  # folds the texts once per corpus
        emit(op="keyword_index_build", seconds=round(time.perf_counter() - t, 2), n=n)
        none = np.zeros(0, np.int64)
        for query, is_regex in (("trump", False), ("hillary|clinton", True), (r"\bfake news\b", True),
                                ("(?=.*trump)(?!.*russia)", True)):  # a word left out: once per text, at its start
            hits = len(REGISTRY["keyword"].search(kctx, none, none, None, query=query, is_regex=is_regex))
            ms = median_ms(lambda: REGISTRY["keyword"].search(kctx, none, none, None, query=query,
                                                              is_regex=is_regex), a.repeat)
            emit(op="keyword", query=query, regex=is_regex, hits=hits, median_ms=round(ms, 2), n=n, device="cpu")

        # Suggest over the same texts: its word matrix is built once per corpus, then each step
        # fits a logistic model over embedding + words (384-d vectors as the default model gives)
        from core.search.lexical import WordIndex

        t = time.perf_counter()
        word_index = WordIndex(texts)
        words = word_index.matrix
        emit(op="auto_word_matrix_build", seconds=round(time.perf_counter() - t, 2), n=n,
             vocabulary=int(words.shape[1]))
        sx, slabels = clustered(n, 384, seed=3)
        sctx = SearchContext(VectorIndex(sx), kctx.keyword_index, word_index=word_index)
        s_inc = rng.choice(np.flatnonzero(slabels == slabels[0]), 200, replace=False)
        s_exc = rng.choice(np.flatnonzero(slabels != slabels[0]), 100, replace=False)
        r = REGISTRY["suggest"].search(sctx, s_inc, s_exc, 10)
        # with its defaults, and without the re-ranking by labelled neighbours (near=0) beside it,
        # alternating round by round so both see the same machine
        suggest = REGISTRY["suggest"].search
        for op, ms in round_by_round({"auto": lambda: suggest(sctx, s_inc, s_exc, 10),
                                      "auto_near_off": lambda: suggest(sctx, s_inc, s_exc, 10, near=0.0)},
                                     a.repeat).items():
            emit(op=op, chosen=r.info["chosen"], median_ms=ms, n=n, dim=384, device="cpu")
        # with conversations, whose labelled texts Suggest counts (core.threads): the scale corpus has none, so 40% of
        # its rows are put at random into threads of about 5; beside the same Suggest without them, round by round
        import dataclasses

        from core.threads import threads_of

        in_thread = rng.random(n) < 0.4
        conv = np.where(in_thread, rng.integers(0, max(1, n // 12), n), n + np.arange(n))
        t = time.perf_counter()
        tctx = dataclasses.replace(sctx, threads=threads_of(pd.DataFrame({"conversation_id": conv})))
        emit(op="threads_build", seconds=round(time.perf_counter() - t, 3), n=n,
             conversations=tctx.threads.count)
        for op, ms in round_by_round({"auto_threads": lambda: suggest(tctx, s_inc, s_exc, 10),
                                      "auto_no_threads": lambda: suggest(sctx, s_inc, s_exc, 10)}, a.repeat).items():
            emit(op=op, median_ms=ms, n=n, dim=384, device="cpu")
        # with the texts' dates, whose days' kept shares Suggest reads (suggest.day_features); beside the
        # same Suggest without dates, round by round
        dates = pd.to_datetime(pd.read_csv(a.texts, usecols=["date"], dtype=str)["date"], errors="coerce",
                               format="mixed", utc=True).dt.tz_localize(None).astype("datetime64[us]")
        dctx = dataclasses.replace(sctx, frame=pd.DataFrame({"date": dates}))
        for op, ms in round_by_round({"auto_days": lambda: suggest(dctx, s_inc, s_exc, 10),
                                      "auto_no_days": lambda: suggest(sctx, s_inc, s_exc, 10)}, a.repeat).items():
            emit(op=op, median_ms=ms, n=n, dim=384, device="cpu", days=int(dates.dt.floor("D").nunique()))


if __name__ == "__main__":
    main()
