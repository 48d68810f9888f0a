"""The DAC page's panels: the training form and the anchor picker (layout and
callbacks; the training itself is core.cluster.dac.stages.train_for_corpus)."""

from __future__ import annotations

import numpy as np
import streamlit as st

from core.cluster import store as clusterings
from core.cluster.dac import store as models
from core.corpus import Corpus
from core.embed import pick_device
from core.progress import Clock, duration
from core.session import Session
from ui import navigation, picker, resources
from ui.text import md, quoted


def train_form(name: str, corpus: Corpus) -> None:
    """The form that trains a small model on this corpus, with a progress bar (step, epoch, loss, time left)."""
    from core.cluster.dac import stages

    stems = [s.stem for s in clusterings.listing(name) if s.method == "kmeans"]
    options = {"pretrain": ("pretrain", None), **({"kmeans": ("kmeans", None)} if stems else {}),
               **{f"labels: {c}": ("labels", c) for c in resources.label_columns(name)},
               **({"groups": ("groups", None)} if len(resources.saved_group_rows(name)) >= 2 else {})}
    with st.form("am_train"):
        c = st.columns(4)
        stage = c[0].selectbox("Stage", list(options), help="pretrain: no labels (a text's nearest texts are its "
                               "cluster); kmeans: a stored K-Means clustering; labels: a column of the corpus whose "
                               "values are classes (e.g. an event or a label); groups: the saved groups")
        epochs = c[1].number_input("Epochs", 1, 50, 3)
        steps = c[2].number_input("Steps per epoch", 5, 1000, 30)
        model_name = c[3].text_input("Save as", "dac-small")
        go = st.form_submit_button("Train", type="primary")
    if not go:
        return
    kind, column = options[stage]
    bar, clock = st.progress(0.0, text="Preparing the training…"), Clock()

    def progress(step: int, total: int, info: dict) -> None:
        bar.progress(step / total, text=f"Step {step:,} of {total:,} (epoch {info['epoch']} of {info['epochs']}): "
                                        f"loss {info['loss']:.3f}; {clock.line(step, total)}")

    try:
        models.check_model_name(model_name)
        trained = stages.train_for_corpus(corpus, kind, label_column=column or "label",
                                          clustering=stems[0] if kind == "kmeans" else None, device=pick_device("auto"),
                                          progress=progress, epochs=int(epochs), steps=int(steps))
    except ValueError as exc:
        bar.empty()
        st.error(md(exc))
        return
    models.save(corpus, model_name, trained, embedding_set=resources.embedding_set(name))
    picker.pick_next_run("dac_model", model_name)
    st.session_state["am_trained"] = f"Trained {quoted(model_name)} ({stage}) in {duration(clock.elapsed)}; it is picked below."
    st.rerun()


def anchor_picker(name: str, corpus: Corpus, session: Session) -> tuple[np.ndarray, np.ndarray]:
    """The anchor(s) the user picks: a random text (drawn from a seeded sequence: the same draws in the
    same order every session), a text by id, a keyword hit, or the group being built (its excluded texts
    as known non-members). Empty arrays until one is picked."""
    ways = ["Random text", "By id", "Keyword search", "The group being built"]
    # the way, the id, the keyword and its hit come back as they were left after a visit to another page
    how = picker.kept(st.radio, "Anchor", ways, horizontal=True, key="am_how")
    anchors, non_members = np.zeros(0, np.int64), np.zeros(0, np.int64)
    if how == "Random text":
        if st.button("Another text", key="am_next") or "am_random" not in st.session_state:
            draw = st.session_state["am_draw"] = st.session_state.get("am_draw", -1) + 1
            st.session_state["am_random"] = int(np.random.default_rng(draw).integers(corpus.n))
        anchors = np.array([st.session_state["am_random"]])
    elif how == "By id":
        wanted = picker.kept(st.text_input, "Text id", key="am_id").strip()
        if wanted:
            if (row := corpus.row_of(wanted)) is not None:
                anchors = np.array([row])
            else:
                st.warning(f"No text with id {md(wanted, limit=80)}.")
    elif how == "Keyword search":
        query = picker.kept(st.text_input, "Keyword", key="am_kw")
        if query:
            hits = resources.keyword_rows(name, query, limit=20)
            if len(hits):
                anchors = np.array([picker.selectbox_kept("Hit", hits, "am_hit",
                                                          format_func=lambda r: corpus.frame["text"].iat[r][:120])])
            else:
                st.warning("No text matches.")
    else:
        anchors, non_members = np.asarray(session.included, np.int64), np.asarray(session.excluded, np.int64)
        if not len(anchors):
            st.info("The group being built has no included text yet (Annotate page).")
            navigation.link("Annotate", "Build the group on the Annotate page")
    return anchors, non_members


def show_trust(calibration: dict) -> None:
    """The trust line in a box that says at a glance which it is: a calibrated model's (verified), or a
    warning where the threshold was never checked on held-out classes."""
    if "cut" in calibration:
        st.info(trust_line(calibration), icon=":material/verified:")
    else:
        st.warning(trust_line(calibration), icon=":material/warning:")


def trust_line(calibration: dict) -> str:
    """How far to trust the model's memberships, from its card: the cut chosen on held-out classes and
    what it gave there (or why there is none)."""
    if "cut" not in calibration:
        why = calibration.get("note") or "it was trained without held-out classes (stage pretrain, or an older model)"
        return (f"**Not calibrated**: {md(why)}. The membership threshold starts at 0.5, which a model's "
                "classes may not share: check the predicted members below before trusting them.")
    line = (f"**Calibrated on {calibration.get('classes', '?')} held-out classes** (never trained on; "
            f"{calibration.get('rows', 0):,} judged texts): threshold **{calibration['cut']:.2f}** gave accuracy "
            f"{calibration['accuracy']:.0%} (precision {calibration['precision']:.0%}, recall {calibration['recall']:.0%}; "
            f"at 0.5: {calibration['accuracy_at_0.5']:.0%}), average precision {calibration['average_precision']:.2f}. "
            "On topics unlike those classes expect less.")
    if calibration.get("stage") == "pooled":  # measured: bench/RESULTS.md, the pooled model on three seeds
        line += (" Those classes are the pooled corpora's, not this corpus's: on the labelled benchmarks such a "
                 "threshold was off on one corpus in four (AgNews: accuracy 50%, where a model calibrated on "
                 "AgNews's own classes had 73%) while the ranking held up. Set the threshold by the predicted "
                 "members below.")
    return line
