"""What the annotation page does, without a page: ask a method, apply it to the session, list rows.

The simulated annotator (bench/annotator.py) calls these same functions.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from core import timezones
from core.ingest import QUOTED
from core.search import REGISTRY, NotApplicable, Ranked, SearchContext
from core.search.index import VectorIndex
from core.rows import as_rows, in_sorted, unique_rows
from core.search.keyword import matches
from core.session import EXCLUDED, INCLUDED, LABEL_NAMES, SWITCH, UNLABELLED, Session, Step
from core.threads import in_order


def ask(ctx: SearchContext, session: Session, method: str, k: int | None = 10, **params) -> Ranked:
    """Run a method on the session's labels and record its hits (they come in as included).

    Raises NotApplicable (with the reason) or the method's own ValueError; the session is then
    unchanged.
    """
    if method not in REGISTRY:
        raise ValueError(f"unknown method {method!r}; known: {', '.join(REGISTRY)}")
    REGISTRY[method].params(params)  # a misspelt or malformed parameter is an error, never silently dropped
    copies = ctx.copies if ctx.copies is not None and ctx.copies.rows_with_copies else None
    # where copies may take places, twice the hits at once: a second search would fit the method again
    asked = 2 * k if copies is not None and k is not None else k
    result = REGISTRY[method].search(ctx, session.included, session.excluded, asked, **params)
    brought = np.zeros(0, np.int64)
    if copies is not None and len(result):  # the places go to distinct texts; their copies come in with them
        result = _distinct_hits(ctx, session, method, k, asked, params, result)
        brought = copies.expand(result.rows)[len(result):]
    recorded = {key: (str(v) if not isinstance(v, (int, float, str, bool, type(None), list)) else v)
                for key, v in params.items()}
    if "chosen" in result.info:
        recorded["chosen"] = result.info["chosen"]
    info = dict(result.info)
    fresh = info.pop("unlabelled_hits", None)
    if fresh is not None:  # a keyword search: how many of its hits it leaves unlabelled (0: More hits has none)
        recorded[HITS_LEFT] = int(len(fresh) - np.isin(fresh, np.concatenate([result.rows, brought])).sum())
    session.add_search(method, recorded, result.rows, result.scores, copies=brought)
    return replace(result, info={**info, "copies": int(len(brought))} if len(brought) else info)


def labels_of(session: Session, rows) -> np.ndarray:
    """Each of ``rows``'s label in the group being built: INCLUDED, EXCLUDED or UNLABELLED (int8)."""
    rows = as_rows(rows)
    return np.fromiter((session.label_of(r) for r in rows), np.int8, len(rows))


CLUSTER = "cluster"  # the step that brings a cluster's texts into the group being built (the Topics page)


def bring_cluster(session: Session, index: VectorIndex, rows, clustering: str, cluster: int) -> Step | None:
    """A cluster's texts that the group being built has not labelled, brought in as a search's hits are (included,
    to be reviewed; one Undo takes them out), those closest to the group's included texts first (the score: cosine
    to their mean, over ``index``'s unit rows, read in blocks); None where the group has labelled all of them."""
    rows = as_rows(rows)
    new = rows[labels_of(session, rows) == UNLABELLED]
    if not len(new):
        return None
    scores = np.zeros(len(new), np.float32)
    if len(included := session.included):
        centre = index.mean_of(included)
        scores = index.scores_of(new, centre / max(float(np.linalg.norm(centre)), 1e-12))
    order = np.argsort(-scores, kind="stable")
    return session.add_search(CLUSTER, {"clustering": clustering, "cluster": int(cluster)}, new[order],
                              scores[order].astype(float))


MORE_FOR_COPIES = 4  # a search asked again, once, for this many times its k when copies took its places


