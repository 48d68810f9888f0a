"""The Annotate page's list of texts: the bulk actions over it, and each text with the button that includes or
excludes it. Layout only; the labelling is in core/annotate.py."""

from __future__ import annotations

from typing import Callable

import numpy as np
import pandas as pd
import streamlit as st

from core import annotate
from core.corpus import Corpus
from core.ingest import QUOTED
from core.session import EXCLUDED, INCLUDED, Session
from core.threads import openings
from ui import resources, view_filter
from ui.text import md

OPENING_CHARS = 160  # of the text a reply's thread opens with, shown under the reply
QUOTED_CHARS = 400  # of the tweet a quote quotes, shown under the quote
TOGGLE_WIDTH = 118  # px: "✓ Included" whole in any window (a column's share of a narrow one cut it to "Incl…")


def bulk_actions(rows: np.ndarray, shown: np.ndarray, on_bulk: Callable) -> None:
    """Include or exclude every text the filter kept (on every page) or, without a filter, the page shown."""
    bulk = st.container(horizontal=True, vertical_alignment="center")
    picked = view_filter.picked()
    targets, scope = (rows, f"all {len(rows):,} filtered") if picked else (shown, "all on this page")
    bulk.button(f"Include {scope}", on_click=on_bulk, args=(targets, INCLUDED, picked), key="bulk_inc")
    bulk.button(f"Exclude {scope}", on_click=on_bulk, args=(targets, EXCLUDED, picked), key="bulk_exc")
    bulk.checkbox("Also overturn my own labels", key="bulk_overturn",
                  help="Off: a bulk action leaves the texts you labelled yourself as they are.")


def _toggle_button(place, r, copies, session: Session, key: str) -> None:
    """The button that includes or excludes the text of row ``r`` (an unlabelled one: includes it)."""
    # a button, not a checkbox: a click is an event, so no stale widget value can re-fire it. Its icon, colour and
    # word tell the state (Material icons: no emoji font needed); an excluded text is struck through and grey
    words = {"included": (":green[:material/check_circle: Included]", "Click to exclude"),
             "excluded": (":red[:material/block: Excluded]", "Click to include"),
             "unlabelled": (":material/radio_button_unchecked: Unlabelled", "Click to include")}[r.label]
    place.button(words[0], key=key, on_click=annotate.toggle, args=(copies, session, int(r.row)), help=words[1],
                 width=TOGGLE_WIDTH)


def _text(place, r) -> None:
    if r.label == "excluded":
        place.markdown(f":gray[~~{md(r.text, limit=5000)}~~]")
    else:
        place.text(r.text)
    quoted = getattr(r, QUOTED, None)
    if isinstance(quoted, str) and quoted:  # a quote's "Přesně tak." is read with the tweet it quotes
        place.caption(f"❝ Quoting {md(quoted, limit=QUOTED_CHARS)}")


def _show_conversation(row: int) -> None:
    st.session_state["ann_conv"] = None if st.session_state.get("ann_conv") == row else row
    st.session_state["ann_conv_shown"] = annotate.CONVERSATION_SHOWN


def _show_more_of_conversation() -> None:
    st.session_state["ann_conv_shown"] = st.session_state.get("ann_conv_shown", 0) + annotate.CONVERSATION_SHOWN


def conversation(place, corpus: Corpus, copies, threads, session: Session, row: int, opening: int = -1) -> None:
    """The button that shows ``row``'s conversation (core.threads) under it, and the conversation when shown: each
    text with its own button, oldest first, the text itself marked. Nothing where the text has no conversation.
    ``opening``: the row of the text that opens it where ``row`` is a reply (core.threads.openings), named above the
    button while the conversation is not shown: a reply's "Přesně tak." is read with what it answers."""
    mates = threads.mates(row) if threads is not None else ()
    if not len(mates):
        return
    shown = st.session_state.get("ann_conv") == row
    if opening >= 0 and not shown:
        place.caption(f"↳ In the thread of: “{md(corpus.frame['text'].iloc[opening], limit=OPENING_CHARS)}”")
    place.button(f"{'Hide' if shown else 'Show'} its conversation ({len(mates) - 1:,} more)", key=f"conv_{row}",
                 icon=":material/forum:", on_click=_show_conversation, args=(row,), type="tertiary",
                 help="The thread this text belongs to (the corpus's conversation_id): a reply's topic is often in "
                      "the texts around it. Label them here as in the list.")
    if not shown:
        return
    box = place.container(border=True)
    thread, left_out = annotate.conversation(threads, corpus.frame, session, row, corpus.timezone,
                                             st.session_state.get("ann_conv_shown", annotate.CONVERSATION_SHOWN))
    if left_out:
        line = box.container(horizontal=True, vertical_alignment="center")
        line.caption(f"{len(thread):,} of its {len(mates):,} texts: its first and those around this text.")
        line.button(f"Show {min(left_out, annotate.CONVERSATION_SHOWN):,} more", key=f"conv_more_{row}",
                    on_click=_show_more_of_conversation, type="tertiary", icon=":material/unfold_more:")
    for m in thread.itertuples(index=False):
        line = box.container(horizontal=True)
        _toggle_button(line, m, copies, session, key=f"conv_tog_{row}_{m.row}")
        body = line.container()
        _text(body, m)
        body.caption(("**This text**  ·  " if m.row == row else "") + md(annotate.meta_line(m)))


def texts(name: str, corpus: Corpus, copies, session: Session, table: pd.DataFrame, left_out: int,
          threads=None) -> None:
    """Each text of ``table`` (annotate.rows_frame) with its button, its metadata and how it came in, and a button
    that shows its conversation where ``threads`` (core.threads) knows one; ``left_out``: copies of them the list
    does not show."""
    st.caption("Each text is included (✓, shown as written) or excluded (✕, struck through): click its button to "
               "switch. Texts are shown exactly as written, each once: its copies (the same words with other links) "
               "take its label." + (f" Here {left_out:,} copies are left out of the list." if left_out else ""))
    me = resources.viewer(name)
    how = {row: annotate.how_line(entry, me, corpus.timezone)
           for row, entry in annotate.provenance(session, table["row"]).items()}
    firsts = openings(threads, corpus.frame, table["row"].to_numpy())  # -1 for a text that is no reply
    for r, first in zip(table.itertuples(index=False), firsts.tolist()):
        c1 = st.container(border=True, horizontal=True)  # the button keeps its width, the text takes the rest
        _toggle_button(c1, r, copies, session, key=f"tog_{r.row}")
        c2 = c1.container()
        _text(c2, r)
        c2.caption(md(annotate.meta_line(r) + ("  ·  " + how[r.row] if how.get(r.row) else "")))
        conversation(c2, corpus, copies, threads, session, int(r.row), first)
