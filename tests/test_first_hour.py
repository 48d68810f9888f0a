"""The first hour with the app: no way to lose work by accident (AppTest, no browser)."""

from __future__ import annotations

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from core.session import EXCLUDED, INCLUDED, UNLABELLED, Session
from core.store import GroupStore
from tests.conftest import ROOT, import_again, import_newest_first
from ui.text import unescape

ANNOTATE = str(ROOT / "pages" / "1_Annotate.py")


def annotate() -> AppTest:
    return AppTest.from_file(ANNOTATE, default_timeout=120)


def counts(at) -> list[str]:
    return [m.value for m in at.metric[:2]]


def messages(at) -> list[str]:
    return [unescape(e.value) for kind in (at.success, at.info, at.warning, at.error) for e in kind]


def toggles(at) -> list[str]:
    return [b.key for b in at.button if b.key and b.key.startswith("tog_")]


def search(at, query: str):
    at.text_input(key="kw_query").set_value(query)
    return at.button(key="FormSubmitter:kw_form-Search (KW)").click().run()


def test_bulk_actions_keep_a_persons_own_labels():
    s = Session()
    s.add_search("keyword", {}, [1, 2, 3, 4])  # search hits: included, nobody chose that
    s.toggle(2)  # a person excluded 2
    s.set_labels([5], EXCLUDED)  # and 5
    step = s.set_labels([1, 2, 3, 5, 6], INCLUDED, keep_explicit=True)  # a lasso over them
    assert s.label_of(2) == EXCLUDED and s.label_of(5) == EXCLUDED and s.label_of(6) == INCLUDED
    assert step.params == {"n": 5, "kept": 2, "changed": 1}
    step = s.set_labels([1, 3, 4], EXCLUDED, keep_explicit=True)  # search-added texts can be excluded
    assert step.params["changed"] == 3 and step.params["kept"] == 0
    s.set_labels([2, 5], INCLUDED)  # without keep_explicit: the person's choice to overturn
    assert s.label_of(2) == INCLUDED and s.label_of(5) == INCLUDED


def test_a_group_switch_is_one_undoable_step():
    s = Session()
    s.add_search("keyword", {}, [1, 2, 3])
    s.toggle(3)
    before = dict(s.labels)
    s.switch_to([7, 8], [9], "open")
    assert s.labels == {7: INCLUDED, 8: INCLUDED, 9: EXCLUDED}
    s.undo()
    assert s.labels == before and s.history[-1].method == "toggle"


def test_redo_puts_back_what_undo_took_until_a_new_step_is_taken():
    s = Session()
    s.add_search("keyword", {"query": "flood"}, [1, 2, 3])
    s.toggle(2)
    s.add_search("cos", {}, [4, 5])
    done, steps = dict(s.labels), [step.id for step in s.history]
    s.undo()
    s.undo()
    assert s.labels == {1: INCLUDED, 2: INCLUDED, 3: INCLUDED}
    assert s.redo().method == "toggle" and s.label_of(2) == EXCLUDED
    assert s.redo().method == "cos" and s.redo() is None
    assert s.labels == done and [step.id for step in s.history] == steps
    assert [e["kind"] for e in s.journal] == ["apply"] * 3 + ["undo"] * 2 + ["redo"] * 2
    s.undo()
    s.toggle(1)  # a new step: the undone COS is forgotten, as in an editor
    assert s.redo() is None and s.label_of(4) == UNLABELLED and s.label_of(1) == EXCLUDED
    s.switch_to([9], [], "new")
    s.undo()
    assert s.redo().method == "switch" and s.labels == {9: INCLUDED}


@pytest.mark.parametrize("reload", [False, True], ids=["in-the-tab", "after-each-reload"])
def test_redo_on_the_page_brings_back_an_undone_search_and_a_new_groups_fields(tweets, reload):
    """Redo in the tab, and (the draft keeps what can be redone) after F5 pressed between Undo and Redo."""
    def again(at):  # F5: a new browser session with the same URL
        if not reload:
            return at
        token = at.query_params["draft"]
        fresh = annotate()
        fresh.query_params["draft"] = token if isinstance(token, str) else token[0]
        return fresh.run()

    at = search(annotate().run(), "ockovani")
    at.button(key=[b.key for b in at.button if b.key and b.key.startswith("tog_")][0]).click().run()
    assert at.button(key="redo").disabled, "nothing undone yet"
    at.button(key="btn_suggest").click().run()
    after = counts(at)
    at.button(key="undo").click().run()
    at = again(at)
    assert counts(at) != after and not at.button(key="redo").disabled
    at.button(key="redo").click().run()
    assert counts(at) == after
    assert any(m.startswith("Redid: Suggest (10 texts)") for m in messages(at)), messages(at)
    at.text_input(key="save_name").set_value("vakcíny").run()
    at.button(key="new_btn").click().run()
    at.text_input(key="save_name").set_value("druhá").run()
    at.button(key="undo").click().run()  # back to vakcíny
    at = again(at)
    assert counts(at) == after and at.text_input(key="save_name").value == "vakcíny"
    at.button(key="redo").click().run()  # the new group again, with the name typed into it
    assert counts(at) == ["0", "0"] and at.text_input(key="save_name").value == "druhá"
    at = again(at)  # an empty group comes back with its steps: the group before it is one Undo away still
    assert at.button(key="redo").disabled, "what was redone is not offered again"
    at.button(key="undo").click().run()
    assert counts(at) == after and at.text_input(key="save_name").value == "vakcíny"
    at.button(key=[b.key for b in at.button if b.key and b.key.startswith("tog_")][0]).click().run()
    assert at.button(key="redo").disabled, "a new step forgets what was undone"