def _distinct_hits(ctx: SearchContext, session: Session, method: str, k: int | None, asked: int | None,
                   params: dict, result: Ranked) -> Ranked:
    """``result`` (``asked`` hits) with each text once (its best-ranked row), ``k`` of them where the method has
    that many: asked again, once, for MORE_FOR_COPIES x k hits when copies of one another took its places."""
    keep = ctx.copies.first_of_each(result.rows)
    if k is not None and len(keep) < k and len(result) == asked and asked < MORE_FOR_COPIES * k:
        result = REGISTRY[method].search(ctx, session.included, session.excluded, MORE_FOR_COPIES * k, **params)
        keep = ctx.copies.first_of_each(result.rows)
    keep = keep[:k] if k is not None else keep
    return replace(result, rows=result.rows[keep], scores=result.scores[keep])


def label(copies, session: Session, rows, value: int, **how):
    """``session.set_labels`` for ``rows`` and every copy of them (``copies``: the corpus's core.copies.Copies, or
    None); the step's params count the copies. ``how``: set_labels's action, keep_explicit and params."""
    rows = as_rows(rows)
    if copies is not None and len(rows):
        given = len(unique_rows(rows))
        rows = copies.expand(rows)
        how["params"] = {**(how.get("params") or {}), "copies": int(len(rows) - given)}
    return session.set_labels(rows, value, **how)


def toggle(copies, session: Session, row: int):
    """A click on a text (``Session.toggle``), its copies with it (``copies`` as for ``label``)."""
    return label(copies, session, [int(row)], session.flipped(row), action="toggle")


def copies_left_out(copies, session: Session) -> Step | None:
    """Label the copies of the group's texts that it leaves unlabelled (a group saved before copies were known) as
    their text, in one undoable step (action "copies"); a text whose rows are labelled both ways stays as it is.
    None where there is nothing to label."""
    if copies is None or not session.labels:
        return None
    rows = np.fromiter(session.labels, np.int64, len(session.labels))
    given = np.fromiter(session.labels.values(), np.int64, len(rows))
    codes = copies.codes[rows]
    both = np.intersect1d(codes[given == INCLUDED], codes[given == EXCLUDED])
    more = {}
    for value in (INCLUDED, EXCLUDED):
        mine = rows[given == value]
        new = copies.expand(mine)[len(mine):]
        new = new[~np.isin(copies.codes[new], both)]  # a labelled copy is labelled otherwise: its code is in both
        more.update(dict.fromkeys(new.tolist(), value))
    if not more:
        return None
    return session.relabel(more, "copies", {"copies": len(more)})


def rebuilt_on_import(labels: dict[str, int], id_index: pd.Index) -> tuple[Step, int]:
    """A group known by its texts' ids (``labels``: id -> 1 or -1, as a draft's label events leave it) as one step on
    the rows of an import of its corpus (``id_index``: the import's ids), and how many of its texts the import lacks.
    An unsaved group outlives a new import this way: its steps named the earlier import's rows."""
    ids = list(labels)
    rows = id_index.get_indexer(ids)
    changes = [(int(r), UNLABELLED, labels[i]) for i, r in zip(ids, rows) if r >= 0]
    gone = len(ids) - len(changes)
    return Step("label", "restored on a new import", {"n": len(changes), "kept": 0, "gone": gone},
                changes=changes), gone


def distinct(ctx: SearchContext, rows: np.ndarray, scores: np.ndarray | None):
    """A view's rows with each text once (its first row, in the view's order), and their scores."""
    if ctx.copies is None or not len(rows):
        return rows, scores
    keep = ctx.copies.first_of_each(rows)
    return rows[keep], (scores[keep] if scores is not None else None)


def copy_counts(ctx: SearchContext, rows) -> np.ndarray:
    """How many copies each of ``rows`` has in the corpus (zeros where the context knows none)."""
    rows = as_rows(rows)
    return ctx.copies.count(rows) if ctx.copies is not None else np.zeros(len(rows), np.int64)


