"""One user's query must never freeze the server for the others (issue: hostile input).

Every keyword search, plain, alternation or regular expression, runs under one overall deadline,
refuses oversized queries with the limit named, and lets other threads run while it scans.
"""

from __future__ import annotations

import threading
import time
import urllib.request

import numpy as np
import pytest

from core.search import keyword
from core.search.keyword import KeywordError, KeywordIndex, find_rows

# texts on which nested repeats backtrack for ever, among ordinary ones
HOSTILE = ["a" * 4000 + "!", "x" * 3000, "ab" * 1500] * 10 + [f"ordinary tweet {i} about trump" for i in range(3000)]


@pytest.fixture(scope="module")
def hostile():
    return KeywordIndex(HOSTILE)


@pytest.mark.slow  # wall-clock bounds: run apart from the quick suite
@pytest.mark.parametrize("pattern", [r"(a+)+$", r"(x+x+)+y", r"((ab)+)+c$", r"(a|aa)+$", r"(\w+\s?)+$"])
def test_catastrophic_patterns_stop_at_the_deadline(hostile, pattern):
    limit = 0.5
    t = time.monotonic()
    with pytest.raises(KeywordError, match="longer than 0.5 s"):  # these backtrack for ever: never early
        find_rows(hostile, pattern, is_regex=True, timeout_s=limit)
    elapsed = time.monotonic() - t
    assert elapsed <= limit * 1.1 + 0.05, f"{pattern} ran {elapsed:.2f} s for a {limit} s deadline"


def test_nested_repeats_the_engine_resolves_quickly_give_their_answer(hostile):
    """Not every nested repeat backtracks: these the engine settles at once, with the right rows."""
    assert find_rows(hostile, r"((ab)*)*c$", is_regex=True, timeout_s=0.5).tolist() == []
    assert find_rows(hostile, r"(.*a){14}", is_regex=True, timeout_s=2.0).tolist() == sorted([*range(0, 30, 3),
                                                                                          *range(2, 30, 3)])


@pytest.mark.slow
def test_an_alternation_has_one_overall_deadline(hostile, monkeypatch):
    """Each branch is quick; together they must still stop at the deadline."""
    slow = keyword._find_literal

    def slow_branch(*a, **kw):
        time.sleep(0.05)
        return slow(*a, **kw)

    monkeypatch.setattr(keyword, "_find_literal", slow_branch)
    t = time.monotonic()
    with pytest.raises(KeywordError, match="longer than 0.3 s"):
        find_rows(hostile, "|".join(f"w{i}" for i in range(60)), is_regex=True, timeout_s=0.3)
    assert time.monotonic() - t < 0.3 * 1.1 + 0.06


@pytest.mark.parametrize("query, is_regex, says", [
    ("trump" * 1000, False, "5,000 characters; the limit is 1,000"),
    ("(a" * 5000 + ")" * 5000, True, "limit is 1,000"),
    ("(" * 30 + "a" + ")" * 30, True, "nests groups 30 deep; the limit is 20"),
    ("|".join(f"w{i}" for i in range(150)), True, "150 alternatives; the limit is 100"),
])
def test_oversized_queries_are_refused_with_the_limit_named(hostile, query, is_regex, says):
    t = time.monotonic()
    with pytest.raises(KeywordError, match=says):
        find_rows(hostile, query, is_regex=is_regex)
    assert time.monotonic() - t < 0.5  # refused before any scan


def test_deep_nesting_never_raises_recursion_error(hostile):
    # escaped and bracketed parentheses do not count as nesting
    assert find_rows(hostile, r"\(\(\(\([(((]", is_regex=True).tolist() == []
    with pytest.raises(KeywordError):
        keyword.compile_query("(?:" * 200 + "a" + ")" * 200, True, True, True)