def test_new_empty_group_clears_the_name_and_overwrite_and_undo_brings_it_back(tweets):
    at = search(annotate().run(), "ockovani")
    n = int(counts(at)[0])
    at.text_input(key="save_name").set_value("vakcíny")
    at.text_area(key="save_notes").set_value("first pass")
    at.checkbox(key="save_overwrite").check().run()
    at.button(key="new_btn").click().run()
    assert not at.exception
    assert counts(at) == ["0", "0"]
    assert at.text_input(key="save_name").value == "" and at.text_area(key="save_notes").value == ""
    assert at.checkbox(key="save_overwrite").value is False
    assert any(f"({n:,} included, 0 excluded) is one Undo away" in m for m in messages(at)), messages(at)
    # the new group shows how to begin, not the hits of the group left behind (listed unlabelled, with their advice)
    assert not toggles(at) and any(m.startswith("Start with a keyword search") for m in messages(at))
    assert not any("these 10 hits" in c.value for c in at.caption)
    at.button(key="undo").click().run()
    assert counts(at) == [str(n), "0"]
    assert at.text_input(key="save_name").value == "vakcíny" and at.text_area(key="save_notes").value == "first pass"
    assert len(toggles(at)) == n  # its last search is back with it


def test_open_needs_a_choice_and_brings_back_annotator_and_notes(tweets):
    store = GroupStore(tweets / "tweets" / "groups.sqlite")
    at = annotate().run()
    frame_ids = __import__("pandas").read_parquet(next((tweets / "tweets").glob("gen-*/corpus.parquet")))["id"]
    store.save("covid", frame_ids[:5].tolist(), frame_ids[5:7].tolist(), annotator="eva", notes="vaccines, not tests")
    at = annotate().run()
    assert at.selectbox(key="open_name").value is None and at.button(key="open_btn").disabled
    at.selectbox(key="open_name").set_value("covid").run()
    assert not at.button(key="open_btn").disabled
    at.button(key="open_btn").click().run()
    assert not at.exception
    assert counts(at) == ["5", "2"]
    assert at.text_input(key="save_name").value == "covid"
    assert at.text_input(key="save_annotator").value == "eva"
    assert at.text_area(key="save_notes").value == "vaccines, not tests"
    assert not any("Start with a keyword search" in m for m in messages(at))
    assert len([b for b in at.button if b.key and b.key.startswith("tog_")]) == 5  # shown under Included


def test_the_group_being_built_survives_a_reload_and_a_server_restart(tweets):
    at = search(annotate().run(), "ockovani")
    at.button(key=[b.key for b in at.button if b.key and b.key.startswith("tog_")][0]).click().run()
    at.text_input(key="save_name").set_value("rozpracováno").run()
    token = at.query_params["draft"]
    n, token = counts(at), token if isinstance(token, str) else token[0]
    assert n == ["9", "1"]  # one page of 10 hits (the default), one excluded
    # a reload: a new browser session with the same URL
    again = annotate()
    again.query_params["draft"] = token
    again.run()
    assert counts(again) == n and again.text_input(key="save_name").value == "rozpracováno"
    # a server restart: every cache gone, the draft is read from the corpus's database
    st.cache_resource.clear()
    st.cache_data.clear()
    restarted = annotate()
    restarted.query_params["draft"] = token
    restarted.run()
    assert not restarted.exception and counts(restarted) == n
    # a new tab (no draft in its URL) is offered the unsaved group, and can take it
    other = annotate().run()
    assert counts(other) == ["0", "0"]
    assert any("You have an unsaved group" in m and "rozpracováno" in m for m in messages(other)), messages(other)
    other.button(key="draft_restore").click().run()
    assert counts(other) == n


def unsaved_group(saved_first: bool):
    """A tab building the unsaved group 'rozpracováno' (9 included, 1 excluded); with ``saved_first``, after it
    saved the group 'hotovo' and started a new one."""
    at = annotate().run()
    if saved_first:
        at = search(at, "praha")
        at.text_input(key="save_name").set_value("hotovo").run()
        at.button(key="save_btn").click().run()
        at.button(key="new_btn").click().run()
    at = search(at, "ockovani")
    at.button(key=[b.key for b in at.button if b.key and b.key.startswith("tog_")][0]).click().run()
    at.text_input(key="save_name").set_value("rozpracováno").run()
    assert counts(at) == ["9", "1"]
    return at