@dataclass
class KeywordReview:
    """The adaptive first step: keyword hits are reviewed a page at a time, most typical first,
    and reviewing stops at the first page that is mostly excluded (more than ``stop_share`` of
    it), or after ``max_hits``, or when the hits run out; then semantic steps take over. A
    loose keyword (many hits, few on topic) thus costs a page or two instead of ``max_hits``."""

    page: int = 10
    max_hits: int = 100
    stop_share: float = 0.5
    shown: int = 0
    stopped: str | None = None  # why reviewing stopped: "mostly excluded", "limit", "no more hits"
    last_share: float = 1.0  # on-topic share of the last page reviewed

    def next_k(self, budget_left: int | None = None) -> int:
        """How many hits to show next (0: stop)."""
        if self.stopped:
            return 0
        k = min(self.page, self.max_hits - self.shown)
        return max(0, min(k, budget_left) if budget_left is not None else k)

    def record(self, shown: int, excluded: int) -> None:
        """A page was reviewed: ``shown`` hits, of which ``excluded`` were off topic."""
        self.shown += shown
        if shown:
            self.last_share = 1 - excluded / shown
        if shown == 0:
            self.stopped = "no more hits"
        elif excluded > self.stop_share * shown:
            self.stopped = "mostly excluded"
        elif self.shown >= self.max_hits:
            self.stopped = "limit"

    def resume(self, semantic_share: float) -> bool:
        """After a stop on a mostly excluded page: go back to the keyword's hits when the last
        semantic page found less on topic than the last keyword page did (and hits are left)."""
        if self.stopped == "mostly excluded" and self.shown < self.max_hits and semantic_share < self.last_share:
            self.stopped = None
            return True
        return False


KEYWORD_PAGE = 10  # the page's default "Add at most": one page of hits (issue 17, bench/RESULTS.md)


HITS_LEFT = "hits_left"  # a keyword step's count of its hits it left unlabelled (0: the last of them came in)


def last_keyword(session: Session) -> dict | None:
    """The parameters of the group's last keyword search (since it was opened or started), or None."""
    step = session.last_search("keyword")
    return None if step is None else {k: v for k, v in step.params.items() if k != HITS_LEFT}


def keyword_exhausted(session: Session) -> bool:
    """Whether the group's last keyword search brought in the last of its hits (so More hits has none to give). A
    search recorded before this was counted is taken as not exhausted."""
    step = session.last_search("keyword")
    return step is not None and step.params.get(HITS_LEFT) == 0


@dataclass(frozen=True)
class RecentYield:
    """How many of the texts the last searches brought in are still included (see recent_yield)."""
    kept: int
    seen: int  # the texts those searches brought in: at least the window
    searches: int

    @property
    def dried_up(self) -> bool:
        """The stopping signal: at most STOP_KEPT in STOP_WINDOW of those texts kept (bench/stopping.py)."""
        return self.kept * STOP_WINDOW <= STOP_KEPT * self.seen


# The stopping signal, chosen on the simulated annotator's traces of five labelled corpora (bench/stopping.py,
# bench/RESULTS.md "When to stop"): of the last 30 texts the searches brought in, at most 1 still included.
STOP_WINDOW, STOP_KEPT = 30, 1


def recent_yield(session: Session, window: int = STOP_WINDOW) -> RecentYield | None:
    """How many of the texts the last searches brought into the group (as included) are still included: the
    searches before the newest one (which the annotator may not have reviewed yet), newest first, whole, until
    they have brought in ``window`` texts or more. None until the searches since the group was opened or
    started have brought in that many.

    A text counts where a search brought it in (a hit already labelled does not count again); what the
    annotator did to it since (excluded it, included it again) is its label now. Whole searches, not the last
    ``window`` texts: a search shows its best texts first, so the tail of a long one alone would read low.
    The simulated annotator's traces score the signal (bench/stopping.py, the same rule)."""
    kept = seen = searches = 0
    newest = True
    for step in reversed(session.history):
        if step.kind == "label" and step.method == SWITCH:
            break
        if step.kind != "search":
            continue
        if newest:  # the newest search: perhaps not reviewed yet
            newest = False
            continue
        shown = set(step.shown)  # the texts it showed: not the copies that came in with them
        brought = [row for row, old, new in step.changes if old == UNLABELLED and new == INCLUDED and row in shown]
        if not brought:
            continue
        kept += sum(session.labels.get(r) == INCLUDED for r in brought)
        seen += len(brought)
        searches += 1
        if seen >= window:
            return RecentYield(kept, seen, searches)
    return None


