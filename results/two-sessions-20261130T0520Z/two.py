"""Two sessions open two pages at once on a server just started; the pages' text on an exception. Args: N A B"""
import sys, time
from pathlib import Path
sys.path.insert(0, "/work/main")
from testbed.browser import streamlit_server, browser_page, wait_idle
n, a, b = int(sys.argv[1]), sys.argv[2], sys.argv[3]
fails = 0
for it in range(n):
    with streamlit_server(Path("/tmp/s36/data")) as (url, proc), browser_page((1200, 900)) as p1:
        p2 = p1.context.browser.new_context(viewport={"width": 1200, "height": 900}).new_page()
        p1.goto(f"{url}/{a}", wait_until="commit"); p2.goto(f"{url}/{b}", wait_until="commit")
        time.sleep(2)
        for p in (p1, p2):
            wait_idle(p)
        time.sleep(8)
        bad = [p for p in (p1, p2) if p.locator("[data-testid=stException]").count()]
        if bad:
            fails += 1
            for p in bad:
                print(it, "FAIL", p.url, p.locator("[data-testid=stException]").first.inner_text()[:600], flush=True)
        else:
            print(it, "ok", flush=True)
print("fails", fails)
