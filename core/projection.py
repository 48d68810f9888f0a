"""Linear discriminant projections of a whole corpus to 2-D, in closed form in torch, for its scatter: of a
group (included, excluded, a sample of unlabelled: :func:`lda_directions`), or of the corpus's own topics
before any group (:func:`topic_directions`).

torch is imported by the discriminant alone: the import's sketch (core/sketch.py) projects with numpy
through :func:`project`, so an import that embeds elsewhere (a Ray job) never loads torch in its driver
(1.4 s of its 2 cores; bench/RESULTS.md, issue 30)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core import vectorstore
from core.paths import ROWS_PER_BLOCK
from core.rows import rows_without


def lda_directions(x: np.ndarray, included: np.ndarray, excluded: np.ndarray, n_unlabelled: int = 2000,
                   seed: int = 0, device: str = "cpu") -> np.ndarray:
    """(D, 2) projection maximising between-class over within-class scatter of the three classes.

    With no excluded text yet (keyword hits come in included) the classes are two, the included and
    the sample of the rest, and their discriminant is one direction: the second axis is then the
    direction along which the fitted texts vary most, apart from it (their top principal direction
    orthogonal to the first)."""
    import torch

    included, excluded = np.asarray(included, np.int64), np.asarray(excluded, np.int64)
    if len(included) < 1:
        raise ValueError(f"the scatter needs at least 1 included text, got {len(included)} included "
                         f"and {len(excluded)} excluded")
    rng = np.random.default_rng(seed)
    free = np.ones(len(x), dtype=bool)  # the same rows as setdiff1d, without its sort (3.2 s at 3M rows)
    free[np.r_[included, excluded]] = False
    rest = np.flatnonzero(free)
    sample = rng.choice(rest, min(n_unlabelled, len(rest)), replace=False) if len(rest) else rest
    groups = [g for g in (included, excluded, np.sort(sample)) if len(g)]
    xs = [torch.from_numpy(vectorstore.take(x, g)).to(device) for g in groups]  # a cold store's reads at once
    w_all, mean = _discriminants(xs)
    if len(xs) > 2:
        w = w_all[:, :2]
    else:  # one discriminant: the second axis is the texts' own largest spread orthogonal to it
        first = w_all[:, 0]
        first = first / first.norm() * torch.sign((xs[0].mean(0) - mean) @ first + 1e-12)  # included: right
        # (the plain covariance of the fitted rows: the shrunk one is near a multiple of the identity
        # where a class has few texts, and its top direction could lie outside the texts altogether)
        centred = torch.cat(xs) - mean
        centred = centred - torch.outer(centred @ first, first)
        spread = torch.linalg.eigh(centred.T @ centred).eigenvectors[:, -1]
        w = torch.stack([first, spread], dim=1)
    w = w / w.norm(dim=0, keepdim=True)
    return w.cpu().numpy().astype(np.float32)


def _discriminants(xs: list):
    """(directions (D, D), largest between- over within-class ratio first; the classes' mean) for the classes
    ``xs`` (torch tensors of rows): the generalised eigenproblem Sb w = l Sw w through the Cholesky factor of Sw."""
    import torch

    from core.search.lda import within_scatter

    n = sum(len(g) for g in xs)
    mean = torch.cat(xs).mean(0)
    sw = within_scatter(xs)
    sb = sum(len(g) * torch.outer(g.mean(0) - mean, g.mean(0) - mean) for g in xs) / n
    inv = torch.linalg.inv(torch.linalg.cholesky(sw))
    evecs = torch.linalg.eigh(inv @ sb @ inv.T).eigenvectors
    return inv.T @ evecs.flip(1), mean


TOPICS = 20  # pseudo-classes of the corpus map (bench/RESULTS.md, "The Scatter page before any group")
MAP_FROM = 6  # texts a map of the corpus's topics needs (K-Means into at least 3 topics, two texts each)
TOPIC_SAMPLE = 20_000  # rows they are found on: the map's fit costs the same at 10M texts as at 20k


@dataclass
class TopicMap:
    """The corpus map's axes and what drew them: the topics K-Means found among a sample of the corpus."""

    directions: np.ndarray  # (D, 2) float32
    centres: np.ndarray  # (k, 2): each topic's centre on the map
    rows: np.ndarray  # the sample's rows, sorted
    labels: np.ndarray  # each sample row's topic


def topic_map(x: np.ndarray, k: int = TOPICS, sample: int = TOPIC_SAMPLE, seed: int = 0,
              device: str = "cpu") -> TopicMap:
    """A map of the whole corpus before any group: K-Means finds ``k`` topics among ``sample`` rows, and the two
    directions that set those topics apart best (a linear discriminant of the topics) are its axes. On the labelled
    benchmarks they show the classes apart better than the texts' two largest spreads (principal components) do
    (bench/RESULTS.md)."""
    import torch

    from core.cluster.kmeans import kmeans

    n = len(x)
    if n < MAP_FROM:
        raise ValueError(f"a map of the corpus needs at least {MAP_FROM} texts, got {n}")
    rng = np.random.default_rng(seed)
    rows = np.sort(rng.choice(n, min(n, sample), replace=False))
    fitted = np.asarray(vectorstore.take(x, rows), dtype=np.float32)
    found = kmeans(fitted, max(3, min(k, len(rows) // 20)), seed=seed, device=device, init="k-means++", n_init=3,
                   niter=30)  # 3 starts: as good a map as 10, which took up to 24 s at 384-d (RESULTS)
    labels = found.labels
    xs = [torch.from_numpy(fitted[labels == c]).to(device) for c in np.unique(labels)]
    w = _discriminants(xs)[0][:, :2]
    w = w / w.norm(dim=0, keepdim=True)
    w = w * torch.sign(w[w.abs().argmax(0), torch.arange(2)])  # the same map on every fit: its sign fixed
    w = w.cpu().numpy().astype(np.float32)
    return TopicMap(w, np.asarray(found.centroids, np.float32) @ w, rows, labels)


def topic_directions(x: np.ndarray, k: int = TOPICS, sample: int = TOPIC_SAMPLE, seed: int = 0,
                     device: str = "cpu") -> np.ndarray:
    """(D, 2) axes of :func:`topic_map`."""
    return topic_map(x, k, sample, seed, device).directions


NAMED_FROM = 5_000  # texts of the sample whose key lemmas name the map's topics (0.2-1.4 s on 2 cores)


def topic_names(found: TopicMap, texts, words: int = 3, limit: int = NAMED_FROM, seed: int = 0,
                lang: str = "auto") -> list[str]:
    """Each topic of the map named by its ``words`` key lemmas (class-based TF-IDF, as the Topics page ranks
    them), read from ``limit`` texts of the sample (``texts``: the corpus's text column, read at those rows;
    ``lang``: their language, detected when "auto")."""
    from core.cluster.keyterms import key_terms

    rng = np.random.default_rng(seed)
    some = np.sort(rng.choice(len(found.rows), min(len(found.rows), limit), replace=False))
    labels = found.labels[some]
    terms = key_terms([str(t) for t in texts.take(found.rows[some])], labels, lang=lang, min_count=3,
                      seed=seed).table
    named = dict(zip(terms["cluster"], terms["ctfidf_terms"]))
    return [" · ".join(named.get(c, [])[:words]) for c in range(len(found.centres))]


def axis_titles(n_excluded: int, view: str = "group") -> tuple[str, str]:
    """What the two directions of :func:`lda_directions` (``view`` "group") or :func:`topic_directions`
    ("topics") are, for a figure's axes."""
    if view == "topics":
        return "the corpus's topics, first axis", "the corpus's topics, second axis"
    return ("LD1", "LD2") if n_excluded else ("included vs the rest", "the texts' largest spread beside it")


def project(x: np.ndarray, w: np.ndarray, chunk: int = ROWS_PER_BLOCK) -> np.ndarray:
    """Rows of x (possibly memory-mapped) times w, chunked; float32 (N, 2)."""
    if getattr(x, "dtype", None) == np.float16 and len(x):
        return vectorstore.times(x, w)  # exact, one pass, ~2.5 s at 10M (see there)
    out = np.empty((len(x), w.shape[1]), dtype=np.float32)
    for s in range(0, len(x), chunk):
        out[s:s + chunk] = np.asarray(x[s:s + chunk], dtype=np.float32) @ w
    return out


def preview_starts(n: int, share: float, block: int = ROWS_PER_BLOCK) -> np.ndarray:
    """First rows of the blocks of a preview: whole blocks of ``block`` rows spread evenly over the corpus
    (its start, its end and between; contiguous reads of the store), about ``share`` of the rows."""
    blocks = -(-n // block)
    k = min(blocks, max(1, int(round(blocks * share))))
    return np.unique(np.linspace(0, blocks - 1, k).round().astype(np.int64)) * block


def project_preview(x: np.ndarray, w: np.ndarray, share: float, block: int = ROWS_PER_BLOCK
                    ) -> tuple[np.ndarray, np.ndarray]:
    """(rows, their coordinates) for a first look at a large corpus: ``project`` of the rows of
    :func:`preview_starts` only, their pages asked of the disk at once. At 10M rows and a share of 1/8 it
    reads ~1 GB of the store instead of 7.7 GB."""
    starts = preview_starts(len(x), share, block)
    with vectorstore.foreground(x):  # the server's background read of the store waits meanwhile
        vectorstore.advise_blocks(x, starts, block)
        rows = np.concatenate([np.arange(s, min(len(x), s + block)) for s in starts])
        xy = np.concatenate([np.asarray(x[s:s + block], dtype=np.float32) @ w for s in starts])
    return rows, xy


class _Texts:
    """The texts of some rows, read only where a figure asks (its hover sample)."""

    def __init__(self, texts, rows: np.ndarray):
        self.texts, self.rows = texts, rows

    def take(self, local):
        return self.texts.take(self.rows[np.asarray(local, np.int64)])


PREVIEW_HOVER = 1000  # a first look's texts on hover (5,000 random texts of a cold 10M column: 0.3-1.2 s)
# of the rows: an eighth of a cold 10M store took 2.6 s to project, the preview was ready in 3.9-5.1 s
PREVIEW_SHARE = 1 / 16


def preview_scatter(x: np.ndarray, w: np.ndarray, included, excluded, texts, share: float = PREVIEW_SHARE,
                    hover_sample: int = PREVIEW_HOVER, **scatter_kw):
    """A first look at a large corpus's scatter: the rows of :func:`project_preview` and every labelled row,
    on the axes ``w`` of the full one. Returns (``plots.Scatter``, the rows drawn)."""
    from core import plots
    from core.session import EXCLUDED, INCLUDED

    included, excluded = np.asarray(included, np.int64), np.asarray(excluded, np.int64)
    rows, xy = project_preview(x, w, share)
    extra = rows_without(np.r_[included, excluded], rows)  # (np.setdiff1d: a hash table over 625k rows)
    rows, xy = np.r_[rows, extra], np.vstack([xy, vectorstore.take(x, extra) @ w])
    labels = np.zeros(len(rows), dtype=np.int8)
    labels[np.isin(rows, included)] = INCLUDED
    labels[np.isin(rows, excluded)] = EXCLUDED
    return plots.scatter(xy, labels, _Texts(texts, rows), hover_sample=hover_sample, **scatter_kw), rows