def stop_advice(y: RecentYield | None) -> str | None:
    """The words under the counters: None before the searches have brought in a window of texts."""
    if y is None:
        return None
    said = (f"You kept {y.kept:,} of the {y.seen:,} texts your last {y.searches} search"
            f"{'es' if y.searches > 1 else ''} brought in (the newest search not counted)")
    if y.dried_up:
        return (f"{said}: they have stopped finding this topic. {STOP_EVIDENCE} Try a keyword for a side of the "
                "topic not found yet; or, on the Topics page, sort a clustering's clusters by the group being built "
                "and bring in the rest of a cluster it mostly holds; or save the group.")
    return said + "."


# what the simulated annotator measured at this signal (bench/stopping.py; bench/RESULTS.md, "When to stop")
STOP_EVIDENCE = ("In simulated annotation of five labelled corpora, stopping here found 92% of a topic on average, "
                 "against 95% for going on to twice the topic's size (topics of 30-100 texts: 79% against 84% at four "
                 "times their size).")


def plural(n: int, word: str) -> str:
    """``n`` and ``word``, with an s unless ``n`` is 1: 1 new text, 2 new texts, 1,000 hits."""
    return f"{n:,} {word}{'' if n == 1 else 's'}"


def keyword_advice(session: Session, stop_share: float = KeywordReview.stop_share) -> str | None:
    """After a keyword search: what the measured policy (KeywordReview) does next, in words, from how
    much of the hits it showed is now excluded. None when the last search was not a keyword search."""
    step = session.last_search()
    if step is None or step.method != "keyword" or not step.shown:
        return None
    if step.params.get(HITS_LEFT) == 0:  # no More hits to take
        if len(step.shown) == 1:
            return "This is the keyword's last hit: exclude it if it is off topic, then Suggest, or another keyword."
        return (f"These {len(step.shown)} are the keyword's last hits: exclude the off-topic ones, then Suggest, or "
                "another keyword.")
    # the excluded rows among those shown (a large keyword step shows 100,000: test the few excluded ones)
    off = int(np.isin(session.excluded, np.asarray(step.shown, np.int64)).sum())
    if not off:
        if len(step.shown) == 1:
            return "Exclude this hit if it is off topic; otherwise More hits, or Suggest."
        return (f"Exclude the off-topic texts among these {len(step.shown)} hits. If more than half are off topic, "
                "the keyword is loose: Suggest next; otherwise More hits.")
    if off > stop_share * len(step.shown):
        return (f"{off} of these {plural(len(step.shown), 'hit')} {'is' if off == 1 else 'are'} excluded: the keyword "
                "is loose. A semantic search "
                "(Suggest) is likely to find more per text reviewed now; come back to More hits when it slows.")
    on = len(step.shown) - off
    return (f"{on} of these {len(step.shown)} hits {'is' if on == 1 else 'are'} on topic: exclude the ones that "
            "are not, then take More hits, or Suggest.")


def availability(session: Session, ctx: SearchContext | None = None) -> dict[str, str | None]:
    """For each method: None when it can run now, otherwise the reason it cannot (with ``ctx``, also
    what a method needs from it, e.g. DAC a trained model)."""
    c = session.counts()
    return {name: m.reason_not_applicable(c["included"], c["excluded"], ctx) for name, m in REGISTRY.items()}


def unmet_needs(avail: dict[str, str | None], methods, counts: dict[str, int]) -> str:
    """One line under the method buttons: what the disabled ones wait for (``avail``, from :func:`availability`),
    methods that wait for the same labels (``Method.missing`` at ``counts``) named together in the buttons' order
    ("LDA, NN1 and NN2 need at least 1 excluded text"), not the same need repeated for each. A reason of another
    kind (a method that needs a trained model) stays as it is."""
    needs: dict[str, list[str]] = {}
    for name in methods:
        if not (reason := avail.get(name)):
            continue
        m = REGISTRY[name]
        need = m.missing(counts["included"], counts["excluded"])
        if need is not None and reason == f"{m.label} needs {need}":
            needs.setdefault(need, []).append(m.label)
        else:
            needs.setdefault(reason, [])
    parts = []
    for need, labels in needs.items():
        if not labels:
            parts.append(need)
        elif len(labels) == 1:
            parts.append(f"{labels[0]} needs {need}")
        else:
            parts.append(f"{', '.join(labels[:-1])} and {labels[-1]} need {need}")
    return " · ".join(parts)


