"""DAC (Deep Amortized Clustering): pick an anchor (or the group being built), see which texts of its bag the
DAC model puts in its cluster, how that agrees with K-Means, saved groups and labels; the model's
card; train a small model here."""

from __future__ import annotations

import dataclasses

import numpy as np
import streamlit as st

from core import plots
from core.cluster import store as clusterings
from core.cluster.dac import inspect
from core.cluster.dac import store as models
from ui import dac_panel, group, navigation, picker, resources
from ui.text import md

name, corpus = navigation.start_page("DAC", "🧩")
st.title("DAC: Deep Amortized Clustering")
st.caption("A Set Transformer (Deep Amortized Clustering) reads an anchor text with its nearest texts and "
           "predicts which of them belong to the anchor's cluster. The Annotate page has no DAC button: in the "
           "simulated annotator DAC found less of a topic than Suggest, alone and as a re-ranking of Suggest's "
           "best (bench/RESULTS.md); here it gives an analyst the model's view of a text or of the group.")
session = group.session()
if corpus.vector_file is not None:
    st.info(f"This corpus ({corpus.n:,} texts) keeps its vectors as fp16 on disk, memory-mapped; DAC reads every "
            "vector into memory, so it is not available at this size. Annotate's other methods, the scatter and "
            "K-Means work as usual.")
    st.stop()

listed = models.listing(name)
if "am_trained" in st.session_state:
    st.success(st.session_state.pop("am_trained"))
with st.expander("Train a small model here", expanded=not listed):
    st.caption(f"For a full model use the command line: `python -m precompute.dac train --corpus {name} "
               "--stage pretrain` (then `--stage kmeans --from dac`), on a GPU when you have one.")
    dac_panel.train_form(name, corpus)
if not listed:
    st.info("No model for this corpus yet: train one above.")
    st.stop()

names = [m.name for m in listed]
picker.apply_pick("dac_model", names)  # a model just trained here
if st.session_state.get("dac_model") not in names:
    st.session_state.pop("dac_model", None)
picker.kept(st.selectbox, "Model", names, key="dac_model", index=None, placeholder="Choose a model",
            help="Only the model you pick is ever loaded.", valid=names.__contains__)
if not st.session_state.get("dac_model"):
    st.info("Pick a model to see what it makes of an anchor.")
    st.stop()
picked_name = st.session_state["dac_model"]
model, why_not = resources.picked_model(name, picked_name)
if model is None:
    st.error(f"This model cannot be used here: {why_not}.")
    st.stop()
dac_panel.show_trust(model.calibration)
with st.expander("Model card"):
    st.dataframe([{k: s.get(k) for k in ("stage", "epochs", "steps", "batch", "lr", "seed", "device", "seconds")}
                  for s in model.stages], hide_index=True)
    st.caption(md(f"{model.card['parameters']:,} parameters; " + ", ".join(f"{k} {v}" for k, v in
                                                                           model.config.as_dict().items())))
    for s in model.stages:  # a pooled model: what it learnt from
        if s.get("sources"):
            st.caption(md("Learnt from (stage pooled): " + ", ".join(f"{x['corpus']} {x['kind']}" for x in s["sources"])))
    st.plotly_chart(plots.training_curves(inspect.curves(model.history)), width="stretch", key="am_curves")

# ---- the anchor ------------------------------------------------------------------------------
anchors, non_members = dac_panel.anchor_picker(name, corpus, session)
if not len(anchors):
    st.stop()
c = st.columns(2)
bag = picker.kept(c[0].number_input, "Bag size (the anchors' nearest texts)", 20, 5000, 800, step=100, key="am_bag")
if st.session_state.get("am_threshold_of") != picked_name:  # a newly picked model starts at its own cut
    st.session_state["am_threshold"] = round(min(0.99, max(0.01, model.cut)), 2)  # drawn, then kept, as set here
    st.session_state["am_threshold_of"] = picked_name
# kept: back from another page, the slider stood at 0.01 (every text of the bag a member), not at the cut left
threshold = picker.kept(c[1].slider, "Membership threshold", 0.01, 0.99, step=0.01, key="am_threshold",
                        help="Starts at the model's calibrated cut (its card) when it has one, else 0.5.")


@st.cache_data(max_entries=16, show_spinner="Reading the bag…")
def bag_view(corpus_name: str, vectors_key: tuple, model_name: str, model_stamp: tuple, anchors: tuple,
             non_members: tuple, bag: int) -> inspect.BagView:
    """The bag and its predictions, once per anchor set, model and embedding set: a rerun (a moved
    threshold, a new comparison) does not search the corpus and run the model again."""
    trained = resources.dac_model(corpus_name, model_name)
    return inspect.bag_view(trained.model, resources.search_context(corpus_name).vectors, np.array(anchors),
                            non_members=np.array(non_members, np.int64), bag=bag)


picked = next(m for m in listed if m.name == st.session_state["dac_model"])
view = dataclasses.replace(bag_view(name, (resources.stamp(name), resources.embedding_set(name)), picked.name, picked.stamp,
                                    tuple(int(a) for a in anchors), tuple(int(r) for r in non_members), int(bag)),
                           threshold=float(threshold))
frame = view.frame(corpus.frame["text"])
st.plotly_chart(plots.bag(frame), width="stretch", key="am_bag_plot")

# ---- agreement with what is known ----------------------------------------------------------------
stems = [s.stem for s in clusterings.listing(name) if not s.stale(clusterings.generation_of(corpus))]
stem = picker.selectbox_kept("Compare with the clustering", stems, "am_stem") if stems else None
refs = inspect.references(view, int(anchors[0]), clusters=resources.clustering_labels(name, stem) if stem else None,
                          cluster_name=stem, groups=resources.saved_group_rows(name),
                          labels=corpus.frame["label"] if "label" in corpus.frame.columns else None)
if refs:
    st.dataframe(refs, hide_index=True)
n_anchors = len(view.anchors)
st.subheader(f"Predicted members ({len(view.members):,} of the {len(view.rows):,} other texts in the bag)")
st.caption(f"The table lists the {'anchor' if n_anchors == 1 else f'{n_anchors:,} anchors'} first, then any known "
           "non-members (texts excluded from the group), then the other texts of the bag, the likeliest members first.")
st.dataframe(frame[["probability", "role", "text"]], hide_index=True, height=420,
             column_config={"probability": st.column_config.ProgressColumn("probability", min_value=0.0, max_value=1.0)})