def test_a_saved_group_stays_saved_after_steps_that_change_no_label(tweets):
    """After a save, a text toggled and toggled back, a search that found nothing, an Undo and its Redo: the labels
    are the saved version's. Leaving the group then said an unsaved group was one Undo away, and a new tab offered
    it back as unsaved work. A label really changed still is."""
    at = search(annotate().run(), "ockovani")
    at.text_input(key="save_name").set_value("hotovo").run()
    at.button(key="save_btn").click().run()
    saved = counts(at)
    first = [b.key for b in at.button if b.key and b.key.startswith("tog_")][0]
    at.button(key=first).click().run()
    at.button(key=first).click().run()
    at = search(at, "qqqzzz")
    at.button(key="undo").click().run()
    at.button(key="redo").click().run()
    assert counts(at) == saved
    at.button(key="new_btn").click().run()
    assert not any("Undo away" in m for m in messages(at)), messages(at)
    assert not any("You have an unsaved group" in m for m in messages(annotate().run()))
    at.button(key="undo").click().run()  # back to 'hotovo'; now one label changed
    at.radio(key="ann_view").set_value("Included").run()
    at.button(key=first).click().run()
    at.button(key="new_btn").click().run()
    assert any("is one Undo away" in m for m in messages(at)), messages(at)
    assert any("You have an unsaved group" in m for m in messages(annotate().run()))


def test_work_undone_after_a_save_keeps_the_draft_unsaved(tweets):
    """Saved, then a text excluded, then that undone: the labels are the saved version's, but Redo can bring the work
    back. The draft is not a saved one (those are deleted a day later): a new tab offers it, and Redo restores it."""
    at = search(annotate().run(), "ockovani")
    at.text_input(key="save_name").set_value("hotovo").run()
    at.button(key="save_btn").click().run()
    at.button(key=toggles(at)[0]).click().run()
    at.button(key="undo").click().run()
    other = annotate().run()
    assert any("You have an unsaved group" in m for m in messages(other)), messages(other)
    other.button(key="draft_restore").click().run()
    other.button(key="redo").click().run()
    assert counts(other) == ["9", "1"]


@pytest.mark.parametrize("left_for", ["a new empty group", "a saved group"])
def test_a_new_tab_offers_the_unsaved_group_that_was_left_for_another(tweets, left_for):
    """The tab's unsaved group was left for a new empty group, or for a saved group opened: the group is one Undo
    away in that tab, and the tab is closed. A new tab offers that group, and restores it with the next group a
    Redo away."""
    at = unsaved_group(saved_first=left_for == "a saved group")
    n = counts(at)
    if left_for == "a saved group":
        at.selectbox(key="open_name").set_value("hotovo").run()
        at.button(key="open_btn").click().run()
        assert at.text_input(key="save_name").value == "hotovo"
    else:
        at.button(key="new_btn").click().run()
        assert counts(at) == ["0", "0"]
    assert any("is one Undo away" in m for m in messages(at)), messages(at)
    other = annotate().run()  # the first tab closed; a new one
    offer = [m for m in messages(other) if "You have an unsaved group" in m]
    went = "a new empty group" if left_for == "a new empty group" else "the saved group ‘hotovo’"
    assert offer and "rozpracováno" in offer[0] and "9 included, 1 excluded" in offer[0] and went in offer[0], offer
    other.button(key="draft_restore").click().run()
    assert counts(other) == n and other.text_input(key="save_name").value == "rozpracováno"
    assert any("Restored the unsaved group" in m and went in m for m in messages(other)), messages(other)
    other.button(key="redo").click().run()  # the group it was left for, a Redo away
    assert other.text_input(key="save_name").value == ("" if left_for == "a new empty group" else "hotovo")
    other.button(key="undo").click().run()
    token = other.query_params["draft"]
    token = token[0] if isinstance(token, list) else token
    reloaded = annotate()  # the restored group is the new tab's own draft now: a reload of it brings it back
    reloaded.query_params["draft"] = token
    reloaded.run()
    assert counts(reloaded) == n
    from core.store import open_store

    kept = open_store("tweets", tweets).drafts("local", unsaved_only=False)
    assert [d.token for d in kept] == [token], "the closed tab's draft lives on in the new tab's, not twice"


def test_a_new_tab_offers_a_group_whose_every_step_was_undone(tweets):
    """Every step of an unsaved group undone (Undo pressed once too often, and again), then the tab closed: Redo
    would have brought the group back in that tab. A new tab offers it, and restores it with its steps put back."""
    at = unsaved_group(saved_first=False)
    n = counts(at)
    while not at.button(key="undo").disabled:
        at.button(key="undo").click().run()
    assert counts(at) == ["0", "0"]
    reloaded = annotate()  # a reload of that tab: Redo goes on from where it was
    reloaded.query_params["draft"] = at.query_params["draft"]
    reloaded.run()
    assert counts(reloaded) == ["0", "0"] and not reloaded.button(key="redo").disabled
    other = annotate().run()  # the first tab closed; a new one
    offer = [m for m in messages(other) if "You have an unsaved group" in m]
    assert offer and "9 included, 1 excluded, whose every step you undid" in offer[0], messages(other)
    other.button(key="draft_restore").click().run()
    assert counts(other) == n
    assert any("Restored the group whose every step you had undone" in m for m in messages(other)), messages(other)
    other.button(key="undo").click().run()  # its steps an Undo away each, as before they were undone
    assert counts(other) == ["10", "0"]
    token = other.query_params["draft"]
    from core.store import open_store

    kept = open_store("tweets", tweets).drafts("local", unsaved_only=False)
    assert [d.token for d in kept] == [token[0] if isinstance(token, list) else token], "restored: not offered again"


