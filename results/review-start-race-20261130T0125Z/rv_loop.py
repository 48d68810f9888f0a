"""The Review page opened from its address on a server just started, behind the signing-in proxy, N times;
the page's text, a screenshot and the server log on a failure. Args: CORPUS_DIR N (see README.txt)."""
import shutil, time, sys, tempfile
from pathlib import Path
sys.path.insert(0, ".")
from testbed.browser import streamlit_server, browser_page, wait_idle
from testbed.proxy import running
from tests.browser import free_port
from core.corpus import load_corpus
from core.store import GroupStore
fails = 0
for it in range(int(sys.argv[2])):
    tmp = Path(tempfile.mkdtemp()); root = tmp / "d"
    shutil.copytree(sys.argv[1], root / "tweets")
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
        t = time.monotonic()
        page.goto(f"{proxied}/Review?corpus=tweets")
        try:
            page.locator(".st-key-rv_save button:visible").first.wait_for(timeout=40_000)
            print(it, "ok", round(time.monotonic() - t, 1), flush=True)
        except Exception as e:
            fails += 1
            print(it, "FAIL", flush=True)
            print(page.locator("body").inner_text()[:3000], flush=True)
            page.screenshot(path=f"/tmp/rvfail{it}.png")
            print(open(next(root.glob("streamlit-*.log"))).read()[-3000:], flush=True)
print("fails", fails)
