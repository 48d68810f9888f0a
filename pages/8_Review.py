"""Review: how far a topic's annotators agree (percent, Cohen's kappa, Krippendorff's alpha), where they
disagree and which search brought each text in; the adjudicator resolves the disagreements into a gold
version, exported with the agreement report."""

from __future__ import annotations

import json

import pandas as pd
import streamlit as st

from core.teams import gold_group, may_adjudicate, may_see, save_gold
from ui import navigation, resources, team_panel
from ui.text import quoted

name, corpus = navigation.start_page("Review", "⚖️")
store = resources.store(name)
st.title("Review")
me = team_panel.whoami(name, store)
topics = store.topics()
if not topics:
    st.info("No topic yet: make one on the Team page.")
    st.stop()
chosen = team_panel.pick_topic(store, topics, "rv_topic")
topic = next(t for t in topics if t.name == chosen)
rows = store.assignments(topic.name)
judge = may_adjudicate(me, topic)
submitted = {a.annotator for a in rows if a.submitted_at}
shown = [a for a in rows if a.counts and a.reviewed and may_see(me, a.annotator, topic, submitted, judge)]
lost = [a for a in rows if a.submitted_lost and may_see(me, a.annotator, topic, submitted, judge)]
if lost:
    st.warning("Submitted, but not counted: " + "; ".join(f"version {a.counted} of {quoted(a.group)}" for a in lost)
               + (". It" if len(lost) == 1 else ". They") + " could not be read back when the groups' file was put back "
               "from its backup (it was damaged). " + ("It counts" if len(lost) == 1 else "Each counts")
               + " once submitted again (Team page).")
if len(shown) < 2:
    uncounted = sum(a.submitted_lost for a in rows)
    st.info(f"Agreement needs two or more submitted groups you may see ({len(submitted)} submitted of {len(rows)}"
            + (f", {uncounted} of them not counted" if uncounted else "")
            + ("; the topic is blind: submit yours first" if topic.blind and me not in submitted and not judge else "")
            + ").")
    st.stop()
rv = team_panel.review(name, corpus, store, topic.name, shown)
ag, members, labels = rv.agreement, rv.members, rv.labels
copies = sum(len(same) - 1 for same in members.values())
cols = st.columns(4)
cols[0].metric("Texts two or more reviewed", f"{ag.items:,}",
               help=f"A text and its copies count once ({copies:,} copies in these groups)." if copies else None)
cols[1].metric("Percent agreement", f"{ag.percent:.1%}" if ag.percent is not None else "-")
cols[2].metric("Cohen's kappa", f"{ag.kappa:.3f}" if ag.kappa is not None else "-",
               help=None if ag.kappa is not None else "Cohen's kappa is for two annotators; "
                                                       "Krippendorff's alpha, beside it, is for any number.")
cols[3].metric("Krippendorff's alpha", f"{ag.alpha:.3f}" if ag.alpha is not None else "-")
people = pd.DataFrame([{"annotator": a, **c} for a, c in ag.per_annotator.items()])
if len(ag.annotators) < 3:
    st.dataframe(people, hide_index=True)
else:  # which pair parts ways
    c1, c2 = st.columns(2)
    c1.dataframe(people, hide_index=True)
    c2.dataframe(pd.DataFrame(rv.pairs), hide_index=True, column_config={
        "percent agreement": st.column_config.NumberColumn(format="percent"),
        "Cohen's kappa": st.column_config.NumberColumn(format="%.3f")})

st.subheader(f"Disagreements ({len(ag.disagreements):,})")
table = rv.table
if not judge:
    st.dataframe(table, hide_index=True, width="stretch")
    st.caption("Only an adjudicator makes the gold version (SEMANNO_ADJUDICATORS, or the topic's creator).")
    st.stop()
decided = team_panel.gold_editor(store, topic.name, table, rv.majority, me)
decisions = {i: v for item, v in decided.items() for i in members[item]}  # a text's decision is its copies' too
st.download_button("Agreement report (JSON)", on_click="ignore",
                   data=lambda: json.dumps(team_panel.report(topic, rv, decisions, me), indent=1, default=str),
                   file_name=f"{topic.name}-agreement.json", mime="application/json", key="rv_report")
st.caption("Each decision is kept as you make it: leave and come back, the table opens with them.")
if st.button(f"Save the gold version ({len(decided):,} of {len(ag.disagreements):,} decided)", type="primary",
             key="rv_save", disabled=len(decided) < len(ag.disagreements)):
    record = json.dumps(team_panel.report(topic, rv, decisions, me), default=str)
    n = save_gold(store, topic, labels, decisions, me, record, texts=rv.texts_labels)
    st.success(f"Saved the gold version {quoted(gold_group(topic.name))} (version {n}); its notes and the report "
               "keep the agreement.")
