"""The Annotate page's list of texts: the bulk actions over it, and each text with the button that includes or
excludes it. Layout only; the labelling is in core/annotate.py."""

from __future__ import annotations

from typing import Callable

import numpy as np
import pandas as pd
import streamlit as st

from core import annotate
from core.corpus import Corpus
from core.session import EXCLUDED, INCLUDED, Session
from ui import resources, view_filter
from ui.text import md

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


def texts(name: str, corpus: Corpus, copies, session: Session, table: pd.DataFrame, left_out: int) -> None:
    """Each text of ``table`` (annotate.rows_frame) with its button, its metadata and how it came in; ``left_out``:
    copies of them the list does not show."""
    st.caption("Each text is included (✓, shown as written) or excluded (✕, struck through): click its button to "
               "switch. Texts are shown exactly as written, each once: its copies (the same words with other links) "
               "take its label." + (f" Here {left_out:,} copies are left out of the list." if left_out else ""))
    me = resources.viewer(name)
    how = {row: annotate.how_line(entry, me, corpus.timezone)
           for row, entry in annotate.provenance(session, table["row"]).items()}
    for r in table.itertuples(index=False):
        inc = r.label == "included"
        c1 = st.container(border=True, horizontal=True)  # the button keeps its width, the text takes the rest
        # a button, not a checkbox: a click is an event, so no stale widget value can re-fire it. Its icon, colour and
        # word tell the state (Material icons: no emoji font needed); an excluded text is struck through and grey
        c1.button(":green[:material/check_circle: Included]" if inc else ":red[:material/block: Excluded]",
                  key=f"tog_{r.row}", on_click=annotate.toggle, args=(copies, session, int(r.row)),
                  help="Click to exclude" if inc else "Click to include", width=TOGGLE_WIDTH)
        c2 = c1.container()
        if inc:
            c2.text(r.text)
        else:
            c2.markdown(f":gray[~~{md(r.text, limit=5000)}~~]")
        c2.caption(md(annotate.meta_line(r) + ("  ·  " + how[r.row] if how.get(r.row) else "")))