def test_a_pattern_the_engine_runs_out_of_memory_on_is_refused_with_the_reason(tmp_path, monkeypatch):
    """A fuzzy group that may also match nothing, repeated, a(?:(?:ne){s<=1}|)+, grows the regex engine's stack to
    some 800 MB on one tweet in under two seconds and then raises MemoryError (found by random patterns): that
    error reached the page as a traceback. It is a KeywordError that names the cause, in memory and through the
    keyword index of a large corpus, and the next search answers. Such a group is now refused before it runs (no
    memory taken): it repeats without end, may match nothing, and holds a fuzzy limit or lies within a group that
    has one. One that must match something, or repeats a bounded number of times, runs."""
    import time

    from core.search import textindex

    texts = ["ano ne " * 20 + "konec", "jiný text"]
    textindex.build(tmp_path / textindex.FILE, texts, len(texts), keyword.fold)
    indexed = KeywordIndex(texts, text_index=textindex.TextIndex(tmp_path / textindex.FILE, len(texts)))
    bombs = ((KeywordIndex(texts), r"a(?:(?:ne){s<=1}|)+"), (indexed, r"(?:(?:ne){s<=1}|)+konec"),
             (indexed, r"a(?:(?:ne){d<=2})*"), (KeywordIndex(texts), r"a(?:(?:Ne){s<=1}|){2,}"),
             (KeywordIndex(texts), r"a(?:n(?:ab|)+){e<=1}"))  # the limit on a group around the repeat
    for kindex, pattern in bombs:
        t = time.perf_counter()
        with pytest.raises(KeywordError, match=r"the group \(\?:.*\) repeats without end and may also match "
                                               r"nothing, with a fuzzy limit .* Take out the empty branch"):
            find_rows(kindex, pattern, is_regex=True, timeout_s=60)
        assert time.perf_counter() - t < 1.0, "refused only after it ran"
        assert find_rows(kindex, "jiný").tolist() == [1]
    for pattern in (r"a(?:(?:ne){s<=1})+", r"(?:(?:ne){e<=1}\s)+konec", r"o(?:(?:ne){s<=1}|){0,50}\s",
                    r"a(?:n(?:o)+){e<=1}\s", r"\bk(?:\p{Latin}|)+c",  # braces that are no limit
                    r"k(?:\N{LATIN SMALL LETTER O}|n|e)+c"):
        assert find_rows(KeywordIndex(texts), pattern, is_regex=True).tolist() == [0], pattern
    # where the engine runs out of memory all the same (the check taken out here), the search says why
    monkeypatch.setattr(keyword, "repeated_empty_fuzzy_group", lambda q: None)
    for kindex, pattern in (*bombs[:2], bombs[4]):
        with pytest.raises(KeywordError, match=r"needed more memory .*\(a fuzzy limit such as \{e<=1\} on a group"):
            find_rows(kindex, pattern, is_regex=True, timeout_s=60)
        assert find_rows(kindex, "jiný").tolist() == [1]


def test_ordinary_patterns_that_can_span_a_line_break_still_work(hostile):
    rows = find_rows(hostile, r"\s+trump", is_regex=True)
    assert len(rows) == 3000 and rows.min() == 30
    texts = ["alpha", "beta gamma", "gamma delta"]
    ki = KeywordIndex(texts)
    assert find_rows(ki, r"alpha\s+beta", is_regex=True).tolist() == []  # never across two texts
    assert find_rows(ki, r"a\s+g", is_regex=True).tolist() == [1]
    assert find_rows(ki, r"a[\s\S]*delta", is_regex=True).tolist() == [2]


@pytest.mark.slow
def test_other_threads_run_while_a_query_scans(hostile):
    """The scan releases the GIL: a thread that ticks every 10 ms is never held up long."""

    def scan():
        with pytest.raises(KeywordError):
            find_rows(hostile, r"(a+)+$", is_regex=True, timeout_s=1.0)

    longest = ticking(scan)
    assert longest < 0.25, f"longest pause {longest:.2f} s"


def ticking(work) -> float:
    """The longest pause of a thread that wakes every 10 ms while ``work()`` runs (seconds)."""
    gaps, stop = [], threading.Event()

    def tick():
        last = time.perf_counter()
        while not stop.is_set():
            time.sleep(0.01)
            now = time.perf_counter()
            gaps.append(now - last)
            last = now

    t = threading.Thread(target=tick)
    t.start()
    try:
        work()
    finally:
        stop.set()
        t.join()
    return max(gaps)


