"""Real-browser tests: Playwright driving Debian's chromium against `streamlit run`.

Only what a browser alone shows: the first hour's walk through every page (demo import to a
cluster's group and back), rendering of hostile texts and names, and Plotly selection events.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from urllib.parse import urlparse

import numpy as np
import pandas as pd
import pytest

from tests.browser import browser_page, metrics, require_browser, streamlit_server, untick_row, wait_idle
from tests.conftest import import_newest_first, xlsx_cells

pytestmark = pytest.mark.slow  # a real server and chromium


@pytest.fixture
def server(tmp_path, tweets_root):
    require_browser()
    root = tmp_path / "d"
    shutil.copytree(tweets_root / "tweets", root / "tweets")
    with streamlit_server(root) as (url, _proc):
        yield url, root


def button(page, key: str):
    """A Streamlit button by its widget key (labels carry keyboard-shortcut hints; a button with
    help text is drawn twice, one copy hidden)."""
    return page.locator(f".st-key-{key} button:visible").first


def open_annotate(page, url, corpus="tweets"):
    page.goto(f"{url}/Annotate?corpus={corpus}")
    page.get_by_label("Keyword or regular expression").wait_for()


def keyword_search(page, text, all_hits=False):
    if all_hits:  # by default one page of hits comes in; 0 = all at once
        page.get_by_label("Add at most (0 = all)", exact=True).and_(page.locator("input")).fill("0")
    box = page.get_by_label("Keyword or regular expression")
    box.fill(text)
    box.press("Enter")
    page.get_by_text("KW:").first.wait_for()
    wait_idle(page)


def choose_saved_group(page, option: str | None = None):
    """Pick a group in the sidebar's 'Open a saved group' (opening the expander if it is closed)."""
    box = page.get_by_role("combobox", name="Group", exact=True)
    if not box.is_visible():
        page.get_by_text("Open a saved group").click()
    box.click()
    (page.get_by_role("option", name=option) if option else page.get_by_role("option").first).click()
    wait_idle(page)


def wait_counts(page, included, excluded):
    """Wait until the Included/Excluded counters show these numbers (they render after the page's
    first widgets)."""
    page.wait_for_function("c => { const m = [...document.querySelectorAll('[data-testid=stMetricValue]')]"
                           ".map(e => e.innerText); return m[0] === c[0] && m[1] === c[1]; }",
                           arg=[str(included), str(excluded)])
    wait_idle(page)
    return metrics(page)[:2]


def click_and_wait(page, key: str, text: str):
    button(page, key).click()
    page.get_by_text(text).first.wait_for()
    wait_idle(page)


def lasso_all(page):
    """Draw a lasso around the whole scatter; returns the number of selected points."""
    chart = page.locator('[data-testid="stPlotlyChart"]')
    chart.wait_for()
    page.locator(".plotly .nsewdrag").first.wait_for()
    wait_idle(page)
    page.wait_for_timeout(1500)  # WebGL draws after the DOM is ready
    box = page.locator(".plotly .nsewdrag").first.bounding_box()
    x0, y0, w, h = box["x"], box["y"], box["width"], box["height"]
    path = [(0.02, 0.02), (0.98, 0.02), (0.98, 0.98), (0.02, 0.98), (0.02, 0.03)]
    page.mouse.move(x0 + w * path[0][0], y0 + h * path[0][1])
    page.mouse.down()
    for fx, fy in path[1:]:
        page.mouse.move(x0 + w * fx, y0 + h * fy, steps=8)
    page.mouse.up()
    page.wait_for_function("() => [...document.querySelectorAll('button')].some("
                           "b => /Include selected \\([1-9]/.test(b.innerText))")
    return int(button(page, "sc_inc").inner_text().split("(")[1].split(")")[0].replace(",", ""))


