"""Suggest (button "Suggest", key "suggest"): the ranker the simulated annotator found best, chosen from the labels so far.

COS while nothing is excluded. Once both sides exist: a class-balanced logistic regression over
the text's embedding *and* its words (tf-idf, a word's forms one column where the corpus's language has a
dictionary; see core/search/lexical.py), fitted on the included
texts against the excluded ones plus a random sample of unlabelled texts taken as background (a
topic is usually a small part of a corpus, so a random text is almost always off-topic; the
background shows the model the whole corpus early on, when few texts are excluded). Without the
corpus's words (a context with no word index) the words are left out and it is LDA against the
same negatives. Then the model's best ``pool`` texts are re-ordered by its score plus ``near`` times
how much nearer each lies to its ``neighbours`` nearest included texts than to its nearest excluded
ones (:func:`near_vote`; both standardised over the pool): a local look where the linear model sees
one direction. Measured in bench/annotator.py (bench/RESULTS.md, "Suggest looks at the labelled
neighbours").

Where the corpus knows its conversations (a ``conversation_id`` column, core/threads.py), the model has two more
features: how many included and how many excluded texts share a text's conversation. A reply that says nothing of its
topic in its own words comes in through the thread it belongs to (bench/RESULTS.md, "Replies come in through their
conversation").

Where the corpus has dates, one more: of the texts labelled on a text's day (a day of the corpus's zone, as its
Timeline bins them), the share included, beside the share included of all labelled texts. A topic that is an event
(the Vrbětice affair, Afghanistan in August, a typhoon's donations) fills its days; a topic that spans many events
loses nothing; dates that say nothing of the topic cost nothing measurable (bench/RESULTS.md, "A day's texts kept").
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from core.search import cos, lda
from core.search.base import Method, Ranked, SearchContext, as_rows, one_thread, rows_without, unique_rows
from core.search.lexical import fit_scores
from core.search.linear import fit_device, rank_by_direction, to_torch

BACKGROUND = 300
NEAR_BLOCK = 16_384  # labelled texts per block in near_vote


def background_sample(n: int, labelled: np.ndarray, size: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    pick = rng.choice(n, min(n, size + len(labelled)), replace=False)
    return rows_without(pick, labelled)[:size]


def top_unlabelled(scores: np.ndarray, labelled: np.ndarray, k: int | None) -> tuple[np.ndarray, np.ndarray]:
    s = np.array(scores, dtype=np.float32)
    s[labelled] = -np.inf
    k = len(s) - len(labelled) if k is None else min(k, len(s) - len(labelled))
    if k <= 0:
        return np.zeros(0, np.int64), np.zeros(0, np.float32)
    top = np.argpartition(-s, k - 1)[:k] if k < len(s) else np.arange(len(s))
    top = top[np.argsort(-s[top], kind="stable")]
    return top.astype(np.int64), s[top]


def _standard(v: np.ndarray) -> np.ndarray:
    v = np.asarray(v, np.float64)
    return (v - v.mean()) / (v.std() + 1e-9)


def _blend(rows: np.ndarray, scores: np.ndarray, other: np.ndarray, weight: float, k: int
           ) -> tuple[np.ndarray, np.ndarray]:
    """``rows`` re-ordered by their standardised ``scores`` plus ``weight`` times the standardised
    ``other`` (both over these rows): the best ``k`` and their combined scores."""
    combined = _standard(scores) + weight * _standard(other)
    order = np.argsort(-combined, kind="stable")[:k]
    return rows[order], combined[order].astype(np.float32)


def dac_rerank(ctx: SearchContext, inc: np.ndarray, exc: np.ndarray, rows: np.ndarray, scores: np.ndarray,
               weight: float, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Suggest's best ``rows`` (with their ``scores``) re-ordered by their score plus ``weight`` times
    the DAC model's logit of belonging with the included texts (both standardised over these rows):
    the rows go into one DAC bag as its unlabelled part, the included texts as anchors, the excluded
    nearest them as known non-members. The best ``k`` of the new order."""
    from core.cluster.dac.infer import members

    cand, p = members(ctx.dac.model, ctx.vectors, inc, non_members=exc, candidates=rows, seed=ctx.seed + len(inc) + len(exc))
    prob = dict(zip(cand.tolist(), p.tolist()))
    pr = np.clip(np.array([prob[r] for r in rows.tolist()]), 1e-6, 1 - 1e-6)
    return _blend(rows, scores, np.log(pr / (1 - pr)), weight, k)


