"""Seconds to the Home page drawn (the corpus summary shown; then its run over) and from then, after PAUSE s, to
the Scatter map drawn, on a server just started, in chromium. Args: TREE DATA PAUSE."""
import sys, time
from pathlib import Path
tree = Path(sys.argv[1]); sys.path.insert(0, str(tree))
from testbed.browser import streamlit_server, browser_page, wait_idle
pause = float(sys.argv[3])
with streamlit_server(Path(sys.argv[2]), app_root=tree) as (url, proc), browser_page((1400, 1400)) as page:
    t = time.time()
    page.goto(url); page.get_by_text("Corpus:").first.wait_for(timeout=120_000)
    page.get_by_text("Import a corpus").first.wait_for(timeout=120_000)
    drawn = time.time() - t
    wait_idle(page)
    home = time.time() - t
    time.sleep(pause)
    t = time.time()
    page.goto(url + "/Scatter")
    page.locator(".js-plotly-plot").first.wait_for(timeout=120_000)
    print(f"{tree.name} pause {pause:.0f} home drawn {drawn:.1f} s, run over {home:.1f} s, "
          f"first map {time.time() - t:.1f} s", flush=True)