def test_a_group_restored_in_a_new_tab_keeps_what_redo_puts_back(tweets):
    """A step undone, then the tab closed: a new tab restores the group as it was, and Redo there puts the step back
    (the copy used to leave the undone steps behind), also after a reload of the new tab."""
    at = unsaved_group(saved_first=False)
    at.button(key="undo").click().run()  # the exclusion undone
    assert counts(at) == ["10", "0"]
    other = annotate().run()
    assert any("You have an unsaved group" in m and "10 included, 0 excluded" in m for m in messages(other))
    other.button(key="draft_restore").click().run()
    assert counts(other) == ["10", "0"] and not other.button(key="redo").disabled
    reloaded = annotate()
    reloaded.query_params["draft"] = other.query_params["draft"]
    reloaded.run()
    reloaded.button(key="redo").click().run()
    assert counts(reloaded) == ["9", "1"]


def test_a_group_whose_every_step_was_undone_outlives_a_new_import(tweets):
    """Every step undone, the tab closed, the corpus imported again (newest first): a new tab restores the group its
    steps had made, by its texts' ids."""
    at = unsaved_group(saved_first=False)
    made = labelled_ids(at, tweets)
    while not at.button(key="undo").disabled:
        at.button(key="undo").click().run()
    import_newest_first(tweets)
    st.cache_resource.clear()
    st.cache_data.clear()
    other = annotate().run()
    offer = [m for m in messages(other) if "You have an unsaved group" in m]
    assert offer and "whose every step you undid" in offer[0], messages(other)
    other.button(key="draft_restore").click().run()
    assert labelled_ids(other, tweets) == made and counts(other) == ["9", "1"]
    assert any("rebuilt by its texts' ids" in m for m in messages(other)), messages(other)


def test_an_offered_group_names_the_unsaved_one_it_was_switched_to_from(tweets):
    """A saved group opened over an unsaved one, then changed: a new tab offers the changed group, and says that the
    unsaved group before it is there too, which Undo brings back once restored."""
    at = unsaved_group(saved_first=True)
    at.selectbox(key="open_name").set_value("hotovo").run()
    at.button(key="open_btn").click().run()
    at.button(key=[b.key for b in at.button if b.key and b.key.startswith("tog_")][0]).click().run()  # changed
    changed = counts(at)
    other = annotate().run()
    offer = [m for m in messages(other) if "You have an unsaved group" in m]
    assert offer and "hotovo" in offer[0] and "another unsaved group (9 included, 1 excluded)" in offer[0], offer
    other.button(key="draft_restore").click().run()
    assert counts(other) == changed and other.text_input(key="save_name").value == "hotovo"
    other.button(key="undo").click().run()
    other.button(key="undo").click().run()
    assert counts(other) == ["9", "1"] and other.text_input(key="save_name").value == "rozpracováno"


def labelled_ids(at, root) -> dict[str, int]:
    """The group of a tab by id (rows of the corpus's current import)."""
    import pandas as pd

    ids = pd.read_parquet(next((root / "tweets").glob("gen-*/corpus.parquet")), columns=["id"])["id"]
    return {str(ids.iloc[row]): label for row, label in at.session_state["session"].labels.items()}


@pytest.mark.parametrize("back", ["reload", "new-tab", "open-tab", "new-tab-after-new-empty-group",
                                  "open-tab-after-new-empty-group"])
