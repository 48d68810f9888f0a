"""Team: topics with written guidelines, assigned to several annotators who each build their own group;
who has done how much; open your group for a topic; submit it."""

from __future__ import annotations

import streamlit as st

from core.store import DatabaseError, GroupNotFound
from core.teams import topic_group
from ui import drafts, group, navigation, picker, resources, team_panel
from ui.text import md, quoted

name, corpus = navigation.start_page("Team", "👥")
store = resources.store(name)
st.title("Team")
me = team_panel.whoami(name, store)
if "team_msg" in st.session_state:
    kind, text = st.session_state.pop("team_msg")
    getattr(st, kind)(text)

with st.expander("New topic", expanded=not store.topics()):
    team_panel.new_topic_form(store, me)

topics = store.topics()
if not topics:
    st.info("No topic yet: make one above, with guidelines and the annotators who work on it.")
    st.stop()
picker.apply_pick("team_topic", [t.name for t in topics])  # a topic just made here
chosen = team_panel.pick_topic(store, topics, "team_topic")
topic = next(t for t in topics if t.name == chosen)
st.markdown("**Guidelines**")
team_panel.guidelines(topic, made=True)
rows = store.assignments(topic.name)
st.dataframe(team_panel.progress_table(name, corpus, store, rows), hide_index=True, width="stretch")

mine = next((a for a in rows if a.annotator == me), None)
if mine is None:
    st.caption(f"You ({md(me)}) are not assigned to this topic.")
    if st.button("Take part in this topic", key="team_join"):
        store.assign(topic.name, me)
        st.rerun()
    st.stop()


def on_work() -> None:
    """Make this annotator's group for the topic the group being built (its latest version, or a new
    empty group of that name), and go to Annotate."""
    gname = topic_group(topic.name, me)
    try:
        said = group.open_group(corpus, store.load(gname))
    except GroupNotFound:
        said = "Started your group for the topic." + group.switch_group([], [], "new", name=gname)
    except DatabaseError:  # a damaged file: the page says so, with its backup (navigation.database_or_stop)
        return
    st.session_state.update(ann_msg=("success", said), ann_view="Included", ann_page=1)


if mine.submitted_lost:
    st.warning(f"Version {mine.counted} of your group, which you submitted, could not be read back when the groups' "
               "file was put back from its backup (it was damaged): it does not count in the agreement or the gold "
               "until you submit your group again.")
elif mine.saved_since:
    st.warning(f"You submitted version {mine.submitted_version} of your group; version {mine.latest_version}, saved "
               "since, does not count in the agreement or the gold until you submit it.")
c1, c2 = st.columns(2)
if c1.button("Open my group for this topic", type="primary", key="team_work", on_click=on_work):
    navigation.go("pages/1_Annotate.py")
again = mine.saved_since or mine.submitted_lost  # submitted, and saved since (or that version is gone)
if c2.button(f"Submit version {mine.latest_version} instead" if again else "Submit my group", key="team_submit",
             disabled=not mine.latest_version or (bool(mine.submitted_at) and not again),
             help="Say you are done: your latest saved version becomes part of the agreement (Review page); a later "
                  "save counts only once submitted again." if mine.latest_version else
                  "Nothing to submit yet: open your group, label texts and save it (Save group, on the Annotate "
                  "page's sidebar); then submit it here."):
    try:
        n = store.submit(topic.name, me)
        st.session_state["team_msg"] = ("success", f"Submitted {quoted(mine.group)} (version {n}).")
    except (ValueError, GroupNotFound) as exc:
        st.session_state["team_msg"] = ("error", md(exc))
    st.rerun()
drafts.autosave(name, corpus, group.session())