def test_first_hour_walk_in_browser(tmp_path):
    """Demo import, keyword search, exclude, COS, Suggest, lasso include that leaves excluded texts
    excluded, save, reload (the draft comes back), new group, open the saved group with its notes,
    start a group from a cluster and undo back to the group before."""
    require_browser()
    root = tmp_path / "empty"
    root.mkdir()
    with streamlit_server(root) as (url, _proc), browser_page() as page:
        page.goto(url)
        button(page, "demo_go").click()
        page.get_by_text("Imported 2,400 texts into corpus").wait_for(timeout=300_000)
        wait_idle(page)
        open_annotate(page, url, "demo")
        keyword_search(page, "flood")
        assert metrics(page)[:2] == ["10", "0"], "a keyword brings one page of hits by default"
        click_and_wait(page, "btn_kw_more", "(10 already labelled)")  # More hits: the next page
        n = int(metrics(page)[0])
        assert n == 20 and metrics(page)[1] == "0"
        untick_row(page, 0, 1)
        untick_row(page, 1, 2)
        click_and_wait(page, "btn_cos", "COS: 10 new texts")
        click_and_wait(page, "btn_suggest", "Suggest (chose words+embedding): 10 new texts")
        assert metrics(page)[:2] == [str(n - 2 + 20), "2"]

        page.get_by_role("link", name="Scatter").click()  # the same browser session: the group comes along
        assert lasso_all(page) > 2000
        button(page, "sc_inc").click()
        page.get_by_text("2 excluded by you left as they were").wait_for()
        wait_idle(page)
        assert metrics(page)[1] == "2", "a lasso include must not overturn what a person excluded"
        included = int(metrics(page)[0])
        assert included > 2000

        page.get_by_role("link", name="Annotate").click()
        page.get_by_label("Group name").wait_for()
        page.get_by_label("Group name").fill("floods")
        page.get_by_label("Notes").fill("rain and rivers")
        page.get_by_label("Notes").press("Tab")
        wait_idle(page)
        click_and_wait(page, "save_btn", "Saved group ‘floods’ (version 1)")

        page.reload()  # the group being built comes back from its draft
        page.get_by_label("Keyword or regular expression").wait_for()
        assert wait_counts(page, included, 2) == [str(included), "2"]
        assert page.get_by_label("Group name").input_value() == "floods"

        click_and_wait(page, "new_btn", "Started a new, empty group")
        assert metrics(page)[:2] == ["0", "0"] and page.get_by_label("Group name").input_value() == ""
        choose_saved_group(page, "floods")
        click_and_wait(page, "open_btn", "Opened ‘floods’ version 1")
        assert metrics(page)[:2] == [str(included), "2"]
        assert page.get_by_label("Notes").input_value() == "rain and rivers"

        # F5 on any page keeps the group being built: every page's URL names the tab's draft
        for name in ("Timeline", "Scatter", "Groups", "DAC", "Home"):
            page.get_by_role("link", name=name, exact=True).click()
            page.wait_for_url("**draft=**")
            wait_idle(page)
            page.reload()
            page.get_by_role("link", name="Annotate", exact=True).wait_for()
            wait_idle(page)
            page.get_by_role("link", name="Annotate", exact=True).click()
            page.get_by_label("Keyword or regular expression").wait_for()  # Annotate's own counters, not the last page's
            wait_idle(page)
            assert wait_counts(page, included, 2) == [str(included), "2"], f"after a reload on {name}"

        # a clustering, then start a group from its first cluster, and undo back to 'floods'
        import os

        from precompute import kmeans as km_job

        os.environ["SEMANNO_DATA"] = str(root)
        try:
            assert km_job.main(["--corpus", "demo", "--k", "16"]) == 0
        finally:
            del os.environ["SEMANNO_DATA"]
        page.get_by_role("link", name="Topics").click()
        page.locator('[data-testid="stDataFrame"]').last.wait_for()
        page.reload()  # issue 26: after a reload here, Start then Undo gave an empty group
        grid = page.locator('[data-testid="stDataFrame"]').last
        grid.wait_for()
        wait_idle(page)
        from playwright.sync_api import TimeoutError as PlaywrightTimeout

        for attempt in range(3):  # the grid can still move while charts above it render: re-measure
            grid.scroll_into_view_if_needed()
            page.wait_for_timeout(500)
            gb = grid.bounding_box()
            page.mouse.click(gb["x"] + 12, gb["y"] + 35 + 17)  # the first row's selection box
            try:
                page.locator(".st-key-tp_start button:visible").first.wait_for(timeout=15_000)
                break
            except PlaywrightTimeout:
                if attempt == 2:
                    raise
        button(page, "tp_start").click()
        page.get_by_text("Started a group from cluster").wait_for()
        wait_idle(page)
        assert metrics(page)[1] == "0"
        button(page, "undo").click()
        page.get_by_text("Undid: back to the group you were building before").wait_for()
        wait_idle(page)
        assert metrics(page)[:2] == [str(included), "2"]
        assert page.get_by_label("Group name").input_value() == "floods"

        # a corpus imported elsewhere (the command line) shows in the open page's picker by itself
        from core.corpus import ImportSpec, import_corpus
        from testbed.common import FakeModel

        src = tmp_path / "later.csv"
        src.write_text("id,text\n1,apple pie\n2,pear tart\n3,plum jam\n")
        import_corpus(ImportSpec(input=src, name="later"), root=root, model_loader=lambda n, d: FakeModel(8))
        page.wait_for_function("() => [...document.querySelectorAll('[data-testid=stSelectbox]')]"
                               ".some(e => e.innerText.includes('Corpus'))")
        for _ in range(8):  # the page looks every 10 s
            page.wait_for_timeout(5_000)
            page.get_by_role("combobox", name="Corpus").click()
            offered = page.get_by_role("option").all_inner_texts()
            page.keyboard.press("Escape")
            if "later" in offered:
                break
        assert "later" in offered, offered