def near_vote(x: np.ndarray, rows: np.ndarray, inc: np.ndarray, exc: np.ndarray, m: int) -> np.ndarray:
    """For each of ``rows``: the mean cosine to its ``m`` nearest included texts minus the mean cosine to
    its ``m`` nearest excluded ones (how much closer it lies to what you kept than to what you threw
    out, locally, where a linear model sees one direction)."""
    from core.embed import l2_normalise

    q = l2_normalise(np.asarray(x[rows], np.float32))

    def nearest(lab: np.ndarray) -> np.ndarray:
        best = np.zeros((len(q), 0), np.float32)
        # a block of labelled texts at a time: 100,000 labels never make a (pool x labels) matrix at once
        for s in range(0, len(lab), NEAR_BLOCK):
            sims = np.concatenate([best, q @ l2_normalise(np.asarray(x[lab[s:s + NEAR_BLOCK]], np.float32)).T], 1)
            j = min(m, sims.shape[1])
            best = np.partition(sims, sims.shape[1] - j, axis=1)[:, -j:]
        return best.mean(1)

    return nearest(inc) - nearest(exc)


def thread_features(threads, n: int, inc: np.ndarray, exc: np.ndarray, weight: float):
    """Two features of every text for Suggest's model (a sparse n x 2 matrix): how many included texts, and how
    many excluded ones, share its conversation (itself not counted), as log(1 + count) times ``weight``. Only the
    texts of conversations that hold a labelled text have one. None where the corpus knows no conversations
    (core.threads)."""
    if threads is None:
        return None
    parts = [threads.around(side) for side in (inc, exc)]
    rows = np.concatenate([p[0] for p in parts])
    cols = np.repeat([0, 1], [len(p[0]) for p in parts])
    values = weight * np.log1p(np.concatenate([p[1] for p in parts]).astype(np.float32))
    return sp.csr_matrix((values, (rows, cols)), shape=(n, 2), dtype=np.float32)


DAY_PRIOR = 5.0  # labelled texts' worth of the share kept overall that a day's own share starts from


class DayKept:
    """Suggest's day feature (:func:`day_features`) kept as one value per day, so that every row's score costs a
    gather (10M rows: ~50 ms), not a column of 10M values: ``block[rows]`` gives the rows' values (a labelled text's
    own label not counted on its day), ``block @ w`` every row's weighted sum."""

    def __init__(self, days: np.ndarray, counts: np.ndarray, kept: float, weight: float,
                 sides: tuple[np.ndarray, np.ndarray]):
        self.days, self.counts, self.kept, self.sides = days, counts, kept, sides
        values = self.unscaled(counts[:, 0], counts[:, 1])
        top = float(np.abs(values).max(initial=0))
        self.scale = weight / top if top > 0 else 0.0
        # one value per day, and a last one of 0 for day -1 (no date)
        self.table = np.append(values * self.scale, 0).astype(np.float32)
        self.shape = (len(days), 1)

    def unscaled(self, included, excluded):
        """A day's share kept, starting from the share kept overall, less that share."""
        return (included + DAY_PRIOR * self.kept) / (included + excluded + DAY_PRIOR) - self.kept

    def __getitem__(self, rows) -> sp.csr_matrix:
        rows = np.asarray(rows, dtype=np.int64)
        days = self.days[rows]
        counts = self.counts[days] - np.stack([np.isin(rows, side) for side in self.sides], axis=1)
        values = np.where(days >= 0, self.scale * self.unscaled(counts[:, 0], counts[:, 1]), 0)
        return sp.csr_matrix(values.astype(np.float32)[:, None])

    def __matmul__(self, w: np.ndarray) -> np.ndarray:
        return (self.table * np.float32(np.asarray(w).ravel()[0]))[self.days]


def day_features(days: np.ndarray | None, n_days: int, inc: np.ndarray, exc: np.ndarray,
                 weight: float) -> DayKept | None:
    """One feature of every text for Suggest's model: of the texts you labelled on its day (``days``:
    SearchContext.days and .n_days), the share you included, less the share you included of all
    you labelled; a day's share starts from that overall share as if ``DAY_PRIOR`` texts had been labelled there, so
    a day of one label says little. Over the largest such value of any day, times ``weight``. A text without a date,
    or of a day with no labelled text, has 0. None where the corpus has no dates, or no day differs.

    How much of a day you kept, not how much of a day's texts you labelled: the latter also rises wherever your
    searches have looked, and cost a topic that spans many events (crisis tweets' kinds of message) where this costs
    nothing (bench/RESULTS.md, "A day's texts kept")."""
    if days is None:
        return None
    sides = tuple(side[days[side] >= 0] for side in (inc, exc))
    counts = np.stack([np.bincount(days[side], minlength=n_days) for side in sides], axis=1).astype(np.float32)
    labelled = float(counts.sum())
    if labelled == 0:
        return None
    block = DayKept(days, counts, float(counts[:, 0].sum()) / labelled, weight, sides)
    return block if block.scale > 0 else None


