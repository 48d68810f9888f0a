"""The simulated annotator: reviews the hits of a keyword and of a search method's steps as a person would,
and counts recall text by text. The protocol and the command line: ``python -m bench.annotator``
(bench/annotator.py)."""

from __future__ import annotations

import logging
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from core import annotate
from core.corpus import Corpus, ImportSpec, import_corpus, list_corpora, load_corpus
from core.ingest import QUOTED, Options, sha256_file
from core.cluster.evaluate import group_in_clusters
from core.cluster.keyterms import key_terms, tokens
from core.search import REGISTRY, NotApplicable, SearchContext
from core.search.keyword import fold
from core.session import EXCLUDED, Session

log = logging.getLogger(__name__)
MARKS = (1.0, 1.5, 2.0)


@dataclass
class Run:
    cls: str
    method: str
    size: int
    seed_query: str
    budget: float = max(MARKS)  # the run's budget in multiples of the class size
    # each text reviewed, in the order the annotator reviewed it (a step's own order): the members it brought,
    # 1 for a member (0 off topic), plus its copies that are members where the search context knows copies
    texts: list[int] = field(default_factory=list)
    curve: list[tuple[int, int]] = field(default_factory=list)  # per step: (reviewed, found) so far
    step_seconds: list[float] = field(default_factory=list)
    stops: list[tuple[int, int]] = field(default_factory=list)  # (reviewed, found) where the stopping signal held
    included: int = 0
    true_included: int = 0

    @property
    def reviewed(self) -> int:
        return len(self.texts)

    def step(self, members_shown: list[int]) -> None:
        """A step was reviewed: its texts, in the order shown, each with the members it brought (a bool: a
        member or not)."""
        self.texts.extend(int(m) for m in members_shown)
        self.curve.append((len(self.texts), sum(self.texts)))

    def recall_at(self, multiple: float) -> float | None:
        """Members among the first ``multiple x size`` texts reviewed, over the class size, counted text
        by text (a step that crosses the mark counts up to the mark). None when the mark lies beyond
        the run's budget; a run that stopped early (nothing more to review) keeps what it found."""
        mark = int(multiple * self.size + 1e-9)
        if mark > int(self.budget * self.size + 1e-9):
            return None
        return sum(self.texts[:mark]) / self.size

    def reviewed_for(self, share: float) -> float | None:
        """Texts reviewed (in units of the class size) until ``share`` of the class was found; None when the run
        never found that much."""
        found = np.cumsum(self.texts)
        reached = np.flatnonzero(found >= share * self.size - 1e-9)
        return (int(reached[0]) + 1) / self.size if len(reached) else None


def review(ctx: SearchContext, session: Session, rows, members: set[int], run: Run) -> int:
    """Label truthfully the rows a search just showed (they came in as included, with their copies where ``ctx``
    knows copies), in the order shown, as the page does (a text's copies take its label)."""
    rows = [int(r) for r in rows]
    wrong = [r for r in rows if r not in members]
    if wrong:
        annotate.label(ctx.copies, session, wrong, EXCLUDED, action="review")
    if ctx.copies is None:
        run.step([r in members for r in rows])
    else:  # a member's copies that are members came in with it: found for one text reviewed
        run.step([sum(int(c) in members for c in ctx.copies.expand([r])) if r in members else 0 for r in rows])
    return len(rows)


def off_topic(rows, members: set[int]) -> int:
    """How many of the texts shown are not members (the ones the annotator excludes)."""
    return sum(int(r) not in members for r in rows)


def found(session: Session, members: set[int]) -> int:
    return len(members.intersection(session.included.tolist()))


def keyword_page(ctx: SearchContext, s: Session, kr: "annotate.KeywordReview", query: str, k: int,
                 members: set[int], run: Run, word_forms: str | None = None) -> int:
    """Review the keyword's next ``k`` hits (with ``word_forms``, a language: its words in every form, as the
    Annotate page's Every form searches them; in a corpus with quotes, with *Quoted tweets too* ticked as the page
    ticks it); returns how many were shown."""
    quotes = {"quotes": True} if ctx.frame is not None and QUOTED in ctx.frame.columns else {}
    r = annotate.ask(ctx, s, "keyword", k, query=query, word_forms=word_forms, **quotes)
    n = review(ctx, s, r.rows, members, run)
    kr.record(len(r), off_topic(r.rows, members))
    return n


class WordStats:
    """How many texts of the corpus hold each word (case and diacritics folded, as the keyword search reads
    them), from a fixed sample of at most ``sample`` texts: what makes a word typical of a group."""

    def __init__(self, texts, sample: int = 50_000, seed: int = 0, stop_words=frozenset()):
        n = len(texts)
        rows = (np.sort(np.random.default_rng(seed).choice(n, sample, replace=False)) if n > sample
                else np.arange(n))
        self.n = len(rows)
        self.stop = frozenset(stop_words)
        self.df = Counter(w for r in rows for w in self.words(texts[int(r)]))

    def words(self, text: str) -> set[str]:
        return {w for w in (fold(t) for t in tokens(str(text))) if len(w) > 2 and not w.isdigit()
                and w not in self.stop}