def rows_frame(frame: pd.DataFrame, session: Session, rows, scores=None, zone: str = "UTC",
               copies=None) -> pd.DataFrame:
    """The rows to show, in order: row, id, text, date (wall time of ``zone``), author, quoted_text (what a quote
    quotes: core.ingest.QUOTED), score, label, and copies (how many copies of the text the corpus holds besides it:
    ``copies``, or 0)."""
    rows = np.asarray(rows, dtype=np.int64)
    cols = ["id", "text"] + [c for c in ("date", "author", QUOTED) if c in frame.columns]
    out = timezones.shown(frame.iloc[rows][cols], zone).copy()
    out.insert(0, "row", rows)
    out["score"] = np.asarray(scores, dtype=np.float32) if scores is not None and len(scores) == len(rows) else np.nan
    out["label"] = [LABEL_NAMES[session.label_of(r)] for r in rows]
    out["copies"] = np.asarray(copies, np.int64) if copies is not None else 0
    return out.reset_index(drop=True)


CONVERSATION_SHOWN = 40  # texts of a conversation shown at once (Chromium took 11-14 s to draw 2,000 with buttons)


def conversation(threads, frame: pd.DataFrame, session: Session, row: int, zone: str = "UTC",
                 shown: int = CONVERSATION_SHOWN) -> tuple[pd.DataFrame, int]:
    """(texts of ``row``'s conversation (core.threads) as :func:`rows_frame` gives them, oldest first where the corpus
    has dates (otherwise in corpus order), how many are left out): all of them up to ``shown``; in a longer one its
    first text and those around ``row``, ``row`` itself included. Empty where it has none."""
    order = whole = in_order(threads, frame, row)
    if len(whole) > shown:
        at, wide = int(np.flatnonzero(whole == row)[0]), max(shown - 1, 1)
        start = min(max(1, at - wide // 2), len(whole) - wide)
        order = np.r_[whole[:1], whole[start:start + wide]]
    return rows_frame(frame, session, order, zone=zone), len(whole) - len(order)


def view_rows(session: Session, view: str) -> tuple[np.ndarray, np.ndarray | None]:
    """Rows (and scores) for a view: 'last' search, 'included' or 'excluded'."""
    if view == "last":
        step = session.last_search()
        if step is None:
            return np.zeros(0, np.int64), None
        return np.asarray(step.shown, np.int64), np.asarray(step.scores, np.float32)
    if view == "included":
        return session.included, None
    if view == "excluded":
        return session.excluded, None
    raise ValueError(f"view must be last, included or excluded, got {view!r}")


def text_matches(ctx: SearchContext, query: str, is_regex: bool = False, word_forms: str | None = None,
                 quotes: bool = False) -> np.ndarray:
    """Sorted rows of the corpus whose text holds ``query``: the keyword search's engine and rules (case and
    diacritics ignored, its limits on a pattern, its deadline; with ``word_forms``, a language, its words in any of
    their forms as the keyword search finds them; with ``quotes``, a quote whose quoted tweet holds it, as the
    keyword search's *Quoted tweets too*); KeywordError names what is wrong with a query."""
    if ctx.keyword_index is None:
        raise NotApplicable("a filter needs the corpus texts")
    rows = matches(ctx.keyword_index, query, is_regex, word_forms=word_forms)
    quoted = ctx.quotes if quotes else None
    return rows if quoted is None else unique_rows(rows, quoted.find(query, is_regex, word_forms=word_forms))


def filter_view(rows: np.ndarray, scores: np.ndarray | None, matches: np.ndarray):
    """The view's rows (and their scores) that are among ``matches`` (sorted rows), in the view's order."""
    rows = as_rows(rows)
    keep = in_sorted(rows, matches)
    return rows[keep], (scores[keep] if scores is not None else None)


def filter_caption(query: str, kept: int, total: int, view: str) -> str:
    """What a filter left of a view, in words (the query shown as the user typed it, made plain by the page)."""
    what = {"last": "texts of the last search", "included": "included texts", "excluded": "excluded texts"}[view]
    if not kept:
        return f"None of the {total:,} {what} holds ‘{query}’: clear the filter to see them all."
    return (f"Filter ‘{query}’: {kept:,} of the {total:,} {what} hold it; *Include/Exclude all {kept:,} filtered* "
            "act on these only, on every page.")


FORMS_NAMED = 8  # the other forms of a keyword a search's message names


def search_message(method: str, r: Ranked) -> str:
    """What a search did, in words (labels of methods, counts, the dictionary's forms of a keyword (letters
    only); no user text)."""
    label = REGISTRY[method].label
    chosen = r.info.get("chosen")
    chosen = f" (chose {REGISTRY[chosen].label if chosen in REGISTRY else chosen})" if chosen else ""
    if "hits" in r.info and not r.info["hits"]:
        if "as_pattern" in r.info:  # a plain query with a pattern's characters: 'flood|storm' found no text as typed
            n = r.info["as_pattern"]
            found = f" (it finds {plural(n, 'text')})" if n is not None else ""
            return (f"{label}: no hits for the query as typed. It looks like a regular expression: tick *Regular "
                    f"expression* to search it as one{found}.")
        return f"{label}: no hits. Try another word, a shorter one (words match inside longer ones), or a pattern."
    if not len(r):
        what = (("its one hit is already labelled" if r.info["hits"] == 1 else
                 f"all {r.info['hits']:,} hits are already labelled") if "hits" in r.info else
                "every text it could rank is already labelled")
        return f"{label}{chosen}: no new texts ({what})."
    forms = r.info.get("forms") if r.info.get("by_forms") else None
    forms = (f"; {r.info['by_forms']:,} found only as another form of the words: "
             + ", ".join(forms[:FORMS_NAMED]) + (", ..." if len(forms) > FORMS_NAMED else "")) if forms else ""
    spelt = r.info.get("spellings")
    forms += (f"; spelt also {', '.join(spelt[:FORMS_NAMED])}" + (", ..." if len(spelt) > FORMS_NAMED else "")
              if spelt else "")
    n = r.info.get("by_quote", 0)
    forms += f"; {n:,} found only in the tweet {'it quotes' if n == 1 else 'they quote'}" if n else ""
    hits = (f" of {plural(r.info['hits'], 'hit')} ({r.info['already_labelled']:,} already labelled{forms})"
            if "hits" in r.info else "")
    n = r.info.get("copies", 0)
    copies = f", with their {n:,} cop{'y' if n == 1 else 'ies'} (the same words with other links)" if n else ""
    return f"{label}{chosen}: {plural(len(r), 'new text')}{hits}, added as included{copies}."


def bulk_message(step, label: int) -> str:
    """What a bulk action (a page, a lasso) changed and what it left as it was."""
    word, other = LABEL_NAMES[label], LABEL_NAMES[-label]
    kept = step.params.get("kept", 0)
    same = step.params.get("n", 0) - step.params.get("changed", 0) - kept
    copies = step.params.get("copies", 0)
    parts = [f"{plural(step.params.get('changed', 0), 'text')} {word}"
             + (f" ({copies:,} of them copies of the others, labelled with them)" if copies else "")]
    if kept:
        parts.append(f"{kept:,} {other} by you left as they were (switch them one by one, or tick "
                     "'Also overturn my own labels')")
    if same > 0:
        parts.append(f"{same:,} already {word}")
    return "; ".join(parts) + "."


def page_count(n: int, per_page: int) -> int:
    return max(1, -(-n // per_page))


def page_of(rows: np.ndarray, scores: np.ndarray | None, page: int, per_page: int):
    """(rows on the page, their scores or None); ``page`` is 1-based."""
    sl = slice((page - 1) * per_page, page * per_page)
    return rows[sl], (scores[sl] if scores is not None else None)


def meta_line(r) -> str:
    """date · author · score · id of a row of rows_frame (plain text)."""
    date = getattr(r, "date", None)
    parts = [str(date)[:16] if date is not None and date == date else "", str(getattr(r, "author", "") or ""),
             f"score {r.score:.3f}" if not np.isnan(r.score) else "", f"id {r.id}",
             f"{r.copies:,} cop{'y' if r.copies == 1 else 'ies'} (same words, other links) labelled with it"
             if getattr(r, "copies", 0) else ""]
    return "  ·  ".join(p for p in parts if p)


def example_query(texts, sample: int = 3000, seed: int = 0, max_share: float = 0.03) -> str:
    """A keyword example for the search box from the corpus's own words: its two most frequent words of
    5+ letters that are no function words (English's list, a few Czech ones) and that fewer than ``max_share`` of the
    texts use (in any language, function words are in more), as an alternation (``flood|storm``).
    "" for a corpus without such words."""
    from collections import Counter

    from core.cluster.keyterms import ENGLISH_FUNCTION, TWITTER_WORDS, tokens
    from core.languages import CS_FUNCTION_WORDS
    from core.search.keyword import fold

    n = len(texts)
    rows = np.random.default_rng(seed).choice(n, min(n, sample), replace=False) if n else []
    # only the sampled texts are read (a 10M corpus's column made into Python strings took seconds, holding
    # the interpreter while another page ran); ``take`` serves a numpy array and a pandas column alike
    df = Counter(w for t in texts.take(np.asarray(rows, np.int64)) for w in set(tokens(str(t))))
    stop = ENGLISH_FUNCTION | TWITTER_WORDS | CS_FUNCTION_WORDS
    words = [f for f in (fold(w) for w, k in df.most_common(500) if k <= max_share * len(rows) and len(w) >= 5
                         and w.isalpha()) if f not in stop]
    return "|".join(list(dict.fromkeys(words))[:2])


def provenance(session: Session, rows) -> dict[int, dict]:
    """For each of ``rows``, the journal entry that last set its label in this session (method, params,
    when; an opened group's texts point at the switch that opened it)."""
    wanted, out = {int(r) for r in rows}, {}
    for entry in reversed(session.journal):
        if not wanted:
            break
        hit = wanted.intersection(row for row, _old, _new in entry["changes"]) if len(entry["changes"]) < 4 * len(wanted) \
            else {row for row, _old, _new in entry["changes"] if row in wanted}
        for row in hit:
            out[row] = entry
        wanted -= hit
    return out


def how_line(entry: dict | None, who: str, zone: str = "UTC") -> str:
    """An entry of :func:`provenance` in words: ``by alice via KW ‘flood’ at 12:03`` (the time of ``zone``)."""
    if entry is None:
        return ""
    params = entry.get("params") or {}
    if entry["method"] == "switch":
        what = f"from group ‘{params['group']}’ v{params['version']}" if params.get("group") else f"{params.get('action')}"
    elif entry["method"] == CLUSTER:
        what = f"from cluster {params.get('cluster')} of {params.get('clustering')}"
    elif entry["kind"] == "base":  # a work that starts from a group as it was: "copied from another tab"
        what = str(entry["method"])
    elif entry["method"] in REGISTRY:
        query = params.get("query")
        forms = " in every form" if query and params.get("word_forms") and not params.get("is_regex") else ""
        forms += ", quoted tweets too" if query and params.get("quotes") else ""
        what = f"via {REGISTRY[entry['method']].label}" + (f" ‘{query}’{forms}" if query else "")
    else:
        what = {"toggle": "by a click", "review": "in review", "copies": "as a copy of a text labelled so"}.get(
            entry["method"], f"by {entry['method']}")
        if params.get("filter"):  # a page of the Annotate page's filter
            what = f"by a page filtered by ‘{params['filter']}’"
    undone = {"undo": " (undo)", "redo": " (redo)"}.get(entry["kind"], "")
    return f"{who} {what}{undone} at {timezones.wall(entry['at'], zone)[11:]}"
