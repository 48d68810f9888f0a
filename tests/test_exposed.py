"""Safe on a shared box: the browser can name only files and models inside the folders the
operator allows, messages never show the server's folders, and user strings stay text."""

from __future__ import annotations

import os
import re

import pytest
from streamlit.testing.v1 import AppTest

from core import paths
from core.paths import PathNotAllowed, confine
from tests.conftest import ROOT
from ui.text import md, unescape


@pytest.fixture
def roots(tmp_path, monkeypatch):
    allowed = tmp_path / "imports"
    (allowed / "sub").mkdir(parents=True)
    (allowed / "sub" / "ok.csv").write_text("id,text\n1,hello\n")
    secret = tmp_path / "secret"
    secret.mkdir()
    (secret / "passwd.csv").write_text("id,text\n1,root:x:0:0\n")
    (allowed / "link.csv").symlink_to(secret / "passwd.csv")
    (allowed / "linkdir").symlink_to(secret)
    monkeypatch.setenv("SEMANNO_IMPORT_ROOTS", str(allowed))
    monkeypatch.setenv("SEMANNO_DATA", str(tmp_path / "data"))
    return allowed, secret


def test_paths_inside_the_roots_are_allowed(roots):
    allowed, _ = roots
    assert confine("sub/ok.csv", paths.import_roots(), "file", "X") == allowed / "sub" / "ok.csv"
    assert confine(str(allowed / "sub" / "ok.csv"), paths.import_roots(), "file", "X") == allowed / "sub" / "ok.csv"


@pytest.mark.parametrize("attempt", ["../secret/passwd.csv", "sub/../../secret/passwd.csv", "link.csv",
                                     "linkdir/passwd.csv", "/etc/passwd", "~/.bashrc", "~root/.ssh/id_rsa", ""])
def test_traversal_symlinks_absolute_and_home_are_refused(roots, attempt):
    allowed, secret = roots
    with pytest.raises(PathNotAllowed) as e:
        confine(attempt, paths.import_roots(), "file", "SEMANNO_IMPORT_ROOTS")
    assert str(secret) not in str(e.value) and str(allowed) not in str(e.value)


def test_default_root_is_the_data_root_and_several_can_be_listed(tmp_path, monkeypatch):
    monkeypatch.delenv("SEMANNO_IMPORT_ROOTS", raising=False)
    monkeypatch.setenv("SEMANNO_DATA", str(tmp_path / "data"))
    assert paths.import_roots() == [(tmp_path / "data").resolve()]
    monkeypatch.setenv("SEMANNO_MODEL_ROOTS", os.pathsep.join([str(tmp_path / "a"), str(tmp_path / "b")]))
    assert paths.model_roots() == [(tmp_path / "a").resolve(), (tmp_path / "b").resolve()]


def test_models_named_in_the_browser_are_confined(roots, tmp_path, monkeypatch):
    from ui.imports import models_from

    monkeypatch.setenv("SEMANNO_MODEL_ROOTS", str(tmp_path / "models"))
    assert models_from("default") == ["default"] and models_from("") == ["default"]
    assert models_from("mine") == [str((tmp_path / "models" / "mine").resolve())]
    for bad in ("/root/.cache/huggingface", "../secret", "~/models"):
        with pytest.raises(PathNotAllowed):
            models_from(bad)


def test_home_page_refuses_a_file_outside_the_roots(roots):
    allowed, secret = roots
    at = AppTest.from_file(str(ROOT / "streamlit_app.py"), default_timeout=60).run()
    at.radio(key="imp_src").set_value("A file on the server").run()
    at.text_input(key="imp_path").set_value(str(secret / "passwd.csv")).run()
    at.button(key="imp_go").click().run()
    assert not at.exception
    errors = [unescape(e.value) for e in at.error]
    assert any("outside the folders this server allows" in e for e in errors), errors
    assert not any(str(allowed) in e for e in errors)  # the allowed folders are not revealed
    assert not (paths.data_root() / "passwd").exists()


def test_markdown_in_user_strings_shows_as_text():
    for payload in ("[save-phish](https://evil.example/save)", "![pix](https://evil.example/url.png)",
                    ":red[alarm]", "<a href='https://example.com/phish'>x</a>", "www.evil.example", "**bold** _it_"):
        escaped = md(payload)
        assert unescape(escaped) == payload
        # every character that makes a link, image, tag, directive or emphasis is escaped
        assert not re.search(r"(?<!\\)[\[\]()<>:!*_.]", escaped), escaped
    assert md("x" * 1000, limit=10) == "x" * 10 + "…"