def keyword_ideas(texts, included: np.ndarray, stats: WordStats, searched=(), top: int = 5,
                  sample: int = 3_000, seed: int = 0) -> list[str]:
    """Words typical of the group (in many of its included texts, in few of the corpus's), none a keyword
    already searched: a keyword to try when the semantic searches have stopped finding the topic. Tried in the
    simulated annotator (bench/RESULTS.md, "When to stop"): no better than Suggest going on, so not on the page."""
    included = np.asarray(included, np.int64)
    if len(included) > sample:
        included = np.random.default_rng(seed).choice(included, sample, replace=False)
    if len(included) < 5:
        return []
    here = Counter(w for r in included for w in stats.words(texts[int(r)]))
    done = {fold(w) for q in searched for w in str(q).split()}
    n_in = len(included)
    score = {w: c / n_in * np.log((stats.n + 1) / (stats.df.get(w, 0) + 1))
             for w, c in here.items() if c >= max(3, 0.02 * n_in) and w not in done}
    return sorted(score, key=lambda w: -score[w])[:top]


def clusters_to_bring(session: Session, clusters: np.ndarray, share: float) -> list[int]:
    """The clusters a group holds at least ``share`` of (its included texts in them over their size) that hold
    texts it has not labelled, the most held first: what an annotator would bring in from the Topics page."""
    sizes = np.bincount(clusters)
    held = group_in_clusters(session.included, clusters)["counts"] / np.maximum(sizes, 1)
    labelled = np.bincount(clusters[np.fromiter(session.labels, np.int64, len(session.labels))], minlength=len(sizes))
    return [int(c) for c in np.argsort(-held, kind="stable") if held[c] >= share and labelled[c] < sizes[c]]


def simulate(ctx: SearchContext, member_rows: np.ndarray, method: str, queries: list[str], budget: float,
             seed_hits: int, cls: str, params: dict | None = None, keyword_policy: str = "fixed",
             stop_share: float = 0.5, stop: int | None = None, ideas=None, bring=None,
             word_forms: str | None = None) -> Run:
    """One topic reviewed by the protocol of bench/annotator.py, up to ``budget`` x its size. With ``stop``, the
    annotator also stops at the page's stopping signal (core.annotate.recent_yield, read after each semantic
    step as the page shows it), after trying, each time the signal holds, one more keyword that
    ``ideas(session, searched)`` proposes, up to ``stop`` of them (0: stop at the first signal); ``run.stops``
    holds (reviewed, found) at each signal. With ``bring`` (a clustering's labels per row and a share), each such
    time the annotator instead brings in the rest of the clusters the group holds at least that share of (the
    Topics page's "Bring", core.annotate.bring_cluster), the most held first, and reviews them. ``word_forms``:
    the keywords' words in every form of that language's dictionary (the page's Every form)."""
    members = set(member_rows.tolist())
    run = Run(cls, method, len(members), "", budget)
    s = Session()
    reviewed = 0
    limit = int(budget * len(members))
    kr = None
    for q in queries:  # a person tries another word when the first finds nothing on topic
        run.seed_query = q
        if keyword_policy in ("adaptive", "alternate"):  # a page of hits at a time, until a page is mostly off topic
            kr = annotate.KeywordReview(max_hits=seed_hits, stop_share=stop_share)
            while k := kr.next_k(limit - reviewed):
                reviewed += keyword_page(ctx, s, kr, q, k, members, run, word_forms)
        else:  # "fixed": the first seed_hits hits at once
            r = annotate.ask(ctx, s, "keyword", min(seed_hits, limit - reviewed), query=q, word_forms=word_forms)
            reviewed += review(ctx, s, r.rows, members, run)
        if found(s, members) or reviewed >= limit:
            break
    query, tried, check = run.seed_query, [run.seed_query], False
    while reviewed < limit:
        if check and stop is not None and (y := annotate.recent_yield(s)) is not None and y.dried_up:
            run.stops.append(run.curve[-1])
            if bring is not None:
                chosen = clusters_to_bring(s, *bring) if len(run.stops) <= stop else []
                if not chosen:
                    break
                run.seed_query = f"{query} + {len(chosen)} clusters" if len(run.stops) == 1 else run.seed_query
                for c in chosen:
                    if reviewed >= limit:
                        break
                    step = annotate.bring_cluster(s, ctx.index, np.flatnonzero(bring[0] == c), "bring", c)
                    if step is not None:
                        reviewed += review(ctx, s, step.shown[:limit - reviewed], members, run)
                check = False
                continue
            proposed = ideas(s, tried) if ideas and len(run.stops) <= stop else []
            query = next((w for w in proposed if w not in tried), None)
            if query is None:
                break
            tried.append(query)
            run.seed_query = " + ".join(tried)
            kr = annotate.KeywordReview(max_hits=seed_hits, stop_share=stop_share)
            while k := kr.next_k(limit - reviewed):
                reviewed += keyword_page(ctx, s, kr, query, k, members, run, word_forms)
            check = False  # the signal is read again after the next semantic step, as on the page
            continue
        check = True
        k = min(10, limit - reviewed)
        name = method
        if REGISTRY[method].reason_not_applicable(len(s.included), len(s.excluded)):
            name = "cos"
        if REGISTRY[name].reason_not_applicable(len(s.included), len(s.excluded)):
            break  # nothing included at all: no semantic search can start
        t = time.perf_counter()
        try:
            r = annotate.ask(ctx, s, name, k, **((params or {}) if name == method else {}))
        except NotApplicable:
            break
        run.step_seconds.append(time.perf_counter() - t)
        if not len(r):
            break
        reviewed += review(ctx, s, r.rows, members, run)
        share = 1 - off_topic(r.rows, members) / len(r)
        # "alternate": back to the keyword's next page when it found more than this step did
        if keyword_policy == "alternate" and kr is not None and reviewed < limit and kr.resume(share):
            if k := kr.next_k(limit - reviewed):
                reviewed += keyword_page(ctx, s, kr, query, k, members, run, word_forms)
    run.included = len(s.included)
    run.true_included = found(s, members)
    return run


