"""Review: how far a topic's annotators agree (percent, Cohen's kappa, Krippendorff's alpha), where they
disagree and which search brought each text in; the adjudicator resolves the disagreements into a gold
version, exported with the agreement report."""

from __future__ import annotations

import json

import pandas as pd
import streamlit as st

from core.teams import agreement, by_text, gold_group, majority, may_adjudicate, may_see, save_gold
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
chosen = st.selectbox("Topic", [t.name for t in topics], key="rv_topic")  # drawn once, whichever topic is picked
topic = next(t for t in topics if t.name == chosen)
rows = store.assignments(topic.name)
judge = may_adjudicate(me, topic)
submitted = {a.annotator for a in rows if a.submitted_at}
shown = [a for a in rows if a.submitted_at and a.reviewed and may_see(me, a.annotator, topic, submitted, judge)]
if len(shown) < 2:
    st.info(f"Agreement needs two or more submitted groups you may see ({len(submitted)} submitted of {len(rows)}"
            + ("; the topic is blind: submit yours first" if topic.blind and me not in submitted and not judge else "")
            + ").")
    st.stop()
versions = {a.annotator: store.load(a.group) for a in shown}
labels = {who: v.labels() for who, v in versions.items()}
# a text and its copies (labelled with it) are one item: agreement counts texts, not how often one was shared
texts_labels, members = by_text(labels, team_panel.copy_codes(name, corpus, set().union(*labels.values())))
ag = agreement(texts_labels)
copies = sum(len(same) - 1 for same in members.values())
cols = st.columns(4)
cols[0].metric("Texts two or more reviewed", f"{ag.items:,}",
               help=f"A text and its copies count once ({copies:,} copies in these groups)." if copies else None)
cols[1].metric("Percent agreement", f"{ag.percent:.1%}" if ag.percent is not None else "-")
cols[2].metric("Cohen's kappa", f"{ag.kappa:.3f}" if ag.kappa is not None else "-",
               help=None if ag.kappa is not None else "Cohen's kappa is for two annotators; "
                                                       "Krippendorff's alpha, beside it, is for any number.")
cols[3].metric("Krippendorff's alpha", f"{ag.alpha:.3f}" if ag.alpha is not None else "-")
st.dataframe(pd.DataFrame([{"annotator": a, **c} for a, c in ag.per_annotator.items()]), hide_index=True)

shared = {d["item_id"]: len(members[d["item_id"]]) - 1 for d in ag.disagreements}
st.subheader(f"Disagreements ({len(ag.disagreements):,})")
texts = corpus.texts_by_id(list(shared))
how = {who: store.provenance(list(shared), [v.work]) for who, v in versions.items()}
word = {1: "included", -1: "excluded", None: ""}
table = pd.DataFrame([{"id": d["item_id"], "text": texts.get(d["item_id"], "(not in this import)"),
                       **({"copies": shared[d["item_id"]]} if any(shared.values()) else {}),
                       **{who: word[d[who]] for who in ag.annotators},
                       **{f"{who}: how": team_panel.how_line(how[who].get(d["item_id"]), corpus.timezone)
                          for who in ag.annotators}} for d in ag.disagreements])
if not judge:
    st.dataframe(table, hide_index=True, width="stretch")
    st.caption("Only an adjudicator makes the gold version (SEMANNO_ADJUDICATORS, or the topic's creator).")
    st.stop()
decided = team_panel.gold_editor(store, topic.name, table, majority(ag.disagreements, ag.annotators), me)
decisions = {i: v for item, v in decided.items() for i in members[item]}  # a text's decision is its copies' too
report = {"topic": topic.name, "guidelines": topic.guidelines, "annotators": ag.annotators, "texts": ag.items,
          "percent": ag.percent, "kappa": ag.kappa, "alpha": ag.alpha, "per_annotator": ag.per_annotator,
          "disagreements": [{**d, **({"copies": members[d["item_id"]][1:]} if shared[d["item_id"]] else {}),
                             "gold": decisions.get(d["item_id"])} for d in ag.disagreements], "adjudicator": me}
st.download_button("Agreement report (JSON)", json.dumps(report, indent=1, default=str), file_name=f"{topic.name}-agreement.json",
                   mime="application/json", key="rv_report")
st.caption("Each decision is kept as you make it: leave and come back, the table opens with them.")
if st.button(f"Save the gold version ({len(decided):,} of {len(ag.disagreements):,} decided)", type="primary",
             key="rv_save", disabled=len(decided) < len(ag.disagreements)):
    n = save_gold(store, topic, labels, decisions, me, json.dumps(report, default=str), texts=texts_labels)
    st.success(f"Saved the gold version {quoted(gold_group(topic.name))} (version {n}); its notes and the report "
               "keep the agreement.")