HOSTILE_TEXTS = ["<img src=x onerror=alert(1)> flood", "<script>alert(1)</script> flood",
                 "[phish](https://evil.example/login) flood", "![pix](https://evil.example/url.png) flood",
                 ":red[alarm] flood", "<a href='https://example.com/phish'>x</a> flood"]


@pytest.fixture
def hostile(tmp_path):
    """A corpus whose texts, authors and ids hold HTML and Markdown payloads; a saved group with a
    phishing name."""
    from core.corpus import ImportSpec, import_corpus
    from core.store import GroupStore

    require_browser()
    from testbed.common import FakeModel

    payloads = HOSTILE_TEXTS
    frame = pd.DataFrame({
        "id": [f"<img src=x onerror=alert({i})>" if i % 2 else f"id{i}" for i in range(60)],
        "text": [payloads[i % len(payloads)] for i in range(60)],
        "date": pd.date_range("2021-01-01", periods=60, freq="D").strftime("%Y-%m-%d"),
        "author": ['<a href="https://example.com/phish">x</a>', "[a](https://evil.example/a)", "ok"] * 20,
        "conversation_id": [f"c{i // 3}" for i in range(60)]})  # threads of three: shown under a text on Annotate
    root = tmp_path / "h"
    src = tmp_path / "hostile.csv"
    frame.to_csv(src, index=False)
    c = import_corpus(ImportSpec(input=src, name="h"), root=root, model_loader=lambda n, d: FakeModel(16))
    name = "[save-phish](https://evil.example/save) ![pix](https://evil.example/url.png) :red[x]"
    GroupStore(root / "h" / "groups.sqlite").save(name, c.frame["id"][:5].tolist(), [])
    from core.cluster.dac import stages
    from core.cluster.dac import store as models
    from core.cluster.dac.model import Config

    tiny = stages.fit_stage(c.embeddings, "pretrain", config=Config(dim=16, hidden=16, inducing=4, n1=1, n2=1),
                            bag=60, epochs=1, steps=2, batch=2)
    models.save(c, "tiny", tiny)
    with streamlit_server(root) as (url, _proc):
        yield url, name


def assert_inert(page, dialogs, requests):
    page.wait_for_timeout(800)
    assert dialogs == [], "no script from the corpus may run"
    planted = [r for r in requests if (urlparse(r).hostname or "").endswith(("evil.example", "example.com"))]
    assert planted == [], "no request to a planted URL"
    links = page.locator("a[href*='evil.example'], a[href*='example.com']")
    assert links.count() == 0, ["no planted link", links.first.evaluate("e => e.parentElement.outerHTML")]
    assert page.locator('img[src="x"]').count() == 0
    assert page.evaluate("() => [...document.scripts].some(s => s.text.includes('alert('))") is False
    red = page.evaluate("() => [...document.querySelectorAll('span')].filter(s => s.innerText.includes('alarm')"
                        " && getComputedStyle(s).color === 'rgb(255, 43, 43)').length")
    assert red == 0, "no styling from a planted :red[...]"