def test_a_variant_built_piece_by_piece_equals_the_whole_corpus_folded():
    texts = [f"Očkování {i} ÚŘAD" if i % 3 else f"plain {i}" for i in range(10_000)] + ["", "İstanbul"]
    for case, diacritics in ((True, True), (False, True), (True, False), (False, False)):
        joined, ends = keyword._fold_joined(texts, case, diacritics)
        assert joined == keyword.fold("\n".join(texts) + "\n", case=case, diacritics=diacritics)
        assert ends.tolist() == [i for i, ch in enumerate(joined) if ch == "\n"]


@pytest.mark.slow
def test_building_the_match_case_index_leaves_other_users_running():
    """The first 'Match case' search of 300k-text corpus builds another index: other threads (other
    users' sessions) keep being served meanwhile (it held the GIL for up to 1.9 s at a time)."""
    rng = np.random.default_rng(0)
    words = ["očkování", "vakcína", "Trump", "ÚŘAD", "the", "news", "žádost", "Brexit"]
    texts = [" ".join(rng.choice(words, 28)) for _ in range(300_000)]  # ~60 MB of text
    # one C call over it all held the GIL ~0.85 s here (up to 1.9 s); built piece by piece the longest wait is
    # 0.03-0.07 s alone, 0.27 s and once 0.54 s under CI's load (a pause of the machine, not of the build). A hold
    # in the build comes back in every build; a pause of the machine does not: up to three builds, the best counts.
    waits = []
    for _ in range(3):
        ki = KeywordIndex(texts, prebuild=False)  # a fresh index: the variant is built again
        waits.append(ticking(lambda: ki.variant(False, True)))
        if waits[-1] < 0.5:
            break
    assert min(waits) < 0.5, f"another thread waited {', '.join(f'{w:.2f}' for w in waits)} s in each build"
    assert len(find_rows(ki, "Trump", case_insensitive=False)) > 0


def test_a_literal_search_checks_its_deadline_after_the_scan(monkeypatch):
    """A frequent literal found every text just before the deadline, then took a second more to turn
    matches into rows, unchecked: the deadline is checked once more at the end."""
    clock = iter(np.arange(0.0, 100.0, 1.5))  # every look at the clock: 1.5 s later
    monkeypatch.setattr(keyword.time, "monotonic", lambda: float(next(clock)))
    ki = KeywordIndex(["e" * 5] * 50, prebuild=False)
    with pytest.raises(KeywordError, match="longer than 2 s"):
        find_rows(ki, "e", timeout_s=2.0)


@pytest.mark.slow
def test_server_answers_other_users_during_a_worst_case_query(tmp_path, tweets_root):
    """A catastrophic regex typed on Annotate: the health endpoint and another session's home
    page keep answering within 1 s while it runs."""
    import shutil

    from tests.browser import browser_page, require_browser, streamlit_server, wait_idle

    require_browser()
    root = tmp_path / "d"
    shutil.copytree(tweets_root / "tweets", root / "tweets")
    with streamlit_server(root) as (url, _proc), browser_page() as page:
        other = page.context.browser.new_page()  # another user's session
        page.goto(f"{url}/Annotate?corpus=tweets")
        page.get_by_label("Keyword or regular expression").wait_for()
        page.locator("[data-testid=stCheckbox]").filter(has_text="Regular expression").click()
        wait_idle(page)
        box = page.get_by_label("Keyword or regular expression")
        box.fill(r"(.*a){20}")
        box.press("Enter")
        latencies = []
        t0 = time.monotonic()
        while time.monotonic() - t0 < 1.6:
            t = time.monotonic()
            assert urllib.request.urlopen(url + "/_stcore/health", timeout=5).read() == b"ok"
            latencies.append(time.monotonic() - t)
            time.sleep(0.1)
        t = time.monotonic()
        other.goto(f"{url}/?corpus=tweets")
        other.get_by_text("Corpus: tweets").wait_for(timeout=10_000)
        home_s = time.monotonic() - t
        page.get_by_text("longer than 2 s").wait_for(timeout=20_000)
        assert max(latencies) < 1.0, latencies
        assert home_s < 5.0  # a page load (script run + render) while the query runs
    assert np.median(latencies) < 0.2