def test_an_unsaved_group_outlives_a_new_import_of_its_corpus(tweets, back):
    """The corpus imported again (newest first, two of the group's texts gone): the texts move to other rows, and
    the unsaved group comes back by its texts' ids, on a reload of its tab, offered in a new one (also when the tab
    had left it for a new empty group), or at the next click of the tab left open meanwhile."""
    import pandas as pd

    at = search(annotate().run(), "ockovani")
    at.button(key=[b.key for b in at.button if b.key and b.key.startswith("tog_")][0]).click().run()
    at.text_input(key="save_name").set_value("rozpracováno").run()
    before = labelled_ids(at, tweets)
    if back.endswith("after-new-empty-group"):
        at.button(key="new_btn").click().run()
    token = at.query_params["draft"]
    token = token if isinstance(token, str) else token[0]
    frame = pd.read_parquet(next((tweets / "tweets").glob("gen-*/corpus.parquet")))
    old_ids, old_session = frame["id"].tolist(), at.session_state["session"]
    gone = sorted(i for i, v in before.items() if v == INCLUDED)[:2]
    frame = frame[~frame["id"].isin(gone)].iloc[::-1][["id", "text", "date", "author"]]
    kept = sorted(i for i, v in before.items() if v == INCLUDED)[2]  # a new tweet that is a copy of one of them
    frame = pd.concat([frame, frame[frame["id"] == kept].assign(id="copy-1")], ignore_index=True)
    import_again(tweets, frame)  # the vectors do not matter here: the rows do
    if back == "open-tab":  # nothing cleared: the page sees the new import by its manifest, as a server would;
        # the click's callback runs before the page, on the group as the tab had it
        again = at.button(key="btn_suggest").click().run()
        before = {old_ids[row]: label for row, label in old_session.labels.items()}
        assert len(before) == 20, "Suggest's ten are in the group"
    elif back == "open-tab-after-new-empty-group":  # the group it left is the one brought onto the new import
        again = at.run()
    else:
        st.cache_resource.clear()
        st.cache_data.clear()
        again = annotate()
    if back.startswith("open-tab"):
        pass
    elif back == "reload":
        again.query_params["draft"] = token
        again.run()
    else:
        again.run()
        assert any("You have an unsaved group" in m for m in messages(again)), messages(again)
        again.button(key="draft_restore").click().run()
    assert not again.exception
    expected = {i: v for i, v in before.items() if i not in gone} | {"copy-1": INCLUDED}
    assert labelled_ids(again, tweets) == expected and len(expected) == len(before) - 1
    assert counts(again) == [str(len(expected) - 1), "1"]
    assert any("rebuilt by its texts' ids" in m and "2 of its texts are no longer in the corpus" in m
               and "1 copy of its texts in the new import took their text's label" in m
               for m in messages(again)), messages(again)
    assert again.text_input(key="save_name").value == "rozpracováno"
    assert again.radio(key="ann_view").value == "Included", "its searches are gone: the group itself is shown"
    later = annotate()  # and the rebuilt group is this tab's draft now: a reload brings it back as it is
    later.query_params["draft"] = again.query_params["draft"]
    later.run()
    assert labelled_ids(later, tweets) == expected


def test_a_changed_group_and_the_unsaved_one_it_was_opened_over_both_outlive_a_new_import(tweets):
    """A saved group opened over an unsaved one, then changed: two unsaved groups, one an Undo behind the other. The
    corpus imported again (newest first), a new tab restores the changed group by its texts' ids, and Undo brings
    back the one it was opened over, rebuilt by id too (it used to be left out of the rebuild)."""
    at = unsaved_group(saved_first=True)
    left = labelled_ids(at, tweets)
    at.selectbox(key="open_name").set_value("hotovo").run()
    at.button(key="open_btn").click().run()
    at.button(key=[b.key for b in at.button if b.key and b.key.startswith("tog_")][0]).click().run()  # changed
    own = labelled_ids(at, tweets)
    import_newest_first(tweets)
    st.cache_resource.clear()
    st.cache_data.clear()
    again = annotate().run()
    offer = [m for m in messages(again) if "You have an unsaved group" in m]
    assert offer and "hotovo" in offer[0] and "another unsaved group (9 included, 1 excluded)" in offer[0], offer
    again.button(key="draft_restore").click().run()
    assert labelled_ids(again, tweets) == own and again.text_input(key="save_name").value == "hotovo"
    assert any("rebuilt by its texts' ids" in m and "Undo brings back the unsaved group you had left for it, rebuilt "
               "too (9 included, 1 excluded)" in m for m in messages(again)), messages(again)
    again.button(key="undo").click().run()
    assert labelled_ids(again, tweets) == left and again.text_input(key="save_name").value == "rozpracováno"
    again.button(key="redo").click().run()
    assert labelled_ids(again, tweets) == own and again.text_input(key="save_name").value == "hotovo"


def test_a_saved_group_is_not_offered_back_as_unsaved(tweets):
    at = search(annotate().run(), "ockovani")
    at.text_input(key="save_name").set_value("hotovo")
    at.button(key="save_btn").click().run()
    assert any("Saved group ‘hotovo’" in m for m in messages(at))
    other = annotate().run()
    assert not any("You have an unsaved group" in m for m in messages(other))


def test_undo_names_the_button(tweets):
    at = search(annotate().run(), "ockovani")
    at.button(key=[b.key for b in at.button if b.key and b.key.startswith("tog_")][0]).click().run()
    at.button(key="btn_suggest").click().run()
    at.button(key="undo").click().run()
    assert any(m.startswith("Undid: Suggest (10 texts)") for m in messages(at)), messages(at)


def test_bulk_include_on_a_page_leaves_excluded_texts(tweets):
    at = search(annotate().run(), "ockovani")
    toggles = [b.key for b in at.button if b.key and b.key.startswith("tog_")]
    for key in toggles[:3]:
        at.button(key=key).click().run()
    n = counts(at)
    at.button(key="bulk_inc").click().run()
    assert counts(at) == n  # the three excluded by hand stay excluded
    assert any("3 excluded by you left as they were" in m for m in messages(at)), messages(at)
    at.checkbox(key="bulk_overturn").check().run()
    at.button(key="bulk_inc").click().run()
    assert counts(at)[1] == "0"


