"""Every page's frame: the page list in the sidebar (its links carry the corpus and the tab's draft) and
the first lines each page runs (start_page)."""

from __future__ import annotations

import streamlit as st

from core.corpus import Corpus
from core.db import DamagedFile
from core.store import DatabaseError
from ui.text import md
from ui import access, damage, drafts, picker, resources


# (script, sidebar name, icon, what the home page says of it); Material icons: no emoji font needed
PAGES = [("streamlit_app.py", "Home", ":material/home:", ""),
         ("pages/1_Annotate.py", "Annotate", ":material/edit_note:", "Annotate: build a topic group"),
         ("pages/2_Timeline.py", "Timeline", ":material/timeline:", "Timeline of a group"),
         ("pages/3_Scatter.py", "Scatter", ":material/scatter_plot:", "LDA scatter of the corpus"),
         ("pages/4_Topics.py", "Topics", ":material/category:", "Topics: K-Means clusters and key lemmas"),
         ("pages/5_Groups.py", "Groups", ":material/folder_open:", "Saved groups"),
         ("pages/6_DAC.py", "DAC", ":material/hub:", "DAC (Deep Amortized Clustering): a model's view of an anchor"),
         ("pages/7_Team.py", "Team", ":material/group:", "Team: topics assigned to several annotators"),
         ("pages/8_Review.py", "Review", ":material/balance:", "Review: agreement, disagreements, gold")]


def link_params() -> dict:
    """What every page link carries: the corpus, and this tab's draft (so that a reload on any page
    brings the group being built back)."""
    out = {}
    if st.session_state.get("corpus"):
        out["corpus"] = st.session_state["corpus"]
    if st.session_state.get("draft_token"):
        out["draft"] = st.session_state["draft_token"]
    return out


def navigation(where=None) -> None:
    """The sidebar's list of pages, with the names we give them; each link keeps the corpus and the
    draft in the URL."""
    from streamlit.errors import StreamlitAPIException

    where = where or st.sidebar
    params = link_params()
    with where:
        try:
            for page, label, icon, _ in PAGES:
                st.page_link(page, label=label, icon=icon, query_params=params or None)
        except StreamlitAPIException:  # a page run on its own (AppTest of one page): no app to link to
            return
        st.divider()


def link(to: str, label: str) -> None:
    """A link in a page's body to the page named ``to`` (as in the sidebar: "Annotate"), where a message says
    what to do there; it keeps the corpus and the draft, as the sidebar's do."""
    from streamlit.errors import StreamlitAPIException

    page, _, icon, _ = next(p for p in PAGES if p[1] == to)
    try:
        st.page_link(page, label=label, icon=icon, query_params=link_params() or None)
    except StreamlitAPIException:  # a page run on its own (AppTest of one page): no app to link to
        pass


def start_page(title: str, icon: str) -> tuple[str, Corpus]:
    """Every page's first lines: page config, sign-in, the corpus picker, the loaded corpus (or
    a stop), and the group being built back from its draft after a reload (on any page: the URL of
    every page carries the draft). The page links, at the top of the sidebar, are drawn first (a page
    that stops here keeps them) and again last in their place, so that they carry the draft's token."""
    st.set_page_config(page_title=title, page_icon=icon, layout="wide")
    access.gate()
    resources.settle_page(title)
    nav = st.sidebar.empty()
    navigation(nav.container())  # first: a page that stops below keeps its links (after a stop nothing is drawn)
    name = picker.pick_corpus()
    c = picker.load_or_stop(name)
    picker.pick_embedding_set(name, c)
    c = resources.corpus(name)
    database_or_stop(name)
    if "restored_backup" in st.session_state:
        copy, aside, read_back = st.session_state.pop("restored_backup")
        st.success(f"The groups' file is back as it was in {md(copy)}" +
                   (f"; the file it replaced is kept as {md(aside)}. {md(read_back, limit=1000)}" if aside else "."))
    drafts.keep_draft(name, c)
    navigation(nav.container())  # again, in place: the links now carry the corpus picked and the draft's token
    return name, c


def database_or_stop(name: str) -> None:
    """The groups' database answers, or the page says it does not (host and reason, never a password)
    and stops: the group being built stays in this tab, and is written once the database is back."""
    try:
        store = resources.store(name)
        store.db.known_damage()  # met on this file before (an old version's page), in this or another tab
        store.stamp()
    except DamagedFile as exc:
        damage.stop(exc)
    except DatabaseError as exc:
        st.error(f"The groups' database cannot be used: {md(exc)}. What you do here is kept in this tab: keep it "
                 "open and, once the database is back, press R (or click anything here) to go on, and it is written. "
                 "Do not reload the tab meanwhile: a reload starts afresh from what was last written.")
        st.stop()


def go(page: str) -> None:
    """Switch to another page of the app, keeping the corpus and the draft in the URL. (A page run on its
    own, as in AppTest, has no other page to go to: it stays.)"""
    from streamlit.errors import StreamlitAPIException

    try:
        st.switch_page(page, query_params=link_params())
    except StreamlitAPIException:
        return