def search(ctx: SearchContext, included: np.ndarray, excluded: np.ndarray, k: int | None = 10,
           *, background: int = BACKGROUND, words: bool = True, alpha: float = 0.5, c: float = 1.0,
           dac: float = 0.0, rerank: int = 200, near: float = 1.0, pool: int = 300,
           neighbours: int = 10, thread: float = 1.0, day: float = 0.25) -> Ranked:
    """``alpha`` weighs the embedding against the words, ``c`` is the inverse regularisation of the
    logistic model, ``background`` the number of sampled unlabelled texts taken as negatives.
    ``near`` > 0 (and ``k`` given): the best ``pool`` texts are re-ordered by :func:`near_vote` over the
    ``neighbours`` nearest labelled texts of each side, with that weight (0: the linear model's order).
    ``dac`` > 0 (with a DAC model in the context): Suggest's best ``rerank`` texts are re-ordered by
    :func:`dac_rerank` with that weight (measured in bench/RESULTS.md, issue 31: off by default). ``thread`` > 0
    (with the corpus's conversations in the context): :func:`thread_features` with that weight join the model's
    (0: a text's conversation is not looked at); ``day`` > 0 (with the corpus's dates): :func:`day_features`."""
    inc, exc = as_rows(included), as_rows(excluded)
    METHOD.check(inc, exc)
    if len(exc) < lda.METHOD.min_excluded:
        r = cos.search(ctx, inc, exc, k)
        return Ranked(r.rows, r.scores, "suggest", {"chosen": "cos"})
    labelled = unique_rows(inc, exc)
    # seeded by the number of labels: the same state gives the same suggestion
    neg = unique_rows(exc, background_sample(ctx.index.n, labelled, int(background), ctx.seed + len(labelled)))
    info = {"background": int(len(neg) - len(exc))}
    x = ctx.vectors
    rerank_with_dac = dac > 0 and ctx.dac is not None and k is not None
    # a side with fewer labelled texts than `neighbours` gives a vote of noise (small topics' first steps)
    rerank_near = near > 0 and k is not None and min(len(inc), len(exc)) >= int(neighbours)
    want = max(int(k), int(rerank)) if rerank_with_dac else k  # what goes on (to DAC's re-rank, or out)
    head = max(int(want), int(pool)) if rerank_near else want
    if words and ctx.word_index is not None:
        weights = {"thread": float(thread), "day": float(day)}
        made = {"thread": lambda w: thread_features(ctx.threads, ctx.index.n, inc, exc, w),
                "day": lambda w: day_features(ctx.days, ctx.n_days, inc, exc, w)}
        looked = {name: m for name, w in weights.items() if w > 0 and (m := made[name](w)) is not None}
        scores = fit_scores(x, ctx.word_index.matrix, inc, neg, alpha=float(alpha), c=float(c), scan=ctx.index.scores,
                            extra=list(looked.values()))
        info.update({name: weights[name] for name in looked})
        rows, top = top_unlabelled(scores, labelled, head)
        info["chosen"] = "words+embedding"
    else:
        with one_thread():
            dev = fit_device(ctx, len(inc) + len(neg))
            w = lda.fisher_direction(to_torch(np.asarray(x[inc]), dev), to_torch(np.asarray(x[neg]), dev))
            w = (w / w.norm()).cpu().numpy()
        r = rank_by_direction(ctx, w, inc, exc, head, "suggest")
        rows, top = r.rows, r.scores
        info["chosen"] = "lda"
    if rerank_near and len(rows):
        with one_thread():
            vote = near_vote(x, rows, inc, exc, int(neighbours))
        rows, top = _blend(rows, top, vote, float(near), want)
        info.update(near=float(near))
    if rerank_with_dac and len(rows):
        rows, top = dac_rerank(ctx, inc, exc, rows, top, float(dac), int(k))
        info.update(chosen=info["chosen"] + ", DAC re-rank", dac=float(dac))
    return Ranked(rows, top, "suggest", info)


METHOD = Method("suggest", "Suggest", "Learns from your labels: COS until you exclude something, then a model of "
                "your included texts against your excluded ones and a sample of the corpus, over the texts' meaning "
                "and words (a word's forms count as one; a quote is read with what it quotes, a reply with its "
                "thread, a day by how much of it you included). The texts nearest your included, farthest from your "
                "excluded come first. No DAC button: in simulated annotation DAC found less, below Suggest (the DAC "
                "page).",
                1, 0, search, limits={"background": (0, 1_000_000), "alpha": (0.0, 1e6), "c": (1e-9, 1e9),
                        "dac": (0.0, 1e6), "rerank": (1, 100_000),
                        "near": (0.0, 1e6), "pool": (1, 100_000), "neighbours": (1, 1000),
                        "thread": (0.0, 1e6), "day": (0.0, 1e6)})
