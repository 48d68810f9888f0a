"""DAC (key "dac"; no button on Annotate, see core/search/__init__.py): set-anchored filtering with a trained Deep Amortized Clustering model.

The included texts are the anchors (at most ``max_anchors``, sampled), the excluded ones nearest to
them go into the bag as known non-members; the rest of the bag (``bag`` rows in all) are the
unlabelled texts nearest to the included ones (half by cosine to their mean, half from each included
text's own neighbours). The model gives each of those a probability of belonging with the anchors;
the best ``k`` are returned. Rows outside the bag are not ranked: asking again, after labelling,
draws a new bag. Needs a model trained for the corpus (``python -m precompute.dac train``, or
the DAC page). Measured in bench/dac.py (bench/RESULTS.md).
"""

from __future__ import annotations

import numpy as np

from core.search.base import Method, NotApplicable, Ranked, SearchContext, as_rows


def _requires(ctx: SearchContext) -> str | None:
    if ctx.dac is None:
        return ("DAC needs a model trained for this corpus: pick (or train) one on the DAC page, "
                "or train one with python -m precompute.dac train")
    if ctx.index.precision == "fp16-mapped":
        return (f"DAC reads every vector into memory, and this corpus ({ctx.index.n:,} rows) keeps its vectors as "
                "fp16 on disk: DAC is not available at this size (the other methods are)")
    if ctx.dac.config.dim != ctx.vectors.shape[1]:
        return (f"DAC's model takes {ctx.dac.config.dim}-d vectors but this corpus's embeddings are "
                f"{ctx.vectors.shape[1]}-d: train a model for them")
    return None


def search(ctx: SearchContext, included: np.ndarray, excluded: np.ndarray, k: int | None = 10, *,
           bag: int = 800, max_anchors: int = 64, max_known: int = 64) -> Ranked:
    from core.cluster.dac.infer import members

    inc, exc = as_rows(included), as_rows(excluded)
    METHOD.check(inc, exc, ctx)
    if bag < 2:
        raise NotApplicable(f"DAC's bag must hold at least 2 texts, got {bag}")
    rows, p = members(ctx.dac.model, ctx.vectors, inc, bag=int(bag), non_members=exc,
                      max_anchors=int(max_anchors), max_known=int(max_known), seed=ctx.seed + len(inc) + len(exc))
    k = len(rows) if k is None else min(int(k), len(rows))
    cut = ctx.dac.cut  # the model's calibrated cut (0.5 for a model without one)
    return Ranked(rows[:k], p[:k], "dac", {"bag": int(len(rows)), "members": int((p > cut).sum()), "cut": cut})


METHOD = Method("dac", "DAC", "Deep Amortized Clustering: a Set Transformer trained for this corpus reads the "
                "included texts (and the excluded ones) with their neighbours and predicts which others belong. "
                "Measured below Suggest: in the simulated annotator on StackOverflow it found 0.818 of a topic "
                "at 1x the topic's size where Suggest found 0.897 (bench/RESULTS.md), so Suggest stays the "
                "first choice; DAC offers a second opinion from a model.",
                1, 0, search, requires=_requires,
                limits={"bag": (2, 100_000), "max_anchors": (1, 100_000), "max_known": (0, 100_000)})