def test_hostile_texts_names_and_urls_stay_inert(hostile):
    url, name = hostile
    with browser_page() as page:
        dialogs, requests = [], []
        page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
        page.on("request", lambda r: requests.append(r.url))
        # a corpus name from the URL
        page.goto(f"{url}/?corpus=[phish-url](https://evil.example/login)")
        page.get_by_text("There is no corpus named").wait_for()
        assert_inert(page, dialogs, requests)
        # texts and ids on Annotate, with the phishing group opened and saved again
        open_annotate(page, url, "h")
        keyword_search(page, "flood", all_hits=True)
        page.get_by_text("<img src=x onerror=alert(1)> flood", exact=True).first.wait_for()
        page.get_by_text("[phish](https://evil.example/login) flood", exact=True).first.wait_for()
        # a reply names the text its thread opens with, a payload too
        assert page.get_by_text("↳ In the thread of: “", exact=False).count() >= 1
        assert_inert(page, dialogs, requests)
        # a text's conversation opened under it: its thread's texts, authors and ids shown as text too
        page.locator("[class*='st-key-conv_'] button").first.click()
        page.get_by_text("This text", exact=True).first.wait_for()
        wait_idle(page)
        assert page.locator("[class*='st-key-conv_tog_']").count() == 3
        assert_inert(page, dialogs, requests)
        page.locator("[class*='st-key-conv_'] button").first.click()  # and closed again
        page.get_by_text("This text", exact=True).wait_for(state="detached")
        # a filter echoes its query above the list; a page action through it names it under each text
        for query in ("<img src=x onerror=alert(1)>", "[phish](https://evil.example/login)"):
            page.locator(".st-key-ann_filter input").fill(query)
            page.keyboard.press("Enter")
            # each payload is ten rows' text: listed once, its nine copies labelled with it
            page.get_by_text("1 of the 6 texts of the last search hold it").wait_for()
            click_and_wait(page, "bulk_exc", "10 texts excluded (9 of them copies of the others")
            page.get_by_text(f"by a page filtered by ‘{query}’").first.wait_for()
            assert_inert(page, dialogs, requests)
        page.locator(".st-key-ann_filter input").fill("")
        page.keyboard.press("Enter")
        wait_idle(page)
        # the group's name on the Groups page (table, delete confirmation), opened, saved again
        page.get_by_role("link", name="Groups").click()
        page.get_by_text("Yes, delete").wait_for()
        wait_idle(page)
        assert_inert(page, dialogs, requests)
        # the saved group downloaded for Excel: ids and texts arrive as they were, none as a formula or link
        page.get_by_role("combobox", name="Export format", exact=True).click()
        page.get_by_role("option", name="Excel (.xlsx)").click()
        wait_idle(page)
        with page.expect_download() as download:
            button(page, "gr_export").click()
        assert download.value.suggested_filename.endswith(".xlsx")
        cells = xlsx_cells(Path(download.value.path()).read_bytes())
        assert [cells[f"A{r}"][1] for r in range(2, 7)] == [f"id{i}" if i % 2 == 0 else f"<img src=x onerror=alert({i})>"
                                                            for i in range(5)]
        assert [cells[f"B{r}"] for r in range(2, 7)] == [("text", HOSTILE_TEXTS[i]) for i in range(5)]
        button(page, "gr_open").click()
        page.get_by_text("Opened ‘[save-phish]").wait_for()
        wait_idle(page)
        click_and_wait(page, "save_btn", "tick 'Overwrite'")  # the name in the 'exists' warning
        assert_inert(page, dialogs, requests)
        # authors in the timeline's legend
        page.get_by_role("link", name="Timeline").click()
        page.locator('[data-testid="stPlotlyChart"]').wait_for()
        wait_idle(page)
        page.wait_for_timeout(1000)
        assert_inert(page, dialogs, requests)
        # texts in the DAC page's table and bag plot (a random anchor: the bag is all 60)
        page.get_by_role("link", name="DAC", exact=True).click()
        page.get_by_text("Pick a model to see").wait_for()  # nothing is loaded before the user picks it
        page.get_by_role("combobox", name="Model", exact=True).click()
        page.get_by_role("option", name="tiny").click()
        page.get_by_text("Predicted members").wait_for()
        wait_idle(page)
        page.locator('[data-testid="stPlotlyChart"]').last.wait_for()
        page.wait_for_timeout(1000)
        assert_inert(page, dialogs, requests)


def test_a_model_trained_on_the_dac_page_is_the_one_it_shows(hostile):
    """"It is picked below", the page says after training; with a model already listed and none picked it
    was not, after a training of the form's default size (3 epochs of 30 steps; one of 5 steps kept it): the
    name was put under the picker's own key in a run that drew no picker, and the browser's next run lost it.
    Only a browser shows this (AppTest kept the name). The page now takes the name from a key of its own."""
    url, _ = hostile
    with browser_page() as page:
        page.goto(f"{url}/DAC?corpus=h")
        page.get_by_text("Pick a model to see").wait_for()  # a model is listed, none picked yet
        wait_idle(page)
        page.get_by_text("Train a small model here").click()
        page.get_by_label("Save as").fill("fresh")  # the form's default size: 3 epochs of 30 steps
        page.get_by_role("button", name="Train").click()
        page.get_by_text("Trained ‘fresh’").wait_for(timeout=120_000)
        wait_idle(page)
        assert page.get_by_role("combobox", name="Model", exact=True).input_value() == "fresh"
        page.get_by_text("Predicted members (").wait_for()


