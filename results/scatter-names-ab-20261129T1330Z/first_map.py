"""Seconds from opening the Scatter page (after Home, on a server just started) to the map drawn in chromium."""
import sys, time
from pathlib import Path
tree = Path(sys.argv[1]); sys.path.insert(0, str(tree))
from testbed.browser import streamlit_server, browser_page, wait_idle
with streamlit_server(Path(sys.argv[2]), app_root=tree) as (url, proc), browser_page((1400, 1400)) as page:
    page.goto(url); page.get_by_text("Corpus:").first.wait_for(timeout=120_000); wait_idle(page)
    t = time.time()
    page.goto(url + "/Scatter")
    page.locator(".js-plotly-plot").first.wait_for(timeout=120_000)
    print(f"{tree} first map {time.time() - t:.1f} s", flush=True)
