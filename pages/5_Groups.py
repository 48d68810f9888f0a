"""Saved groups of the corpus: open, export (one, or all side by side), delete (recoverable), restore; the
backups kept of the groups file."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from core import backup
from core.export import FORMATS, LABELS, to_bytes
from core.store import TeamGroup
from ui import damage, group, navigation, picker, resources, snapshots
from ui.text import md, quoted

name, corpus = navigation.start_page("Groups", "🗂️")
store = resources.store(name)
st.title("Saved groups")

show_deleted = picker.kept(st.toggle, "Show deleted groups", key="gr_deleted")
hidden = resources.hidden_groups(name)  # other annotators' groups of a blind topic, until you submit yours
listed = store.list(include_deleted=show_deleted)
groups = [g for g in listed if g.name not in hidden]
if len(listed) > len(groups):
    n = len(listed) - len(groups)
    st.caption(f"{n:,} other annotator{'s’ groups are' if n > 1 else '’s group is'} hidden: a blind topic's groups "
               "are seen by each of its annotators once they have submitted theirs, and by its adjudicator.")
if not groups:
    deleted = len([g for g in store.list(include_deleted=True) if g.name not in hidden])
    if deleted:
        st.info(f"No saved groups to show: {deleted} deleted group{'s' if deleted > 1 else ''} "
                "(turn on 'Show deleted groups' to restore).")
    else:
        st.info("No saved groups yet. Build one on the Annotate page and save it.")
        navigation.link("Annotate", "Build a group on the Annotate page")
    if store.snapshots_at is not None:  # a team's server that lost every group: the snapshot that holds them
        snapshots.panel(store, name)
    st.stop()
table = pd.DataFrame([{"name": g.name, "included": g.n_included, "excluded": g.n_excluded, "versions": g.versions,
                       "updated": g.updated_at[:16].replace("T", " "), "created": g.created_at[:16].replace("T", " "),
                       "annotator": g.annotator, "notes": g.notes, "deleted": (g.deleted_at or "")[:16].replace("T", " ")}
                      for g in groups])
# counts and dates first, notes last (they can be long): every column fits (a screenshot cut the dates off)
st.dataframe(table, hide_index=True, width="stretch", column_config={
    "name": st.column_config.TextColumn(width="medium"), "notes": st.column_config.TextColumn(width="large"),
    **{c: st.column_config.NumberColumn(width="small") for c in ("included", "excluded", "versions")}})

if store.path is not None:  # the corpus's SQLite file: the copies the app keeps of it
    st.caption(md(backup.kept_line(store.path)))
elif store.snapshots_at is not None:  # a team's PostgreSQL: the snapshots the app takes of the corpus's groups
    snapshots.panel(store, name)
chosen = picker.selectbox_kept("Group", [g.name for g in groups], "gr_pick")
info = next(g for g in groups if g.name == chosen)
if st.session_state.get("gr_version_of") != (chosen, info.versions):  # another group, or a version saved since:
    st.session_state.pop("gr_version", None)  # its latest first (the box kept another group's number, unlabelled)
st.session_state["gr_version_of"] = (chosen, info.versions)
version = st.selectbox("Version", list(range(info.versions, 0, -1)), key="gr_version",
                       format_func=lambda v: f"{v} (latest)" if v == info.versions else str(v))
g = damage.named(store.load)(chosen, version)  # a damaged page of the file, met where this version's labels lie
c1, c2 = st.columns(2)
# deleting below, the full width: in a third of a column the group's name was cut short ("Yes, delete ‘vakci…")
c3 = st.container(horizontal=True, vertical_alignment="center")
if c1.button("Open in Annotate", key="gr_open", type="primary", disabled=bool(info.deleted_at)):
    st.session_state.update(ann_msg=("success", group.open_group(corpus, g)), ann_view="Included", ann_page=1)
    navigation.go("pages/1_Annotate.py")
fmt = picker.kept(c2.selectbox, "Export format", list(FORMATS), key="gr_fmt", format_func=LABELS.get,
                  kept_as=picker.EXPORT_FORMAT)
c2.download_button("Export", resources.saved_group_file(name, chosen, g.number, fmt), on_click="ignore",
                   file_name=f"{g.name}-v{g.number}.{fmt}", mime=FORMATS[fmt], key="gr_export")
live = [x.name for x in groups if not x.deleted_at]  # shown here: another's group of a blind topic is not
if len(live) > 1:  # each text labelled in any group once, a column per group: the groups side by side
    c2.download_button(f"Export all {len(live)} groups", group.every_group_export(corpus, store, live, fmt),
                       on_click="ignore", key="gr_export_all",
                       file_name=f"{name}-groups.{fmt}", mime=FORMATS[fmt],
                       help="Each text labelled in any group once, with a column per group (its latest version) "
                            "saying included or excluded")
if g.work:  # the label events that made this version: who, when, through which search, per text
    c2.download_button("Event log (CSV)", lambda: to_bytes(pd.DataFrame(store.journal(g.work, g.last_entry)), "csv"),
                       on_click="ignore", file_name=f"{g.name}-v{g.number}-events.csv", mime="text/csv", key="gr_events")
if info.deleted_at:
    if c3.button("Restore", key="gr_restore"):
        store.restore(chosen)
        st.rerun()
elif (record := store.team_record(chosen)) is not None:  # counted by the Team and Review pages: kept
    c3.caption(md(f"{TeamGroup(chosen, *record)}."))
else:
    sure = c3.checkbox(f"Yes, delete {quoted(chosen)}", key="gr_sure", help="Deleted groups can be restored.")
    if c3.button("Delete", key="gr_delete", disabled=not sure):
        store.delete(chosen)
        st.toast(f"Deleted {quoted(chosen)}; it can be restored from 'Show deleted groups'.")
        st.rerun()