def test_scatter_as_a_density_image_selects_every_text_inside_the_lasso(tmp_path, tweets_root):
    """The large-corpus form (issue 29), forced on 2,000 texts: the unlabelled texts are an image with
    only 50 of them drawn as points, and a lasso round the whole chart still selects all of them."""
    require_browser()
    root = tmp_path / "d"
    shutil.copytree(tweets_root / "tweets", root / "tweets")
    env = {"SEMANNO_SCATTER_RASTER_FROM": "100", "SEMANNO_SCATTER_HOVER_SAMPLE": "50"}
    with streamlit_server(root, env) as (url, _proc), browser_page() as page:
        open_annotate(page, url)
        keyword_search(page, "ockovani")
        untick_row(page, 0, 1)
        page.get_by_role("link", name="Scatter").click()
        page.get_by_text("as a density").wait_for()
        chart = page.locator('[data-testid="stPlotlyChart"]')
        counts = colour_counts(chart.screenshot())
        assert counts["yellow"] > 200 and counts["green"] > 20, counts
        assert lasso_all(page) == 2000


def test_scatter_draws_and_excludes_by_lasso(server):
    url, _ = server
    with browser_page() as page:
        open_annotate(page, url)
        keyword_search(page, "ockovani")
        untick_row(page, 0, 1)
        before = metrics(page)[:2]
        page.get_by_role("link", name="Scatter").click()
        chart = page.locator('[data-testid="stPlotlyChart"]')
        chart.wait_for()
        page.locator(".plotly .nsewdrag").first.wait_for()
        wait_idle(page)
        page.wait_for_timeout(1500)  # WebGL draws after the DOM is ready
        counts = colour_counts(chart.screenshot())
        n_sel = lasso_all(page)
        assert all(v > 20 for v in counts.values()), f"blank or missing colours: {counts}"
        assert n_sel > 100
        button(page, "sc_exc").click()
        page.wait_for_function(f"() => [...document.querySelectorAll('[data-testid=stMetricValue]')]"
                               f".map(e => e.innerText)[1] !== '{before[1]}'")
        wait_idle(page)
        after = metrics(page)[:2]
        assert int(after[1]) > int(before[1]), (before, after)
        for key, want in (("sc_undo", before[1]), ("sc_redo", after[1])):  # the lasso's step undone, then redone
            button(page, key).click()
            page.wait_for_function("n => [...document.querySelectorAll('[data-testid=stMetricValue]')]"
                                   ".map(e => e.innerText)[1] === n", arg=want, timeout=30_000)
            wait_idle(page)


def colour_counts(png: bytes) -> dict[str, int]:
    import io

    from PIL import Image

    a = np.asarray(Image.open(io.BytesIO(png)).convert("RGB")).astype(int)
    r, g, b = a[..., 0], a[..., 1], a[..., 2]
    return {"green": int(((g > 120) & (r < 120) & (b < 120)).sum()),
            "red": int(((r > 170) & (g < 110) & (b < 110)).sum()),
            "yellow": int(((r > 200) & (g > 150) & (b < 140)).sum())}


def test_the_annotators_loop_runs_from_the_keyboard(server):
    """The shortcuts the README promises, pressed as a person would: Enter for the keyword (focus still in its
    box for More hits), then Alt+K, Alt+1 (COS), Alt+S (Suggest), Alt+Z (Undo), Alt+Y (Redo), and Enter then
    Ctrl+S (Save) in the group name's box."""
    url, _ = server
    with browser_page() as page:
        open_annotate(page, url)
        keyword_search(page, "ockovani")
        assert metrics(page)[0] == "10"

        def press(keys: str, included: int, text: str) -> None:
            page.keyboard.press(keys)
            page.wait_for_function("n => [...document.querySelectorAll('[data-testid=stMetricValue]')]"
                                   ".map(e => e.innerText)[0] === String(n)", arg=included, timeout=30_000)
            page.get_by_text(text).first.wait_for()
            wait_idle(page)

        press("Alt+k", 20, "(10 already labelled")  # the keyword's next page, from inside the keyword box
        page.keyboard.press("Tab")  # out of the box: the shortcuts work anywhere on the page
        press("Alt+1", 30, "COS: 10 new texts")
        press("Alt+s", 40, "10 new texts")
        press("Alt+z", 30, "Undid")
        press("Alt+y", 40, "Redid: Suggest (10 texts)")
        name = page.locator(".st-key-save_name input")
        name.fill("keyboard")
        name.press("Control+s")  # before the box's Enter, Streamlit has not taken the name yet: the page says so
        page.get_by_text("type it in Group name, press Enter (or Tab), then Save").wait_for(timeout=30_000)
        wait_idle(page)
        name.press("Enter")
        wait_idle(page)
        page.keyboard.press("Control+s")
        page.get_by_text("Saved group ‘keyboard’ (version 1)").wait_for(timeout=30_000)


