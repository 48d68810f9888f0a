"""Driving the app in a real browser: a Streamlit server on a free port, Debian's chromium through
Playwright, and the waits a Streamlit page needs. Used by the browser tests and bench/browser.py."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path


ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-dev-shm-usage"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def streamlit_server(data_root: Path, extra_env: dict | None = None, app_root: Path = ROOT):
    port = free_port()
    env = {**os.environ, "SEMANNO_DATA": str(data_root), "HF_HUB_OFFLINE": "1", **(extra_env or {})}
    exe = str(Path(sys.executable).parent / "streamlit")
    log = open(data_root / f"streamlit-{port}.log", "w")
    proc = subprocess.Popen([exe, "run", str(app_root / "streamlit_app.py"), "--server.port", str(port),
                             "--server.headless", "true", "--server.address", "127.0.0.1",
                             "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none"],
                            cwd=app_root, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.time() + 60
        while time.time() < deadline:
            try:
                if urllib.request.urlopen(url + "/_stcore/health", timeout=1).read() == b"ok":
                    break
            except OSError:
                time.sleep(0.3)
        else:
            raise RuntimeError("streamlit did not start: " + (data_root / f"streamlit-{port}.log").read_text())
        yield url, proc
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


@contextmanager
def browser_page(viewport=(1400, 1000)):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        page = browser.new_page(viewport={"width": viewport[0], "height": viewport[1]})
        page.set_default_timeout(60_000)
        try:
            yield page
        except BaseException:
            tell_what_the_page_shows(page)
            raise
        finally:
            browser.close()


def tell_what_the_page_shows(page, limit: int = 4000) -> None:
    """On a failure, what the page showed, to stderr (pytest prints it with the failure): a wait that timed out
    used to say only which element never came, where the page held the error that explained it (a CI run's
    Review page had stopped on an ImportError)."""
    try:
        text = page.locator("body").inner_text(timeout=5_000)
    except Exception as exc:  # the page or browser is gone: say so, and let the first error speak
        text = f"(the page could not be read: {exc})"
    print(f"--- the page at {page.url} showed ---\n{text[:limit]}", file=sys.stderr)


IDLE = """() => {
    const app = document.querySelector('[data-testid="stApp"]');
    return app !== null && ['notRunning', 'compilationError'].includes(app.getAttribute('data-test-script-state'));
}"""


def wait_idle(page, timeout_ms: int = 60_000) -> None:
    """Wait until Streamlit has finished its current run: the app's script state (``data-test-script-state``
    on the stApp element) is neither running nor a rerun asked for. (The 'Running…' status widget waited for
    before is never drawn with this app's minimal toolbar, so that wait returned at once, mid-run.)"""
    page.wait_for_timeout(150)
    page.wait_for_function(IDLE, timeout=timeout_ms)


def metrics(page) -> list[str]:
    return page.locator('[data-testid="stMetricValue"]').all_inner_texts()


def untick_row(page, index: int, excluded_after: int) -> None:
    """Exclude the index-th result row (click its toggle) and wait for the Excluded counter."""
    wait_idle(page)
    before = metrics(page)[1]
    for attempt in range(3):
        page.locator("[class*='st-key-tog_'] button:visible").filter(has_text="Included").nth(index).click()
        try:
            page.wait_for_function("n => [...document.querySelectorAll('[data-testid=stMetricValue]')]"
                                   ".map(e => e.innerText)[1] === String(n)", arg=excluded_after, timeout=20_000)
            break
        except Exception:
            # a click that landed while the results were being redrawn (a loaded machine) can be lost: the
            # counter has not moved at all. Click again then; any other state is a real failure.
            if attempt == 2 or metrics(page)[1] != before:
                raise
            wait_idle(page)
    wait_idle(page)
