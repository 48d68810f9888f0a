"""Page latency in a real browser (Playwright + Debian's chromium) on the 300k scale corpus.

    python -m bench.make_scale_corpus            # once: data/scale (real texts, synthetic vectors)
    python -m bench.browser [--corpus scale] [--query "fake news"] [--repeat 3]

Measures, from the click (or Enter) until the result is on screen: the keyword search, COS and LDA
on the Annotate page; the LDA scatter and the timeline of the resulting group (about 2,000 texts);
bytes the browser received over Streamlit's websocket for each; the Streamlit process's peak
resident memory (VmHWM). One JSON object per line.

    python -m bench.browser --corpus scale-10000000 --cold-scatter

instead times a server's first scatter after a restart: a group built and left as a draft, the server
stopped, the corpus's vector store dropped from the page cache, a new server, the draft restored on
Annotate, then the Scatter link: the time from the click until the first look (a preview, from 2M
texts while the store is mostly out of the cache) and until the full, selectable scatter, with a
screenshot of each in the run folder.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

from testbed.common import emit, run_folder
from core import paths
from testbed.browser import browser_page, metrics, streamlit_server, wait_idle


class Bytes:
    def __init__(self, page):
        self.n = 0
        page.on("websocket", lambda ws: ws.on("framereceived", self._add))

    def _add(self, payload):
        self.n += len(payload) if payload is not None else 0

    def take(self) -> int:
        n, self.n = self.n, 0
        return n


def timed(page, action, until, counter: Bytes) -> tuple[float, int]:
    counter.take()
    t = time.perf_counter()
    action()
    until()
    wait_idle(page)
    return time.perf_counter() - t, counter.take()


def peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--corpus", default="scale")
    p.add_argument("--query", default="fake news")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--app", type=Path, default=None,
                   help="serve the app from this project folder (e.g. a worktree of an earlier commit, "
                        "for a before/after in one run); default: this one")
    p.add_argument("--label", default="", help="a name for this app in the output lines (e.g. before, after)")
    p.add_argument("--all-hits", action="store_true",
                   help="the keyword search adds every hit at once (Add at most = 0): a large group, e.g. --query the "
                        "at 300k gives ~100,000 labels, for the toggle's cost at that size")
    p.add_argument("--steps", default="keyword,toggle,cos,lda,scatter,timeline",
                   help="which steps to time after opening Annotate (comma-separated)")
    p.add_argument("--cold-scatter", action="store_true",
                   help="only the Scatter page, opened first on a fresh server with the store out of the page cache")
    a = p.parse_args(argv)
    folder = run_folder("browser", sys.argv if argv is None else ["bench.browser", *argv])
    if a.cold_scatter:
        return cold_scatter(a, folder)
    root = paths.data_root()
    results: dict[str, list] = {}

    def record(op, secs, nbytes):
        results.setdefault(op, []).append((secs, nbytes))

    with streamlit_server(root, **({"app_root": a.app.resolve()} if a.app else {})) as (url, proc):
        for rep in range(a.repeat):
            with browser_page() as page:
                counter = Bytes(page)
                box = page.get_by_label("Keyword or regular expression")
                secs, nb = timed(page, lambda: page.goto(f"{url}/Annotate?corpus={a.corpus}"), box.wait_for, counter)
                record("open_annotate" + ("_cold" if rep == 0 else ""), secs, nb)
                steps = a.steps.split(",")
                if a.all_hits:
                    page.get_by_label("Add at most (0 = all)", exact=True).and_(page.locator("input")).fill("0")
                box.fill(a.query)
                secs, nb = timed(page, lambda: box.press("Enter"), lambda: page.get_by_text("KW:").first.wait_for(), counter)
                record("keyword", secs, nb)
                wait_idle(page)  # the counters are redrawn after the hits: read them once the page is still
                n = int(metrics(page)[0])
                # label toggles: click a row's button until the Excluded counter moves (polled from
                # Python: a page function waiting on the counter missed the change on older pages)
                for i in range(4):
                    before = metrics(page)[1]

                    def moved(before=before):
                        while metrics(page)[1:2] in ([before], []):  # [] while the counters redraw
                            page.wait_for_timeout(20)

                    secs, nb = timed(page, lambda i=i: page.locator("[class*='st-key-tog_'] button:visible").nth(i).click(),
                                     moved, counter)
                    record("toggle_first" if i == 0 else "toggle", secs, nb)
                for name in [m for m in ("COS", "LDA") if m.lower() in steps]:
                    secs, nb = timed(page, lambda: page.locator(f".st-key-btn_{name.lower()} button:visible").first.click(),
                                     lambda: page.get_by_text(f"{name}: 10 new texts").wait_for(), counter)
                    record(name.lower(), secs, nb)
                if "scatter" in steps:
                    secs, nb = timed(page, lambda: page.get_by_role("link", name="Scatter").click(),
                                     lambda: page.locator(".plotly .nsewdrag").first.wait_for(), counter)
                    record("scatter", secs, nb)
                if "timeline" in steps:
                    secs, nb = timed(page, lambda: page.get_by_role("link", name="Timeline").click(),
                                     lambda: page.locator('[data-testid="stPlotlyChart"] .plotly').first.wait_for(), counter)
                    record("timeline", secs, nb)
        peak = peak_rss_mb(proc.pid)
    for op, runs in results.items():
        emit(op=op, median_s=round(statistics.median(r[0] for r in runs), 3),
             bytes_received=int(statistics.median(r[1] for r in runs)), runs=len(runs), corpus=a.corpus,
             group_size=n, app=a.label)
    emit(op="streamlit_peak_rss", mb=round(peak, 1), corpus=a.corpus, app=a.label)


def cold_scatter(a, folder: Path) -> None:
    """A group is built on one server (keyword hits included, one excluded: the page's draft keeps it);
    the store is dropped from the page cache; a second server starts, the group is restored from its
    draft on Annotate, and the Scatter link is clicked."""
    from bench.open_cold import _drop

    served = {"app_root": a.app.resolve()} if a.app else {}
    for rep in range(a.repeat):
        with browser_page() as page:  # one browser for both servers: its draft is offered to it (a cookie)
            with streamlit_server(paths.data_root(), **served) as (url, _proc):
                page.goto(f"{url}/Annotate?corpus={a.corpus}")
                box = page.get_by_label("Keyword or regular expression")
                box.wait_for(timeout=300_000)
                wait_idle(page)  # typed into a page still running, the Enter is lost
                box.fill(a.query)
                toggles = page.locator("[class*='st-key-tog_'] button:visible")
                for _ in range(3):  # the first search of a freshly opened 10M corpus may hit the deadline
                    box.press("Enter")
                    wait_idle(page)
                    stopped = page.get_by_text("took longer than")
                    if toggles.count() > rep or not stopped.count():
                        break
                    emit(op="keyword_retried", text=stopped.first.inner_text()[:200])
                try:
                    toggles.nth(rep).wait_for(timeout=60_000)
                except Exception:
                    page.screenshot(path=str(folder / "failed.png"))
                    raise
                wait_idle(page)
                page.locator("[class*='st-key-tog_'] button:visible").nth(rep).click()
                wait_idle(page)
                page.wait_for_timeout(2000)  # the draft is saved with every change
            _drop(a.corpus)  # no server maps the store now: none of its pages stays in the cache
            with streamlit_server(paths.data_root(), **served) as (url, _proc):
                page.goto(f"{url}/Annotate?corpus={a.corpus}")
                page.locator(".st-key-draft_restore button").click(timeout=300_000)
                wait_idle(page)
                t = time.perf_counter()
                page.get_by_role("link", name="Scatter").click()
                first = page.get_by_text("A first look from")
                # the preview's own drawn axes, not any chart on the page
                first_drawn = page.locator("[class*='st-key-scatter_preview'] .nsewdrag")
                full = page.locator("[class*='st-key-scatter'] .nsewdrag")
                shown_first = None
                while time.perf_counter() - t < 300:
                    if shown_first is None and first.count() and first_drawn.count():
                        shown_first = time.perf_counter() - t
                        page.screenshot(path=str(folder / f"scatter-first-look-{rep}.png"))
                    if full.count() and not first.count():
                        break
                    page.wait_for_timeout(50)
                shown_full = time.perf_counter() - t
                wait_idle(page)
                page.screenshot(path=str(folder / f"scatter-full-{rep}.png"))
                emit(op="scatter_cold", rep=rep, first_look_s=None if shown_first is None else round(shown_first, 2),
                     full_s=round(shown_full, 2), corpus=a.corpus, app=a.label)


if __name__ == "__main__":
    main()