CUT_SHORT = """keys => keys.flatMap(k => [...document.querySelectorAll(`[class*="st-key-${k}"]`)].flatMap(root =>
    [...root.querySelectorAll('*')].filter(e => getComputedStyle(e).textOverflow === 'ellipsis'
                                                && e.scrollWidth > e.clientWidth + 1
                                                && e.getBoundingClientRect().right > 0)  // not in a folded sidebar
    .map(e => `${k}: ${e.innerText}`)))"""


@pytest.mark.parametrize("width", [900, 400], ids=["half-a-laptop", "a-phone"])
def test_a_narrow_window_keeps_every_name_on_the_annotate_page_whole(server, width):
    """Half of a laptop's screen beside the guidelines (900 px, sidebar open): in columns the search buttons had
    shrunk to their shortcuts alone ("Alt + 1"), the options to "Regu…", each text's toggle to "Incl…". Rows that
    wrap keep them whole; so on a phone (400 px, the sidebar folded away)."""
    url, _ = server
    with browser_page(viewport=(width, 900)) as page:
        open_annotate(page, url)
        keyword_search(page, "ockovani")
        keys = ["kw_regex", "kw_case", "kw_diacritics", "kw_forms", "btn_cos", "btn_lda", "btn_nn1", "btn_nn2",
                "btn_suggest", "btn_kw_more", "bulk_inc", "bulk_exc", "bulk_overturn", "ann_filter_regex", "tog_",
                "undo", "redo"]
        assert page.locator('[class*="st-key-tog_"] button:visible').count() == 10
        assert page.evaluate(CUT_SHORT, keys) == []
        assert button(page, "btn_suggest").inner_text().startswith("Suggest")
        if width < 640:  # a phone: the sidebar opens over the page, with Undo and Redo whole
            page.locator("[data-testid=stExpandSidebarButton]").click()
            button(page, "undo").wait_for(state="visible")
            assert page.evaluate(CUT_SHORT, ["undo", "redo"]) == []


def test_a_czech_excel_export_uploads_through_the_home_page(tmp_path):
    """What Excel on a Czech Windows saves as "CSV": Windows-1250, semicolons, dates day first. The
    upload names the encoding and the fix; the same file in UTF-8, gzipped, imports with its dates."""
    require_browser()
    import gzip

    root = tmp_path / "empty"
    root.mkdir()
    rows = ["id;text;date;author"] + [
        f"{i};Příliš žluťoučký kůň úpěl ďábelské ódy, díl {i};{i % 28 + 1}.{i % 12 + 1}.2021 10:{i % 60:02d};"
        f"autor{i % 3}" for i in range(1, 41)]
    text = "\n".join(rows) + "\n"
    (tmp_path / "export.csv").write_bytes(text.encode("cp1250"))
    (tmp_path / "export-utf8.csv.gz").write_bytes(gzip.compress(text.encode("utf-8")))
    pd.DataFrame([r.split(";") for r in rows[1:]], columns=["ID", "Obsah", "Datum", "Autor"]).to_excel(
        tmp_path / "export.xlsx", index=False, engine="xlsxwriter")
    with streamlit_server(root) as (url, _proc), browser_page() as page:
        page.goto(url)
        uploader = page.locator("[data-testid='stFileUploaderDropzoneInput']")
        uploader.set_input_files(str(tmp_path / "export.csv"))
        page.locator("[data-testid='stFileChipName']").filter(has_text="export.csv").wait_for()
        wait_idle(page)
        button(page, "imp_go").click()
        error = page.locator("[data-testid='stAlertContentError']")
        error.wait_for(timeout=60_000)
        assert "export.csv: not valid UTF-8" in error.inner_text() and "Windows-1250" in error.inner_text()
        assert "iconv -f cp1250 -t utf-8" in error.inner_text()

        # the same table saved as a workbook with Czech headings: the form offers its columns, each role guessed
        uploader.set_input_files(str(tmp_path / "export.xlsx"))
        page.locator("[data-testid='stFileChipName']").filter(has_text="export.xlsx").wait_for()
        wait_idle(page)
        for role, heading in (("id", "ID"), ("text", "Obsah"), ("date", "Datum"), ("author", "Autor")):
            assert page.locator(f"[class*='st-key-imp_{role}_'] input").input_value() == heading

        uploader.set_input_files(str(tmp_path / "export-utf8.csv.gz"))
        page.locator("[data-testid='stFileChipName']").filter(has_text="export-utf8.csv.gz").wait_for()
        wait_idle(page)
        button(page, "imp_go").click()
        page.get_by_text("Imported 40 texts into corpus").wait_for(timeout=300_000)
        wait_idle(page)
        # the new corpus's summary is drawn on the run after the message (seen once empty in CI)
        page.locator('[data-testid="stMetricValue"]').first.wait_for(timeout=60_000)
        wait_idle(page)
        assert metrics(page)[-2:] == ["2021-01-09", "2021-12-24"], "9.1.2021 is 9 January, not 1 September"
    frame = pd.read_parquet(next((root / "export-utf8").glob("gen-*/corpus.parquet")), columns=["id", "date", "author"])
    row = frame.set_index("id").loc["36"]
    assert row["date"] == pd.Timestamp("2021-01-09 10:36") and row["author"] == "autor0"


