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


@pytest.mark.parametrize("pattern", [r"(a+)+$", r"(x+x+)+y", r"((ab)*)*c$", r"(.*a){14}"])
def test_catastrophic_patterns_stop_at_the_deadline(hostile, pattern):
    limit = 0.5
    t = time.monotonic()
    try:
        find_rows(hostile, pattern, is_regex=True, timeout_s=limit)
    except KeywordError as exc:
        assert "longer than 0.5 s" in str(exc)
    elapsed = time.monotonic() - t
    assert elapsed <= limit * 1.1 + 0.05, f"{pattern} ran {elapsed:.2f} s for a {limit} s deadline"


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


def test_ordinary_patterns_that_can_span_a_line_break_still_work(hostile):
    rows = find_rows(hostile, r"\s+trump", is_regex=True)
    assert len(rows) == 3000 and rows.min() == 30
    texts = ["alpha", "beta gamma", "gamma delta"]
    ki = KeywordIndex(texts)
    assert find_rows(ki, r"alpha\s+beta", is_regex=True).tolist() == []  # never across two texts
    assert find_rows(ki, r"a\s+g", is_regex=True).tolist() == [1]
    assert find_rows(ki, r"a[\s\S]*delta", is_regex=True).tolist() == [2]


def test_other_threads_run_while_a_query_scans(hostile):
    """The scan releases the GIL: a thread that ticks every 10 ms is never held up long."""
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
        with pytest.raises(KeywordError):
            find_rows(hostile, r"(a+)+$", is_regex=True, timeout_s=1.0)
    finally:
        stop.set()
        t.join()
    assert len(gaps) > 20 and max(gaps) < 0.25, f"longest pause {max(gaps):.2f} s"


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