def test_start_a_group_from_a_cluster_and_undo_back(tweets):
    from precompute import kmeans as km_job

    assert km_job.main(["--corpus", "tweets", "--k", "20"]) == 0
    at = search(annotate().run(), "ockovani")
    n = counts(at)
    topics = AppTest.from_file(str(ROOT / "pages" / "4_Topics.py"), default_timeout=120)
    topics.session_state["session"] = at.session_state["session"]
    topics.session_state["group_meta"] = {"name": "mine", "annotator": "", "notes": ""}
    topics.session_state["tp_table"] = {"selection": {"rows": [0], "columns": [], "cells": []}}
    topics.run()
    assert not topics.exception
    topics.button(key="tp_start").click().run()
    s = topics.session_state["session"]
    assert len(s.excluded) == 0 and len(s.included) > 0
    assert s.history[-1].params["action"] == "cluster" and s.counts()["included"] != int(n[0])
    at.session_state["session"] = s
    at.session_state["group_meta"] = topics.session_state["group_meta"]
    at.run()
    at.button(key="undo").click().run()
    assert counts(at) == n
    assert at.text_input(key="save_name").value == "mine"


def test_groups_page_names_what_was_deleted_instead_of_saying_none(tweets):
    store = GroupStore(tweets / "tweets" / "groups.sqlite")
    store.save("covid", ["1344902244014170115"], [], annotator="eva", notes="vaccines only")
    at = AppTest.from_file(str(ROOT / "pages" / "5_Groups.py"), default_timeout=60).run()
    assert at.dataframe[0].value["notes"].tolist() == ["vaccines only"]
    store.delete("covid")
    at.run()
    assert any("1 deleted group" in i.value and "Show deleted groups" in i.value for i in at.info), \
        [i.value for i in at.info]


def test_home_import_takes_its_name_from_the_file_and_says_so_after_the_reload(tmp_path, empty_root):
    from tests.conftest import shared_file, slice_csv

    root = empty_root
    src = slice_csv(shared_file("czech_politicians_tweets_2021.csv"), tmp_path / "Poslanci 2021 (výběr).csv", 40)
    at = AppTest.from_file(str(ROOT / "streamlit_app.py"), default_timeout=120).run()
    at.radio(key="imp_src").set_value("A file on the server").run()
    at.text_input(key="imp_path").set_value(src.name).run()  # relative to the allowed folder
    at.button(key="imp_go").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert (root / "Poslanci-2021-vyber" / "manifest.json").exists()
    assert at.selectbox(key="corpus_picker").value == "Poslanci-2021-vyber"
    assert any("Imported 40 texts into corpus" in unescape(s.value) for s in at.success)


def test_home_import_reads_quotes_with_what_they_quote_when_asked(tmp_path, empty_root):
    """*Read quotes with what they quote* on the home page: the import ends with the embedding set quotes made; a file
    without quotes is imported all the same, and the message after the reload says no set was made."""
    import pandas as pd

    from core import embedsets
    from core.corpus import load_corpus
    from tests.conftest import shared_file

    tweets = pd.read_csv(shared_file("czech_politicians_tweets_2021.csv"), dtype=str, keep_default_na=False, nrows=30)
    frame = tweets[["id", "text", "date", "author"]].assign(quoted_text="")
    frame.loc[3, ["text", "quoted_text"]] = ["Přesně tak.", "@evil: " + tweets["text"][20]]
    frame.to_csv(tmp_path / "quotes.csv", index=False)
    frame.drop(columns="quoted_text").to_csv(tmp_path / "plain.csv", index=False)
    at = AppTest.from_file(str(ROOT / "streamlit_app.py"), default_timeout=120).run()
    for name in ("quotes", "plain"):
        at.radio(key="imp_src").set_value("A file on the server").run()
        at.text_input(key="imp_path").set_value(f"{name}.csv").run()
        at.checkbox(key="imp_quotes").check().run()
        at.button(key="imp_go").click().run()
        assert not at.exception and not at.error, [e.value for e in at.error]
        sets = [s.name for s in embedsets.listing(load_corpus(name, empty_root))]
        assert sets == (["import", "quotes"] if name == "quotes" else ["import"])
    said = [unescape(w.value) for w in at.warning]
    assert any("Imported 30 texts into corpus" in w and "No embedding set quotes made" in w for w in said), said


# --- the first hour, second pass (issue 26) ---------------------------------------------------------

def app(page: str) -> AppTest:
    return AppTest.from_file(str(ROOT / page), default_timeout=120)