def band(size: int) -> str:
    """The class-size band a topic falls in (issue 17's bands)."""
    return "<=50" if size <= 50 else "51-150" if size <= 150 else "151-500" if size <= 500 else ">500"


def corpus_for(data: Path, label_column: str) -> Corpus:
    """The corpus imported from this file (same sha256) under the data root, importing it if needed."""
    digest = sha256_file(data)
    for name in list_corpora():
        try:
            c = load_corpus(name)
        except ValueError:
            continue
        if c.manifest.get("source", {}).get("sha256") == digest:
            return c
    log.info("importing %s (embedding with the model the app picks for its language)", data)
    # "auto", as the import form and precompute.embed: MiniLM for English, multilingual-e5-small for Czech
    return import_corpus(ImportSpec(input=data, name=data.stem, models=["auto"], options=Options(dedupe="first"),
                                    overwrite=True))


def class_queries(corpus: Corpus, label_column: str, classes: list[str], seed_query: str) -> dict[str, list[str]]:
    """Up to three keyword tries per class: its label_name (when the data has one), then its top
    c-TF-IDF lemmas."""
    if seed_query != "auto":
        return {c: [seed_query] for c in classes}
    labels = corpus.frame[label_column].astype(str).to_numpy()
    names = (corpus.frame.groupby(label_column)["label_name"].first()
             if "label_name" in corpus.frame.columns else {})
    codes = {c: i for i, c in enumerate(sorted(set(labels)))}
    # concentrated=0: the protocol's tries as every figure was measured with (the 200 most frequent lemmas left out)
    kt = key_terms(corpus.frame["text"].tolist(), np.array([codes[x] for x in labels]), top=3, stop_top=200,
                   concentrated=0)
    out = {}
    for c in classes:
        tries = [str(names[c])] if c in names else []
        tries += [t for t in kt.table.loc[codes[c], "ctfidf_terms"] if t not in tries]
        out[c] = tries[:3]
    return out


def plot(runs: list[Run], title: str, path: Path, budget: float = max(MARKS)) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    grid = np.linspace(0, budget, 81)
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for method in dict.fromkeys(r.method for r in runs):
        curves = []
        for r in (r for r in runs if r.method == method):  # text by text: the exact curve
            xs = np.arange(r.reviewed + 1) / r.size
            ys = np.concatenate([[0], np.cumsum(r.texts)]) / r.size
            curves.append(np.interp(grid, xs, ys, right=ys[-1]))
        ax.plot(grid, np.mean(curves, axis=0), label=method)
    ax.plot(grid, np.minimum(grid, 1), "k:", label="ideal")
    ax.set_xlabel("texts reviewed / class size")
    ax.set_ylabel("macro recall")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def recalls(runs: list[Run], budget: float) -> dict:
    """Mean recall at each mark within the budget, over ``runs`` (text by text)."""
    out = {f"recall@{m}x": round(float(np.mean([r.recall_at(m) for r in runs])), 4) for m in MARKS if m <= budget}
    for share in REVIEWED_FOR:  # the texts reviewed to find this share: median over the runs that found it
        took = [x for x in (r.reviewed_for(share) for r in runs) if x is not None]
        out[f"reviewed_for_{share:g}"] = round(float(np.median(took)), 4) if took else None
        out[f"found_{share:g}"] = f"{len(took)} of {len(runs)}"
    return out


REVIEWED_FOR = (0.9, 0.95)
