"""Showing strings that come from users, URLs or the corpus: as text, never as markup.

Streamlit renders messages (``st.error``, ``st.success``...), widget labels and captions as
Markdown: a group named ``[x](https://evil.example)`` would become a link, ``![i](...)`` an image
request, ``:red[...]`` styling. :func:`md` escapes every character Markdown (and Streamlit's own
directives) gives a meaning to, so the string shows exactly as typed.
"""

from __future__ import annotations

import re

ZWSP = "\u200b"
_AUTOLINK = re.compile(r"(?i)(:/|ww(?=w\.)|[^\s@]@)")
_ICON = re.compile(r":(?=material[/_]|streamlit:)")
_MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~:$&])")


def md(value: object, limit: int = 300) -> str:
    """``value`` as Markdown that renders as its plain text (cut to ``limit`` characters)."""
    text = str(value)
    if len(text) > limit:
        text = text[:limit] + "…"
    text = text.replace("\r", " ").replace("\n", " ")
    # GFM turns bare URLs, www. names and e-mail addresses into links whatever the escapes: a
    # zero-width space inside each pattern keeps them text (it does not show)
    text = _AUTOLINK.sub(lambda m: m.group(0)[:-1] + ZWSP + m.group(0)[-1], text)
    # Streamlit reads :material/home: (and :material_home:) as an icon and :streamlit: as its logo before any
    # escape counts: a zero-width space after the colon keeps them text
    text = _ICON.sub(":" + ZWSP, text)
    return _MARKDOWN_SPECIAL.sub(r"\\\1", text)


def unescape(markdown: str) -> str:
    """What :func:`md` escaped, as the reader sees it (for tests of messages)."""
    return re.sub(r"\\(.)", r"\1", markdown).replace(ZWSP, "")


def quoted(value: object, limit: int = 300) -> str:
    """A user's name for something, quoted and escaped: ‘name’."""
    return f"‘{md(value, limit)}’"
