# one-off: in Chromium, search the keyword, open the 2,000-text conversation, time until the page is idle and the
# last toggle drawn; then a toggle click inside it
import os, sys, time
from pathlib import Path
sys.path.insert(0, os.getcwd())
from testbed.browser import streamlit_server, browser_page, wait_idle
with streamlit_server(Path("/tmp/s51/conv/data")) as (url, _), browser_page() as page:
    page.goto(url + "/Annotate?corpus=big"); wait_idle(page, 120_000)
    page.locator("[class*='st-key-kw_query'] input").fill("KLÍČOVÉSLOVO"); page.keyboard.press("Enter")
    wait_idle(page, 120_000)
    page.locator("[class*='st-key-conv_'] button:visible").first.wait_for()
    for i in range(2):
        t = time.perf_counter()
        page.locator("[class*='st-key-conv_'] button:visible").first.click()
        wait_idle(page, 300_000)
        if i == 0:
            page.locator("[class*='st-key-conv_tog_']").nth(int(sys.argv[1]) - 1).wait_for(state="attached", timeout=300_000)
        n = page.locator("[class*='st-key-conv_tog_']").count()
        print("open" if i == 0 else "close", round(time.perf_counter() - t, 2), "s", n, "toggles", flush=True)
        if i == 0:
            page.screenshot(path="/tmp/s51/conv/open.png")
            t = time.perf_counter()
            page.locator("[class*='st-key-conv_tog_'] button:visible").nth(3).click()
            wait_idle(page, 300_000)
            print("toggle in it", round(time.perf_counter() - t, 2), "s", flush=True)
