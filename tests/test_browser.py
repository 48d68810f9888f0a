"""Real-browser tests: Playwright driving Debian's chromium against `streamlit run`."""

from __future__ import annotations

import shutil

import pytest

from tests.browser import browser_page, metrics, require_browser, streamlit_server, untick_row, wait_idle


@pytest.fixture
def server(tmp_path, tweets_root):
    require_browser()
    root = tmp_path / "d"
    shutil.copytree(tweets_root / "tweets", root / "tweets")
    with streamlit_server(root) as (url, _proc):
        yield url, root


def open_annotate(page, url):
    page.goto(f"{url}/Annotate?corpus=tweets")
    page.get_by_label("Keyword or regular expression").wait_for()


def keyword_search(page, text):
    box = page.get_by_label("Keyword or regular expression")
    box.fill(text)
    box.press("Enter")
    page.get_by_text("KW:").first.wait_for()
    wait_idle(page)


def test_annotation_workflow_in_browser(server):
    url, root = server
    with browser_page() as page:
        open_annotate(page, url)
        keyword_search(page, "ockovani")
        n = int(metrics(page)[0])
        assert n >= 20 and metrics(page)[1] == "0"
        untick_row(page, 0, 1)  # exclude two: untick the first two rows
        untick_row(page, 1, 2)
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
        page.get_by_text("Saved group ‘vaccination’ (version 1)").wait_for()

        page.reload()  # a new browser session: empty group, then open the saved one
        page.get_by_label("Keyword or regular expression").wait_for()
        wait_idle(page)
        assert metrics(page)[:2] == ["0", "0"]
        page.get_by_role("button", name="Open group", exact=True).click()
        page.get_by_text("Opened ‘vaccination’").wait_for()
        wait_idle(page)
        assert metrics(page)[:2] == [str(n + 8), "2"]


def test_hostile_tweets_stay_inert(server):
    url, _ = server
    with browser_page() as page:
        dialogs = []
        page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
        open_annotate(page, url)
        keyword_search(page, "alert(1)")
        img = page.get_by_text("<img src=x onerror=alert(1)> očkování", exact=True)
        script = page.get_by_text("<script>alert(1)</script> očkování", exact=True)
        img.wait_for()
        assert img.is_visible() and script.is_visible(), "hostile texts are shown literally"
        page.wait_for_timeout(1000)
        assert dialogs == [], "no script from the corpus may run"
        assert page.locator('img[src="x"]').count() == 0
        assert page.evaluate("() => [...document.scripts].some(s => s.text.includes('alert(1)'))") is False


def colour_counts(png: bytes) -> dict[str, int]:
    import io

    import numpy as np
    from PIL import Image

    a = np.asarray(Image.open(io.BytesIO(png)).convert("RGB")).astype(int)
    r, g, b = a[..., 0], a[..., 1], a[..., 2]
    return {"green": int(((g > 120) & (r < 120) & (b < 120)).sum()),
            "red": int(((r > 170) & (g < 110) & (b < 110)).sum()),
            "yellow": int(((r > 200) & (g > 150) & (b < 140)).sum())}


def test_scatter_draws_and_labels_by_lasso(server):
    url, _ = server
    with browser_page() as page:
        open_annotate(page, url)
        keyword_search(page, "ockovani")
        untick_row(page, 0, 1)
        before = metrics(page)[:2]
        page.get_by_role("link", name="Scatter").click()  # same browser session: the group comes along
        chart = page.locator('[data-testid="stPlotlyChart"]')
        chart.wait_for()
        page.locator(".plotly .nsewdrag").first.wait_for()
        wait_idle(page)
        page.wait_for_timeout(1500)  # WebGL draws after the DOM is ready
        counts = colour_counts(chart.screenshot())
        assert all(v > 20 for v in counts.values()), f"blank or missing colours: {counts}"
        box = page.locator(".plotly .nsewdrag").first.bounding_box()
        x0, y0, w, h = box["x"], box["y"], box["width"], box["height"]
        path = [(0.05, 0.05), (0.95, 0.05), (0.95, 0.95), (0.05, 0.95), (0.05, 0.06)]
        page.mouse.move(x0 + w * path[0][0], y0 + h * path[0][1])
        page.mouse.down()
        for fx, fy in path[1:]:
            page.mouse.move(x0 + w * fx, y0 + h * fy, steps=8)
        page.mouse.up()
        exclude = page.get_by_role("button", name="Exclude selected")
        page.wait_for_function("() => [...document.querySelectorAll('button')].some("
                               "b => /Exclude selected \\([1-9]/.test(b.innerText))")
        n_sel = int(exclude.inner_text().split("(")[1].rstrip(")"))
        assert n_sel > 100
        exclude.click()
        page.wait_for_function(f"() => [...document.querySelectorAll('[data-testid=stMetricValue]')]"
                               f".map(e => e.innerText)[1] !== '{before[1]}'")
        wait_idle(page)
        after = metrics(page)[:2]
        assert int(after[1]) > int(before[1]), (before, after)