def test_the_adjudicators_decision_made_in_the_table_survives_a_reload(tmp_path, tweets_root):
    """Through a real browser and the signing-in proxy: the adjudicator decides a disagreement from the keyboard
    (a click on the row, the arrow to the gold cell, Enter, a few letters, Enter); the decision is in the store
    at once, and after a reload the table opens with it and the save button counts it."""
    from core.corpus import load_corpus
    from core.store import GroupStore
    from testbed.proxy import running
    from tests.browser import free_port

    require_browser()
    root = tmp_path / "d"
    shutil.copytree(tweets_root / "tweets", root / "tweets")
    ids = load_corpus("tweets", root=root).frame["id"].tolist()[:6]
    store = GroupStore(root / "tweets" / "groups.sqlite")
    store.create_topic("floods", "", "lead", blind=False)
    for who, inc, exc in (("alice", ids[:4], ids[4:]), ("bob", ids[2:], ids[:2])):
        store.save(store.assign("floods", who), inc, exc, annotator=who, topic="floods")
        store.submit("floods", who)
    secret = "review-secret-0123456789"
    env = {"SEMANNO_PROXY_USER_HEADER": "X-Remote-User", "SEMANNO_PROXY_SECRET": secret}
    with streamlit_server(root, extra_env=env) as (url, _proc), browser_page() as page, \
            running(url, free_port(), "lead", secret) as proxied:
        page.goto(f"{proxied}/Review?corpus=tweets")
        save = page.locator(".st-key-rv_save button:visible").first
        save.wait_for(timeout=90_000)
        assert "(0 of 4 decided)" in save.inner_text()
        wait_idle(page)
        box = page.locator("[class*='st-key-rv_gold_'] [data-testid='stDataFrame']").first.bounding_box()
        page.mouse.click(box["x"] + 20, box["y"] + 53)  # the first disagreement's text
        page.keyboard.press("ArrowRight")  # its gold cell
        page.keyboard.press("Enter")  # opens the cell's list
        page.get_by_role("option", name="excluded").wait_for(timeout=10_000)
        page.keyboard.type("excl")
        page.keyboard.press("Enter")
        page.get_by_text("(1 of 4 decided)").wait_for(timeout=30_000)
        assert {i: d for i, (d, _, _) in store.decisions("floods").items()} == {ids[0]: -1}
        page.reload()
        page.get_by_text("(1 of 4 decided)").wait_for(timeout=90_000)


def test_a_browser_test_that_fails_tells_what_the_page_showed(capsys):
    """A CI run's browser test failed with only "Timeout 90000ms exceeded" waiting for the Review page's save
    button; the page itself held the ImportError that explained it. A failure inside ``browser_page`` now prints
    the page's text with it."""
    require_browser()
    with pytest.raises(TimeoutError):
        with browser_page() as page:
            page.set_content("<h1>Review</h1><p>ImportError: cannot import name 'clone'</p>")
            raise TimeoutError("the save button never came")
    err = capsys.readouterr().err
    assert "the page at" in err and "ImportError: cannot import name 'clone'" in err


def test_wait_idle_waits_for_the_run_a_click_starts(tmp_path):
    """Every browser test and bench/browser.py waits with ``wait_idle`` for the page's run to end. It used to
    wait for the 'Running…' status widget to go, which this app's minimal toolbar never draws: it returned at
    once, mid-run. On a page whose button sleeps 3 s, it now returns only once the run has drawn its result."""
    import time

    require_browser()
    app = tmp_path / "app"
    app.mkdir()
    (app / "streamlit_app.py").write_text(
        "import time\nimport streamlit as st\n"
        "if st.button('Work', key='work'):\n    time.sleep(3)\n    st.write('done working')\n")
    shutil.copytree(Path(__file__).resolve().parents[1] / ".streamlit", app / ".streamlit")  # the app's own toolbar
    (tmp_path / "d").mkdir()
    with streamlit_server(tmp_path / "d", app_root=app) as (url, _proc), browser_page() as page:
        page.goto(url)
        page.locator(".st-key-work button").wait_for()
        wait_idle(page)
        started = time.monotonic()
        page.locator(".st-key-work button").click()
        wait_idle(page)
        assert time.monotonic() - started > 2.5 and page.get_by_text("done working").count() == 1