def test_a_reload_on_another_page_brings_the_group_back(tweets):
    at = search(annotate().run(), "ockovani")
    at.button(key=[b.key for b in at.button if b.key and b.key.startswith("tog_")][0]).click().run()
    token = at.query_params["draft"]
    token = token if isinstance(token, str) else token[0]
    for page in ("pages/2_Timeline.py", "pages/3_Scatter.py"):  # pages that show the counters
        reloaded = app(page)
        reloaded.query_params.update({"corpus": "tweets", "draft": token})
        reloaded.run()
        assert not reloaded.exception and counts(reloaded) == ["9", "1"], page
        assert reloaded.query_params["draft"] in (token, [token])  # and the URL keeps naming it
    for page in ("pages/4_Topics.py", "pages/5_Groups.py", "pages/6_DAC.py", "streamlit_app.py"):
        reloaded = app(page)
        reloaded.query_params.update({"corpus": "tweets", "draft": token})
        reloaded.run()
        assert not reloaded.exception and reloaded.session_state["session"].counts()["excluded"] == 1, page


def test_a_keyword_without_hits_says_so_neutrally(tweets):
    at = search(annotate().run(), "qqqzzzxxx")
    assert not at.success and any(i.value.startswith("KW: no hits") for i in at.info), messages(at)


def test_the_keyword_example_comes_from_the_corpus_words(so_copy):
    from core.annotate import example_query
    from core.corpus import load_corpus

    at = annotate().run()
    example = example_query(load_corpus("so").frame["text"].to_numpy())
    assert example and "ockovani" not in example
    first, _ = example.split("|")  # an alternation: the placeholder says it is a regular expression
    assert at.text_input(key="kw_query").placeholder == f"e.g. {first}, or {example} as a regular expression"


def test_topics_suggests_a_k_that_fits_the_corpus(tweets):
    from core.cluster.topics import suggested_k

    at = app("pages/4_Topics.py").run()
    assert suggested_k(2000) == 32 and suggested_k(203_000) == 319 and suggested_k(10_000_000) == 1000
    assert any("--k 32" in i.value for i in at.info), [i.value for i in at.info]
    # the hints send the user to "Cluster here": before any clustering, the form stands under that name
    assert any("*Cluster here*" in i.value for i in at.info) and [h.value for h in at.subheader] == ["Cluster here"]


def test_the_topics_hint_names_methods_and_an_encoder_that_the_command_line_runs():
    """The sharper-topics hint sends a user to `precompute.cluster --method X`: every X it names is a registered
    method, the e5 it names is a packaged model, and the one-epoch cost it quotes is dec_crl's default."""
    import re

    from core.cluster import REGISTRY
    from core.cluster.dec_crl import DEFAULTS
    from core.cluster.topics import ADAPTING_MODEL, sharper_hint
    from core.embed import KNOWN_MODELS

    hint = sharper_hint("tweets", 2000)
    named = re.findall(r"--method (\w+)", hint)
    assert named == ["dec", "clusterbert", "dec_crl"] and all(m in REGISTRY for m in named)
    assert f"model={ADAPTING_MODEL}" in hint and ADAPTING_MODEL in KNOWN_MODELS
    assert "one epoch" in hint and DEFAULTS["epochs"] == 1


def test_overwrite_is_unticked_after_a_save(tweets):
    at = search(annotate().run(), "ockovani")
    at.text_input(key="save_name").set_value("g")
    at.button(key="save_btn").click().run()
    at.checkbox(key="save_overwrite").check().run()
    at.button(key="save_btn").click().run()
    assert any("(version 2)" in m for m in messages(at)), messages(at)
    assert at.checkbox(key="save_overwrite").value is False


def test_a_save_over_someone_elses_group_says_whose_it_is_and_points_to_the_team_page(tweets):
    """A second annotator of one topic saved under the name the first one had used: the page said only to tick
    Overwrite, which makes their work the first one's next version, never compared with it. Now it says whose
    group it is and where a team compares several people's work; one's own group still gets the short line."""
    at = search(annotate().run(), "ockovani")
    at.text_input(key="save_name").set_value("očkování")
    at.text_input(key="save_annotator").set_value("anna")
    at.button(key="save_btn").click().run()
    at.button(key="save_btn").click().run()  # anna again: her own group
    said = [m for m in messages(at) if "exists" in m]
    assert said and "tick 'Overwrite' to save it as a new version" in said[-1] and "anna" not in said[-1]
    at.text_input(key="save_annotator").set_value("ben")
    at.button(key="save_btn").click().run()
    said = [m for m in messages(at) if "exists" in m][-1]
    assert "saved by anna (version 1," in said and "Team page" in said, said
    store = GroupStore(tweets / "tweets" / "groups.sqlite")
    assert [v[0] for v in store.versions("očkování")] == [1]  # nothing saved over hers unasked


def test_home_names_the_model_and_dac_offers_every_label_column(so_copy):
    home = app("streamlit_app.py").run()
    assert any("all-MiniLM-L6-v2" in t.value for t in home.text), [t.value for t in home.text]
    page = app("pages/6_DAC.py").run()
    stages = page.selectbox[0].options
    assert "labels: label" in stages and "labels: label_name" in stages and "pretrain" in stages


