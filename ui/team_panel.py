"""The Team and Review pages' panels: who the user is (signed in, or a name chosen once per browser),
the new-topic form, the adjudication table. The logic is core/teams.py and the store's."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import streamlit as st

from core import timezones
from core.ingest import QUOTED
from core.store import DatabaseError, GroupStore
from core.threads import openings
from core.teams import (GROUP_SEPARATOR, HOW_SUFFIX, QUOTING, THREAD, Agreement, agreement, by_text,
                        check_annotator, majority, pairwise, progress_by_text)
from ui import access, damage, group, picker, resources
from ui.text import md, quoted


def whoami(name: str, store: GroupStore) -> str:
    """The user's name for team work: the signed-in identity; on a server without sign-in, a name
    chosen once in this browser (asked for here, kept for this browser); st.stop() until there is one."""
    who = access.identity()
    if who:
        return who
    browser = access.browser_id()
    known = store.person(browser)
    with st.sidebar.form("team_name"):
        typed = st.text_input("Your name (team work)", value=known or group.meta()["annotator"], max_chars=60,
                              help="Recorded with your labels and topics; kept for this browser, and the "
                                   "Annotator of the groups you save.")
        if st.form_submit_button("Use this name"):
            try:
                if not _taken(store, browser, typed, known):
                    store.set_person(browser, typed)
                    st.rerun()
            except ValueError as exc:
                st.error(md(exc))
    if not known:
        st.info("Type your name in the sidebar first: it goes with your labels, topics and agreement.")
        st.stop()
    group.default_annotator(known)
    return known


def _taken(store: GroupStore, browser: str, typed: str, known: str | None) -> bool:
    """True, with a warning, where other browsers chose this name (as people type it: case and accents aside) and
    it is not yet confirmed: two people of one name would share one group per topic, each saving over the other's
    work. Pressing *Use this name* again with the same name confirms it (the same person on another browser)."""
    spelt = store.others_named(browser, typed)
    if not spelt or typed.strip() == (known or "") or st.session_state.get("team_name_again") == typed.strip():
        return False
    st.session_state["team_name_again"] = typed.strip()
    st.warning(f"Another browser already works as {' / '.join(quoted(n) for n in spelt)}. If that is you on "
               "another browser, press *Use this name* again (and spell it the same); if not, make it yours "
               f"(\"{md(typed.strip())} N.\"): two people of one name share one group per topic.")
    return True


def _create_topic(store: GroupStore, me: str) -> None:
    """The form's submit (a callback: it runs before the page is drawn, so that it may empty the form's fields)."""
    state = st.session_state
    topic = state["team_new_name"]
    try:
        people = [check_annotator(p) for p in state["team_new_people"].split(",") if p.strip()]  # checked before
        store.create_topic(topic, state["team_new_guidelines"], created_by=me, blind=state["team_new_blind"])
        for person in people:
            store.assign(topic.strip(), person)
    except ValueError as exc:  # what was typed stays in the form, to mend
        state["team_new_error"] = md(exc)
        return
    state["team_msg"] = ("success", f"Created the topic {quoted(topic.strip())}.")
    picker.pick_next_run("team_topic", topic.strip())
    state.update(team_new_name="", team_new_guidelines="", team_new_people=me, team_new_blind=True)  # the next topic


def new_topic_form(store: GroupStore, me: str) -> None:
    """The form that makes a topic. Emptied once the topic is made, and only then: a refused topic (a name taken, an
    annotator's name refused) leaves what was typed, the guidelines too, to mend (the form emptied on every submit)."""
    with st.form("team_new"):
        st.text_input("Topic name", max_chars=80, key="team_new_name")
        st.text_area("Guidelines", help="What belongs to the topic and what does not, with examples.",
                     key="team_new_guidelines")
        st.text_input("Annotators (comma-separated names)", value=me, key="team_new_people")
        st.checkbox("Blind: nobody sees the others' labels until they submit", value=True, key="team_new_blind")
        st.form_submit_button("Create the topic", type="primary", on_click=_create_topic, args=(store, me))
    if "team_new_error" in st.session_state:
        st.error(st.session_state.pop("team_new_error"))


LAST_TOPIC = "topic_last_picked"  # kept by the Team and Review pages' pickers alike


def topic_of(store: GroupStore, group_name: str) -> str | None:
    """The team topic whose annotator's (or gold) group ``group_name`` is (``GroupStore.team_record``), else None.
    Read from the store, not from how the group was opened, so it holds after a reload; a group whose name cannot
    be a topic's asks the store nothing."""
    if GROUP_SEPARATOR not in group_name or (record := store.team_record(group_name)) is None:
        return None
    return record[0]


def pick_topic(store: GroupStore, topics: list, key: str) -> str:
    """The Team and Review pages' topic picker. Where it is first drawn (another page was open before, or the
    browser reloaded) it shows the topic last picked on either page, else the topic whose group is being built,
    else the oldest topic: back from Annotate, the topic worked on, not the first one made."""
    names = [t.name for t in topics]
    if st.session_state.get(key) not in names and st.session_state.get(LAST_TOPIC) not in names:
        if (working_on := topic_of(store, group.meta().get("name", ""))) in names:
            st.session_state[key] = working_on
    return picker.selectbox_kept("Topic", names, key, kept_as=LAST_TOPIC)


def guidelines(topic, made: bool = False) -> None:
    """A topic's guidelines, as written (never read as Markdown or HTML), and whether it is blind; ``made``: who
    made it and when, too."""
    st.text(topic.guidelines or "(none written)")
    st.caption(("Blind: nobody sees the others' labels until they submit." if topic.blind else
                "Open: everyone may see the others' labels.")
               + (f" Made by {md(topic.created_by)} on {topic.created_at[:10]}." if made else ""))


def guidelines_beside(store: GroupStore, group_name: str) -> None:
    """On the Annotate page, where the group being built is a team topic's: the topic's guidelines, folded, so
    that they are one click away while labelling (also after a reload, which forgets how the group was opened)."""
    if (name := topic_of(store, group_name)) is not None:
        with st.expander(f"Guidelines of the topic {quoted(name)}"):
            guidelines(store.topic(name))


def how_line(p, zone: str = "UTC") -> str:
    """A text's provenance in words: who, through which search (with its query), when (in ``zone``)."""
    if p is None:
        return ""
    query = p.params.get("query") if isinstance(p.params, dict) else None
    method = {"keyword": "KW", "toggle": "a click", "review": "review"}.get(p.method or "", p.method or "")
    return f"{p.who}: {method}" + (f" ‘{query}’" if query else "") + f", {timezones.wall(p.at, zone)}"


def copy_codes(name: str, corpus, ids) -> dict[str, int]:
    """id -> the code of its text among the corpus's copies (core/copies.py), for the ids in this import."""
    ids = [str(i) for i in ids]
    rows = corpus.id_index.get_indexer(ids)
    codes = resources.copies_of(name).codes
    return {i: int(codes[r]) for i, r in zip(ids, rows) if r >= 0}


def thread_openings(name: str, corpus, ids) -> dict[str, str]:
    """id -> the text that opens its conversation (core.threads.openings), for the ids that are replies in it."""
    ids = [str(i) for i in ids]
    rows = corpus.id_index.get_indexer(ids)
    found = rows >= 0
    firsts = openings(resources.threads_of_corpus(name), corpus.frame, rows[found])
    return {i: corpus.frame["text"].iloc[f] for i, f in zip(np.asarray(ids)[found], firsts) if f >= 0}


@damage.named
def progress_table(name: str, corpus, store: GroupStore, rows) -> pd.DataFrame:
    """Who has done how much on a topic. Where the corpus shares texts (core/copies.py), a text and its copies
    count once, as the Annotate and Review pages count them, with the rows labelled beside."""
    shared = resources.copies_of(name).rows_with_copies > 0
    out = []
    for a in rows:
        reviewed, included, labelled = a.reviewed, a.included, a.reviewed
        if shared and a.reviewed:
            reviewed, included = _texts_progress(store, corpus, name, a.group,
                                                 (a.last_activity, a.reviewed, a.included, *resources.corpus_key(name)))
        out.append({"annotator": a.annotator, "texts reviewed": reviewed, "included": included}
                   | ({"rows labelled (copies too)": labelled} if shared else {})
                   | {"last save": (a.last_activity or "")[:16].replace("T", " "),
                      "submitted": (a.submitted_at or "")[:16].replace("T", " ")
                      + (f" (version {a.counted}{', lost: to submit again' if a.submitted_lost else ''})"
                         if a.counted else "")
                      + (f"; version {a.latest_version} saved since, not counted" if a.saved_since else "")})
    return pd.DataFrame(out)


@st.cache_data(max_entries=64, show_spinner=False)
def _texts_progress(_store: GroupStore, _corpus, name: str, group: str, saved: tuple) -> tuple[int, int]:
    """A group's (texts reviewed, included), a text and its copies once; kept until the group is saved again
    (``saved``: its last save, its counts and the corpus's key). Uncached 0.24 s for three groups of 20,000 labels."""
    labels = _store.load(group).labels()
    return progress_by_text(labels, copy_codes(name, _corpus, labels))


@dataclass(frozen=True)
class Review:
    """A topic's submitted groups, side by side (shared by every rerun until one of them is saved or submitted
    again: read only)."""
    labels: dict  # annotator -> item id -> 1 / -1
    texts_labels: dict  # the same with a text and its copies as one item (core.teams.by_text)
    members: dict  # item -> its ids
    agreement: Agreement
    pairs: list[dict]  # core.teams.pairwise
    majority: dict  # item -> the majority's label, where there is one (core.teams.majority)
    table: pd.DataFrame  # one row per disagreement: id, text, [copies], each one's label, each one's how


@damage.named
def review(name: str, corpus, store: GroupStore, topic: str, shown) -> Review:
    """The agreement of the groups ``shown`` (assignments), each at the version its annotator submitted, and the
    table of their disagreements; kept while none of them is saved or submitted again (4,800 disagreements of
    three groups of 20,000 labels: ~0.45 s)."""
    stamp = tuple((a.annotator, a.group, a.counted, a.last_activity, a.submitted_at) for a in shown)
    return _review(store, corpus, name, topic, stamp, resources.corpus_key(name))


@st.cache_resource(max_entries=8, show_spinner="Comparing the groups…")
def _review(_store: GroupStore, _corpus, name: str, topic: str, stamp: tuple, corpus_key: tuple) -> Review:
    versions = {who: _store.load(group, version) for who, group, version, *_ in stamp}  # the versions submitted
    labels = {who: v.labels() for who, v in versions.items()}
    # a text and its copies (labelled with it) are one item: agreement counts texts, not how often one was shared
    texts_labels, members = by_text(labels, copy_codes(name, _corpus, set().union(*labels.values())))
    ag = agreement(texts_labels)
    copies = {d["item_id"]: len(members[d["item_id"]]) - 1 for d in ag.disagreements}
    texts = _corpus.texts_by_id(list(copies))
    how = {who: _store.provenance(list(copies), [v.work]) for who, v in versions.items()}
    word = {1: "included", -1: "excluded", None: ""}
    shared = any(copies.values())
    opens = thread_openings(name, _corpus, list(copies))  # a reply is judged with the post it answers
    quotes = ({i: q for i, q in _corpus.texts_by_id(list(copies), QUOTED).items() if q}
              if QUOTED in _corpus.frame.columns else {})  # and a quote with what it quotes
    table = pd.DataFrame([{"id": d["item_id"], "text": texts.get(d["item_id"], "(not in this import)"),
                           **({THREAD: opens.get(d["item_id"], "")} if opens else {}),
                           **({QUOTING: quotes.get(d["item_id"], "")} if quotes else {}),
                           **({"copies": copies[d["item_id"]]} if shared else {}),
                           **{who: word[d[who]] for who in ag.annotators},
                           **{f"{who}{HOW_SUFFIX}": how_line(how[who].get(d["item_id"]), _corpus.timezone)
                              for who in ag.annotators}} for d in ag.disagreements],
                         columns=["id", "text", *([THREAD] if opens else []), *([QUOTING] if quotes else []),
                                  *(["copies"] if shared else []),
                                  *ag.annotators,
                                  *[f"{who}{HOW_SUFFIX}" for who in ag.annotators]])
    return Review(labels, texts_labels, members, ag, pairwise(texts_labels),
                  majority(ag.disagreements, ag.annotators), table)


def report(topic, rv: Review, decisions: dict[str, int], adjudicator: str) -> dict:
    """The agreement report (the JSON download, and the gold version's session record)."""
    ag, members = rv.agreement, rv.members
    return {"topic": topic.name, "guidelines": topic.guidelines, "annotators": ag.annotators, "texts": ag.items,
            "percent": ag.percent, "kappa": ag.kappa, "alpha": ag.alpha, "per_annotator": ag.per_annotator,
            "pairs": rv.pairs,
            "disagreements": [{**d, **({"copies": members[d["item_id"]][1:]} if len(members[d["item_id"]]) > 1
                                       else {}), "gold": decisions.get(d["item_id"])} for d in ag.disagreements],
            "adjudicator": adjudicator}


# --- the adjudicator's table: each decision is kept in the store the moment it is made ---------------
GOLD_WORDS = {None: "undecided", 1: "included", -1: "excluded", 0: "leave out"}
_GOLD_VALUES = {w: v for v, w in GOLD_WORDS.items()}


def gold_editor(store: GroupStore, topic: str, table: pd.DataFrame, majority: dict[str, int], me: str) -> dict:
    """The disagreements (``table``, one row per text, its ``id``) with a ``gold`` column the adjudicator fills
    in. Every decision is written to the store as it is made (``GroupStore.decide``), so a reload, a closed
    tab or a restarted server loses none, and the table opens with the decisions already made. ``majority``
    (core.teams.majority) may decide the undecided at one click, undone at another. Returns the decisions of
    these texts (id -> 1, -1 or 0)."""
    ids = table["id"].tolist()
    shown = set(ids)
    recorded = {i: r for i, r in store.decisions(topic).items() if i in shown}  # id -> (decision, by whom, when)
    stored = {i: d for i, (d, _, _) in recorded.items()}
    fill = {i: v for i, v in majority.items() if i not in stored}
    undo = st.session_state.get("rv_undo")
    if "rv_msg" in st.session_state:
        st.error(st.session_state.pop("rv_msg"))
    c1, c2, c3 = st.columns([2, 1, 2])
    if majority:  # three or more annotators
        c1.button(f"Take the majority's label for {len(fill):,} undecided" if fill
                  else "No undecided text has a majority", key="rv_majority", disabled=not fill, on_click=_bulk,
                  args=(store, topic, fill, me),
                  help="Where more of the annotators who reviewed a text gave one label than the other (two against "
                       "one). Ties stay for you to decide.")
    if undo and undo[0] == topic:
        c2.button("Undo that", key="rv_majority_undo", on_click=_bulk,
                  args=(store, topic, {i: None for i, v in undo[1].items() if stored.get(i) == v}, me))
    show = picker.kept(c3.segmented_control, "Show", ["Every disagreement", "Undecided"], default="Every disagreement",
                       key="rv_show", label_visibility="collapsed")
    table = table.assign(gold=[GOLD_WORDS[stored.get(i)] for i in ids])
    by = "decided by"  # where adjudicators share the work: whose decision each is (the last one made stands)
    shared = any(who != me for _, who, _ in recorded.values())
    if shared:
        table.insert(table.columns.get_loc("gold") + 1, by, [recorded[i][1] if i in recorded else "" for i in ids])
    if show == "Undecided":
        table = table[table["gold"] == GOLD_WORDS[None]].reset_index(drop=True)
    # the editor's edits are kept by row position: a new key whenever its rows or the stored decisions change at
    # once (a bulk decision), so that an edit never lands on another text
    key = st.session_state["rv_editor"] = _editor_key(topic, table["id"].tolist())
    first = ["text", "gold", *([by] if shared else []),
             *[c for c in table.columns if c not in ("id", "text", "gold", by) and not c.endswith(HOW_SUFFIX)]]
    tall = row_height(table["text"])  # the text read whole, not cut at the cell's edge; eight such rows in view
    edited = st.data_editor(  # the decision beside the text, what each said next; how they found it and the id last
        table, hide_index=True, width="stretch", key=key, disabled=[c for c in table.columns if c != "gold"],
        row_height=tall, height=min(len(table), 8) * tall + 38 if tall else "auto",
        column_order=first + [c for c in table.columns if c not in first],
        column_config={"text": st.column_config.TextColumn("text", width="large"),
                       THREAD: st.column_config.TextColumn(THREAD, width="medium", help="A reply's conversation "
                                                           "opens with this text: what the reply answers"),
                       QUOTING: st.column_config.TextColumn(QUOTING, width="medium", help="The tweet this quote "
                                                            "quotes, as @name: text"),
                       "gold": st.column_config.SelectboxColumn("gold", options=list(_GOLD_VALUES), required=True)})
    now = {r.id: _GOLD_VALUES.get(r.gold) for r in edited.itertuples()}
    changed = {i: v for i, v in now.items() if v != stored.get(i)}
    if changed:
        try:
            store.decide(topic, changed, me)
            stored = {**stored, **changed}
        except DatabaseError as exc:  # the edits stay in the table (this tab) and are written at the next run
            st.error(f"{len(changed):,} decision{'s are' if len(changed) > 1 else ' is'} not written yet: {md(exc)}. "
                     "They stay in this table: once the database is back, press R (or click anything here).")
    return {i: v for i, v in stored.items() if v is not None}


def row_height(texts, chars_per_line: int = 60, most: int = 5) -> int | None:
    """A row height at which the longest of ``texts`` wraps whole in the table's large text column (about
    ``chars_per_line`` a line, at most ``most`` lines: a tweet's 280 characters); None (the grid's one line)
    when every text fits on one. A longer text is cut at ``most`` lines; its cell opens on a double click."""
    longest = max((len(str(t)) for t in texts), default=0)
    lines = min(most, -(-longest // chars_per_line))
    return 14 + 20 * lines if lines > 1 else None


def _editor_key(topic: str, ids: list[str]) -> str:
    import hashlib

    digest = hashlib.blake2b("\n".join([topic, *ids]).encode(), digest_size=8).hexdigest()
    return f"rv_gold_{digest}_{st.session_state.get('rv_gen', 0)}"


def _bulk(store: GroupStore, topic: str, decisions: dict, me: str) -> None:
    """Decide (or take back) many at once; the editor starts afresh from the store."""
    try:
        store.decide(topic, decisions, me)
    except DatabaseError as exc:
        st.session_state["rv_msg"] = f"Nothing was decided: {md(exc)}. Try again once the database is back."
        return
    made = {i: v for i, v in decisions.items() if v is not None}
    st.session_state["rv_undo"] = (topic, made) if made else None
    st.session_state["rv_gen"] = st.session_state.get("rv_gen", 0) + 1
