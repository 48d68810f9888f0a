"""Real-browser tests: Playwright driving Debian's chromium against `streamlit run`."""

from __future__ import annotations

import shutil

import pytest

from tests.browser import browser_page, metrics, require_browser, streamlit_server, wait_idle


@pytest.fixture
def server(tmp_path, tweets_root):
    require_browser()
    root = tmp_path / "d"
    shutil.copytree(tweets_root / "tweets", root / "tweets")
    with streamlit_server(root) as (url, _proc):
        yield url, root


def keyword_search(page, text):
    box = page.get_by_label("Keyword or regular expression")
    box.fill(text)
    box.press("Enter")
    page.get_by_text("KW:").first.wait_for()
    wait_idle(page)


def test_annotation_workflow_in_browser(server):
    url, root = server
    with browser_page() as page:
        page.goto(f"{url}/Annotate?corpus=tweets")
        page.get_by_label("Keyword or regular expression").wait_for()
        keyword_search(page, "ockovani")
        n = int(metrics(page)[0])
        assert n >= 20 and metrics(page)[1] == "0"
        boxes = page.locator('[data-testid="stCheckbox"]').filter(has_text="included")
        for i in range(2):  # exclude two: untick the first two rows
            boxes.nth(0 if i == 0 else 1).locator("label").click()
            page.wait_for_function(f"() => [...document.querySelectorAll('[data-testid=stMetricValue]')]"
                                   f".map(e => e.innerText)[1] === '{i + 1}'")
            wait_idle(page)
        assert metrics(page)[:2] == [str(n - 2), "2"]
        page.get_by_role("button", name="COS", exact=True).click()
        page.get_by_text("COS: 10 new texts").wait_for()
        wait_idle(page)
        assert metrics(page)[:2] == [str(n + 8), "2"]
        page.get_by_role("button", name="NN2", exact=True).click()
        page.get_by_text("NN2: 10 new texts").wait_for()
        wait_idle(page)
        assert metrics(page)[:2] == [str(n + 18), "2"]
        page.get_by_role("button", name="Undo").click()
        page.get_by_text("Undid: search nn2").wait_for()
        wait_idle(page)
        assert metrics(page)[:2] == [str(n + 8), "2"]
        page.get_by_label("Group name").fill("vaccination")
        page.get_by_label("Group name").press("Enter")
        wait_idle(page)
        page.get_by_role("button", name="Save", exact=True).click()
        page.get_by_text("Saved group 'vaccination' (version 1)").wait_for()

        page.reload()  # a new browser session: empty group, then open the saved one
        page.get_by_label("Keyword or regular expression").wait_for()
        wait_idle(page)
        assert metrics(page)[:2] == ["0", "0"]
        page.get_by_role("button", name="Open group", exact=True).click()
        page.get_by_text("Opened 'vaccination'").wait_for()
        wait_idle(page)
        assert metrics(page)[:2] == [str(n + 8), "2"]


def test_hostile_tweets_stay_inert(server):
    url, _ = server
    with browser_page() as page:
        dialogs = []
        page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
        page.goto(f"{url}/Annotate?corpus=tweets")
        page.get_by_label("Keyword or regular expression").wait_for()
        keyword_search(page, "alert(1)")
        img = page.get_by_text("<img src=x onerror=alert(1)> očkování", exact=True)
        script = page.get_by_text("<script>alert(1)</script> očkování", exact=True)
        img.wait_for()
        assert img.is_visible() and script.is_visible(), "hostile texts are shown literally"
        page.wait_for_timeout(1000)
        assert dialogs == [], "no script from the corpus may run"
        assert page.locator('img[src="x"]').count() == 0
        assert page.evaluate("() => [...document.scripts].some(s => s.text.includes('alert(1)'))") is False