def test_a_page_that_stops_still_lists_the_pages(tmp_path, tweets_root):
    """A page that cannot go on (no corpus yet; the groups' database unreachable) stopped before the sidebar's
    page links were drawn (after a stop Streamlit draws nothing more): a user who opened Annotate before importing
    was left with no way back but the address bar. Now the links come first, and Annotate links to the import."""
    require_browser()
    empty = tmp_path / "empty"
    empty.mkdir()
    with streamlit_server(empty) as (url, _proc), browser_page() as page:
        page.goto(f"{url}/Annotate")
        page.get_by_text("No corpus yet").wait_for(timeout=90_000)
        wait_idle(page)
        sidebar = page.locator("[data-testid='stSidebar']")
        assert sidebar.locator("[data-testid='stPageLink']").count() == 9, "every page, Home first"
        page.locator("[data-testid='stMain'] [data-testid='stPageLink']").get_by_text("Import a corpus").click()
        page.get_by_text("There is no corpus yet").wait_for(timeout=60_000)
    root = tmp_path / "d"
    shutil.copytree(tweets_root / "tweets", root / "tweets")
    down = {"SEMANNO_DB": "postgresql://semanno@127.0.0.1:1/none"}  # nobody answers there
    with streamlit_server(root, extra_env=down) as (url, _proc), browser_page() as page:
        for where in ("Annotate?corpus=tweets", "?corpus=tweets"):  # a page, and the home page
            page.goto(f"{url}/{where}")
            page.get_by_text("The groups' database cannot be used").wait_for(timeout=90_000)
            wait_idle(page)
            assert page.locator("[data-testid='stSidebar'] [data-testid='stPageLink']").count() == 9, where


def test_a_click_after_a_new_import_takes_the_group_onto_it_without_a_reload(server):
    """A tab left open while its corpus was imported again (newest first): a click in the results reruns only that
    part of the page, which had kept the earlier import and showed it until a reload. Now that click takes the page
    onto the new import at once, the group rebuilt by its texts' ids, the click's own change in it."""
    url, root = server
    with browser_page() as page:
        open_annotate(page, url)
        keyword_search(page, "ockovani")
        assert metrics(page)[:2] == ["10", "0"]
        import_newest_first(root)
        toggles = page.locator('[class*="st-key-tog_"] button:visible')
        row = 'xpath=ancestor::*[contains(@class, "st-key-tog_")]/..'  # a toggle's row: the button, text, caption
        first = [line for line in toggles.first.locator(row).inner_text().splitlines() if line][1]  # its text
        toggles.first.click()
        page.get_by_text("rebuilt by its texts' ids").first.wait_for(timeout=60_000)
        wait_idle(page)
        assert metrics(page)[:2] == ["9", "1"]
        assert page.get_by_role("radio", name="Included").is_checked(), "the group itself is shown"
        page.locator("[data-testid=stRadioGroup]").get_by_text("Excluded", exact=True).click()
        wait_idle(page)
        shown = page.locator('[class*="st-key-tog_"] button:visible')
        assert shown.count() == 1
        excluded = [line for line in shown.first.locator(row).inner_text().splitlines() if line][1]
        assert excluded[:60] == first[:60], "the text clicked is the one excluded"  # (links shown unlinked here)


def test_a_page_that_sends_you_to_annotate_links_there_keeping_the_group(server):
    """Timeline (no included text yet) and Groups (none saved) said "search on the Annotate page" without a
    way there but the sidebar: each now links to it, keeping the corpus and the group being built."""
    url, _root = server
    with browser_page() as page:
        page.goto(f"{url}/Timeline?corpus=tweets")
        body = page.locator("[data-testid='stMain'] [data-testid='stPageLink']")
        body.get_by_text("Search on the Annotate page").click()
        page.get_by_label("Keyword or regular expression").wait_for(timeout=60_000)
        keyword_search(page, "ockovani")
        counts = metrics(page)[:2]
        assert counts[0] != "0"
        page.get_by_role("link", name="Groups", exact=True).click()
        page.get_by_text("No saved groups yet").wait_for(timeout=60_000)
        body.get_by_text("Build a group on the Annotate page").click()
        page.wait_for_url("**/Annotate?**draft=**")
        page.get_by_label("Keyword or regular expression").wait_for(timeout=60_000)
        wait_idle(page)
        assert metrics(page)[:2] == counts, "the group being built came along"
