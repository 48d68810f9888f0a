"""Browser tests' helpers: bench/chromium.py's, and the rule for when chromium is missing."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

from testbed.browser import (CHROMIUM, browser_page, free_port, metrics, streamlit_server,  # noqa: F401
                            untick_row, wait_idle)


def require_browser():
    if not Path(CHROMIUM).exists() or shutil.which("streamlit", path=str(Path(sys.executable).parent)) is None:
        if os.environ.get("SEMANNO_REQUIRE_BROWSER"):
            pytest.fail(f"{CHROMIUM} is required here (SEMANNO_REQUIRE_BROWSER is set)")
        pytest.skip(f"browser tests need Debian's chromium at {CHROMIUM} (apt-get install -y chromium)")