def test_a_corpus_imported_in_prague_time_shows_and_filters_its_days_so(tmp_path, empty_root):
    """Tweets of 00:30 in Prague are 23:30 UTC the day before: a Czech team's corpus, imported with its
    time zone, shows them on their own day (home, the texts' dates, the date filter, the export)."""
    import pandas as pd

    from core.corpus import load_corpus
    from core.export import group_frame

    src = tmp_path / "noc.csv"
    pd.DataFrame({"id": ["a", "b", "c"], "text": ["půlnoční očkování", "ranní očkování", "večerní očkování"],
                  "date": ["2021-01-01T23:30:00Z", "2021-01-02T07:00:00Z", "2021-01-02 21:00"],
                  "author": ["x", "y", "z"]}).to_csv(src, index=False)
    at = AppTest.from_file(str(ROOT / "streamlit_app.py"), default_timeout=120).run()
    at.radio(key="imp_src").set_value("A file on the server").run()
    at.text_input(key="imp_path").set_value(src.name).run()
    at.text_input(key="imp_tz").set_value("Europe/Prague").run()
    at.button(key="imp_go").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert [m.value for m in at.metric][3:5] == ["2021-01-02", "2021-01-02"]  # first and last date, Prague's days
    assert any("dates shown in Europe/Prague time" in t.value for t in at.text)

    at = annotate().run()
    assert at.date_input(key="kw_dates").value == (__import__("datetime").date(2021, 1, 2),) * 2
    at = search(at, "ockovani")
    captions = " ".join(unescape(c.value) for c in at.caption)
    assert "2021-01-02 00:30" in captions and "2021-01-02 21:00" in captions  # "a" at 00:30, "c" as written
    assert "2021-01-01 23:30" not in captions
    c = load_corpus("noc", empty_root)
    assert c.frame.set_index("id")["date"]["c"] == pd.Timestamp("2021-01-02 20:00")  # stored as UTC
    exported = group_frame(c, ["a", "b", "c"], []).set_index("id")["date"]
    assert exported["a"] == pd.Timestamp("2021-01-02 00:30") and exported["c"] == pd.Timestamp("2021-01-02 21:00")


def test_when_a_text_was_labelled_is_told_in_the_corpus_time_zone():
    from core.annotate import how_line
    from core.store import Provenance
    from ui.team_panel import how_line as team_how_line

    entry = {"method": "keyword", "params": {"query": "flood"}, "kind": "apply", "at": "2026-11-28T23:37:12+00:00"}
    assert how_line(entry, "me") == "me via KW ‘flood’ at 23:37"
    assert how_line(entry, "me", "Europe/Prague") == "me via KW ‘flood’ at 00:37"  # past midnight in Prague
    p = Provenance("1", 1, "alice", "2026-07-01T22:15:00+00:00", "keyword", {"query": "flood"})
    assert team_how_line(p) == "alice: KW ‘flood’, 2026-07-01 22:15"
    assert team_how_line(p, "Europe/Prague") == "alice: KW ‘flood’, 2026-07-02 00:15"  # summer: UTC+2


def test_the_home_page_gets_ready_what_the_first_key_lemmas_need_once_drawn(tweets):
    """The Scatter's first map on a new server waited ~2.3 s for scikit-learn's import and the corpus
    language's lemma dictionary before naming its topics: the Home page gets both ready at the end of its run,
    while the user reads it (a fresh process: this one imported scikit-learn long ago). Loading a corpus does not
    wait for them, and the thread that reads in the background imports nothing: when it imported scikit-learn
    while the Review page did too, the page stopped on "cannot import name 'clone' from partially initialized
    module 'sklearn.base'" about one time in six."""
    import os
    import subprocess
    import sys

    code = """
import sys, threading

class Who:  # each module imported from now on, and the thread that imported it
    seen = []
    def find_spec(self, name, path=None, target=None):
        self.seen.append((threading.current_thread().name, name))
        return None

sys.meta_path.insert(0, Who())
from streamlit.testing.v1 import AppTest
from ui import resources
assert "sklearn" not in sys.modules, "the pages' imports do not load scikit-learn themselves"
resources.corpus("tweets")
assert "sklearn" not in sys.modules, "loading a corpus waited for scikit-learn"
at = AppTest.from_file("streamlit_app.py", default_timeout=120).run()
assert not at.exception, at.exception
warm = [t for t in threading.enumerate() if t.name == "warm key lemmas"]
assert warm, "nothing started reading"
for t in warm:
    t.join(120)
assert "sklearn" in sys.modules and "core.cluster.keyterms" in sys.modules
from core.cluster import keyterms
assert keyterms.word_languages.cache_info().currsize == 1, "the function words were not read"
late = [name for thread, name in Who.seen if thread == "warm key lemmas"]
assert not late, f"the thread imported {late[:5]}"
at.run()
assert not [t for t in threading.enumerate() if t.name == "warm key lemmas" and t not in warm], "read twice"
"""
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300,
                         env={**os.environ, "SEMANNO_DATA": str(tweets)})
    assert out.returncode == 0, out.stderr[-2000:]
