"""One store suite over both backends (SQLite and a real PostgreSQL server the run starts itself):
groups and versions, drafts, the journal and its events (membership rebuilt, provenance), a save over
a version someone else saved, concurrent saves, topics and assignments, agreement and gold."""

from __future__ import annotations

import re
import threading
import uuid
from pathlib import Path

import numpy as np
import pytest

from core.db import SCHEMA_VERSION
from core.session import Session
from core.store import GroupExists, GroupNotFound, VersionChanged

ROOT = Path(__file__).resolve().parents[1]


def test_round_trip_versions_and_soft_delete(make_store):
    s = make_store()
    assert s.save("vaccines", ["a", "b"], ["c"], annotator="eva", notes="first", session_json='{"x": 1}') == 1
    g = s.load("vaccines")
    assert (g.included, g.excluded, g.number, g.annotator, g.notes, g.session_json) == (["a", "b"], ["c"], 1, "eva",
                                                                                          "first", '{"x": 1}')
    with pytest.raises(GroupExists):
        s.save("vaccines", ["a"], [])
    assert s.save("vaccines", ["a", "d"], ["b"], annotator="jan", overwrite=True) == 2
    assert s.load("vaccines", version=1).included == ["a", "b"], "earlier versions are never lost"
    info = s.list()[0]
    assert (info.name, info.versions, info.n_included, info.n_excluded) == ("vaccines", 2, 2, 1)
    s.delete("vaccines")
    assert s.names() == [] and s.load("vaccines").included == ["a", "d"]
    s.restore("vaccines")
    assert s.names() == ["vaccines"]
    with pytest.raises(GroupNotFound):
        s.load("nope")


def test_any_text_a_user_or_a_corpus_brings_is_kept_as_it_was_and_a_nul_is_said_not_a_trace(make_store):
    """What a group, a draft and the journal keep comes back as it went in, on both backends: quotes, backslashes,
    LIKE's wildcards, SQL's words, emoji, a decomposed letter, right-to-left text, line and paragraph separators, a
    byte-order mark, 10,000 characters (random mixes of them were tried on both, a few hundred at a time). PostgreSQL
    keeps no NUL (\\x00): notes that hold one (pasted) are refused with a message that says so, and the saved
    version before stays the latest."""
    s = make_store()
    odd = ["it's", 'say "hi"', "C:\\x\\y", "100%_done", "NULL", "'; DROP TABLE groups; --", "😀 👍🏽", "e\u0301",
           "مرحبا", "a\u2028b\u2029c", "\ufeffbom", "x" * 10_000, "tab\there", "\u200bzero width"]
    inc, exc = odd[:7], odd[7:]
    for n, text in enumerate(odd):
        assert s.save(f"g{n}", inc, exc, annotator=text[:200], notes=text, session_json=text, overwrite=True) == 1
        g = s.load(f"g{n}")
        assert (g.included, g.excluded, g.annotator, g.notes, g.session_json) == (inc, exc, text[:200], text, text)
    step = {"kind": "search", "method": "keyword", "params": {"q": odd}, "changes": [[1, 0, 1]], "id": "s1"}
    token = uuid.uuid4().hex  # as the server makes one (tokens are the database's, not a corpus's)
    assert s.sync_draft(token, "alice", keep=0, steps=[step], n_included=1, n_excluded=0, saved=False, browser="A",
                        writer="w", meta={"notes": odd}, journal=[{"kind": "apply", "step": "s1", "at": "2026",
                                                                   "method": "keyword", "params": {"q": odd},
                                                                   "changes": [(i, 0, 1) for i in inc]}])
    d = s.load_draft(token)
    assert d.steps == (step,) and d.meta == {"notes": odd}
    assert set(s.work_labels(token)) == set(inc)
    if s.db.dialect == "postgresql":
        with pytest.raises(ValueError, match=r"no NUL character .* save again"):
            s.save("g0", ["z"], [], notes="pasted\x00notes", overwrite=True)
        assert s.load("g0").number == 1 and s.versions("g0")[-1][0] == 1
    else:  # SQLite keeps it
        assert s.save("g0", ["z"], [], notes="pasted\x00notes", overwrite=True) == 2
        assert s.load("g0").notes == "pasted\x00notes"


def test_corpora_sharing_one_database_never_see_each_others_groups(make_store):
    a, b = make_store("one"), make_store("two")
    a.save("g", ["1"], [])
    assert b.names() == [] and b.save("g", ["2"], []) == 1  # the same name in another corpus: its own group
    assert a.load("g").included == ["1"] and b.load("g").included == ["2"]


def test_drafts_belong_to_owner_and_writer_on_every_backend(make_store):
    s = make_store()
    step = {"kind": "search", "method": "keyword", "params": {}, "shown": [1], "scores": [], "changes": [[1, 0, 1]],
            "at": "2026-01-01T00:00:00+00:00", "id": "s1"}
    assert s.sync_draft("t", "alice", keep=0, steps=[step], n_included=1, n_excluded=0, saved=False, browser="A",
                        writer="w1")
    assert not s.sync_draft("t", "bob", keep=0, steps=[], n_included=0, n_excluded=0, saved=False, browser="B",
                            writer="w2")
    assert s.claim_draft("t", "alice", browser="B", writer="w3") is None
    d = s.claim_draft("t", "alice", browser="A", writer="w3")
    assert d.steps[0]["id"] == "s1" and not s.delete_draft("t", "bob") and s.delete_draft("t", "alice")


def journal_of(session: Session, ids) -> list[dict]:
    return [{**e, "changes": [(ids[r], old, new) for r, old, new in e["changes"]]} for e in session.unsynced_journal()]


def test_a_version_is_rebuilt_from_its_events_with_undo_and_provenance(make_store):
    s = make_store()
    ids = [f"t{i}" for i in range(50)]
    sess = Session()
    sess.add_search("keyword", {"query": "flood"}, range(10))
    s.append_journal("work1", "alice", journal_of(sess, ids))
    sess.journal_synced = len(sess.journal)
    sess.toggle(3)
    sess.add_search("suggest", {}, range(10, 15))
    sess.undo()  # Suggest's five are gone again
    sess.toggle(4)
    s.append_journal("work1", "alice", journal_of(sess, ids))
    inc, exc = [ids[r] for r in sess.included], [ids[r] for r in sess.excluded]
    assert s.save("floods", inc, exc, work="work1") == 1
    sess.journal_synced = len(sess.journal)
    sess.toggle(5)
    s.append_journal("work1", "alice", journal_of(sess, ids))  # after the save: not part of version 1
    got_inc, got_exc = s.membership("floods", 1)
    assert sorted(got_inc) == sorted(inc) and sorted(got_exc) == sorted(exc) == ["t3", "t4"]
    prov = s.provenance(["t0", "t3", "t12"], ["work1"])
    assert prov["t0"].method == "keyword" and prov["t0"].params == {"query": "flood"} and prov["t0"].who == "alice"
    assert prov["t3"].method == "toggle" and prov["t3"].label == -1
    assert prov["t12"].label == 0  # brought in by Suggest, then undone: the last event says so
    log = s.journal("work1")
    assert [e["kind"] for e in log].count("undo") == 5 and all(e["who"] == "alice" for e in log)


def test_a_version_saved_after_undo_and_redo_holds_what_the_annotator_saw(make_store):
    s = make_store()
    ids = [f"t{i}" for i in range(50)]
    sess = Session()
    sess.add_search("keyword", {"query": "flood"}, range(10))
    sess.toggle(3)
    sess.add_search("suggest", {}, range(10, 15))
    sess.undo()
    sess.undo()  # the exclusion of t3 too
    sess.redo()  # t3 excluded again; Suggest's five stay out until the next redo
    assert s.sync_draft("work1", "alice", keep=0, steps=sess.unsynced_steps(), n_included=9, n_excluded=1,
                        saved=False, browser="", writer="w", journal=journal_of(sess, ids),
                        keep_undone=sess.undone_synced, undone=sess.unsynced_undone())
    sess.synced, sess.journal_synced, sess.undone_synced = len(sess.history), len(sess.journal), len(sess.undone)
    d = s.load_draft("work1")
    reloaded = Session.from_history(d.steps, d.undone)  # a reload here can still redo Suggest, and only it
    assert [u["method"] for u in d.undone] == ["suggest"] and reloaded.labels == sess.labels
    assert reloaded.redo().method == "suggest" and reloaded.redo() is None and len(reloaded.included) == 14
    sess.redo()  # Suggest's five back
    assert s.sync_draft("work1", "alice", keep=sess.synced, steps=sess.unsynced_steps(), n_included=14,
                        n_excluded=1, saved=False, browser="", writer="w", journal=journal_of(sess, ids),
                        keep_undone=sess.undone_synced, undone=sess.unsynced_undone())
    assert s.load_draft("work1").undone == (), "nothing left to redo after a reload either"
    inc, exc = [ids[r] for r in sess.included], [ids[r] for r in sess.excluded]
    assert len(inc) == 14 and exc == ["t3"]
    assert s.save("floods", inc, exc, work="work1") == 1
    got_inc, got_exc = s.membership("floods", 1)
    assert sorted(got_inc) == sorted(inc) and got_exc == exc
    assert Session.from_history(s.load_draft("work1").steps).labels == sess.labels, "a reload brings the same group"
    assert s.provenance(["t12"], ["work1"])["t12"].method == "suggest"
    assert [e["kind"] for e in s.journal("work1")].count("redo") == 6  # t3's event, then Suggest's five


def test_an_unsaved_group_behind_a_switch_is_listed_kept_and_rebuilt_by_id(make_store):
    """A draft whose group now is a saved one opened (or a new empty one), with the unsaved group it left one Undo
    behind: listed among the unsaved work a new tab offers, never pruned as saved, and that group rebuilt by id."""
    from datetime import datetime, timedelta, timezone

    s = make_store()
    ids = [f"t{i}" for i in range(50)]
    sess = Session()
    sess.add_search("keyword", {"query": "flood"}, range(6))
    sess.toggle(2)
    switch = sess.switch_to([40, 41], [], "open", group="done", left_unsaved={"included": 5, "excluded": 1})
    sess.toggle(41)  # a step in the group opened: the unsaved one is two Undos behind now
    assert sess.unsaved_behind() == (2, switch)
    for token, behind in [("left", 6), ("saved", 0)]:
        assert s.sync_draft(token, "alice", keep=0, steps=sess.unsynced_steps(), n_included=1, n_excluded=1,
                            saved=True, browser="", writer="w", journal=journal_of(sess, ids), unsaved_behind=behind)
    assert [d.token for d in s.drafts("alice")] == ["left"] and s.drafts("alice")[0].unsaved_behind == 6
    later = datetime.now(timezone.utc) + timedelta(days=3)  # past the days a saved draft is kept
    assert s.prune_drafts(later) == 1 and [d.token for d in s.drafts("alice", unsaved_only=False)] == ["left"]
    assert s.work_labels("left", before_step=switch.id) == {**{f"t{i}": 1 for i in range(6) if i != 2}, "t2": -1}
    assert s.work_labels("left") == {"t40": 1, "t41": -1}
    assert s.work_labels("left", before_step="never-taken") == {}


def test_a_draft_whose_every_step_was_undone_is_listed_and_kept(make_store):
    """Every step of an unsaved group undone, the tab closed: its draft holds an empty group and the steps Redo puts
    back. It is listed among the unsaved work a new tab offers and kept the days of unsaved work, not pruned after
    a day as an empty draft is; the empty draft without undone steps is neither."""
    from datetime import datetime, timedelta, timezone

    s = make_store()
    ids = [f"t{i}" for i in range(50)]
    sess = Session()
    sess.add_search("keyword", {"query": "flood"}, range(6))
    last = sess.toggle(2)
    while sess.undo():
        pass
    assert sess.ahead() == {"included": 5, "excluded": 1} and not sess.labels
    s.sync_draft("undone", "alice", keep=0, steps=[], undone=sess.unsynced_undone(), n_included=0, n_excluded=0,
                 saved=False, browser="", writer="w", journal=journal_of(sess, ids), meta={"ahead": sess.ahead()})
    s.sync_draft("empty", "alice", keep=0, steps=[], n_included=0, n_excluded=0, saved=False, browser="", writer="w")
    assert [d.token for d in s.drafts("alice")] == ["undone"]
    later = datetime.now(timezone.utc) + timedelta(days=3)  # past the days an empty draft is kept
    assert s.prune_drafts(later) == 1 and [d.token for d in s.drafts("alice", unsaved_only=False)] == ["undone"]
    assert len(s.load_draft("undone").undone) == 2
    # by id, as its steps had made it (a new import moves rows): through its last step, undone since
    assert s.work_labels("undone", through_step=last.id) == {**{f"t{i}": 1 for i in range(6) if i != 2}, "t2": -1}
    assert s.work_labels("undone") == {} and s.work_labels("undone", before_step=last.id) == {
        f"t{i}": 1 for i in range(6)}


def test_saving_over_a_version_someone_saved_meanwhile_asks_first(make_store):
    s = make_store()
    s.save("g", ["1"], [], saved_by="alice")
    s.save("g", ["1", "2"], [], overwrite=True, saved_by="bob", expect=1)  # bob had opened version 1
    with pytest.raises(VersionChanged, match="changed by bob at .* \\(version 2\\)"):
        s.save("g", ["1", "3"], [], overwrite=True, saved_by="alice", expect=1)  # alice had version 1 too
    assert len(s.versions("g")) == 2, "nothing written"
    assert s.save("g", ["1", "3"], [], overwrite=True, saved_by="alice", expect=2) == 3  # after seeing bob's


def test_people_saving_one_group_at_once_lose_no_version(make_store):
    s = make_store()
    errors, numbers = [], []

    def writer(tag: str) -> None:
        try:
            for i in range(15):
                numbers.append(s.save("shared", [f"{tag}{i}"], [], overwrite=True, saved_by=tag))
        except Exception as exc:  # pragma: no cover - the test fails with it
            errors.append(repr(exc))

    threads = [threading.Thread(target=writer, args=(t,)) for t in "abcd"]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == [] and sorted(numbers) == list(range(1, 61))
    assert [v[0] for v in s.versions("shared")] == list(range(1, 61))


def test_topics_assignments_progress_and_submission(make_store):
    s = make_store()
    s.create_topic("floods", "Tweets about floods, not rain in general.", created_by="lead")
    with pytest.raises(ValueError, match="exists"):
        s.create_topic("floods", "", created_by="lead")
    assert s.assign("floods", "alice") == "floods · alice" and s.assign("floods", "bob") == "floods · bob"
    s.save("floods · alice", ["1", "2"], ["3"], topic="floods")
    with pytest.raises(ValueError, match="save your group"):
        s.submit("floods", "bob")
    assert s.submit("floods", "alice") == 1
    a = {x.annotator: x for x in s.assignments("floods")}
    assert (a["alice"].reviewed, a["alice"].included, a["bob"].reviewed) == (3, 2, 0)
    assert a["alice"].submitted_at and a["bob"].submitted_at is None
    assert (a["alice"].counted, a["alice"].saved_since, a["bob"].counted) == (1, False, None)
    s.save("floods · alice", ["1", "2", "3"], [], topic="floods", overwrite=True)  # after submitting
    a = {x.annotator: x for x in s.assignments("floods")}["alice"]
    assert (a.counted, a.latest_version, a.saved_since) == (1, 2, True), "the submitted version still counts"
    assert s.submit("floods", "alice") == 2 and {x.annotator: x for x in s.assignments("floods")}["alice"].counted == 2
    with s.db.tx() as db:  # a submission recorded before the version was: the version latest at that time counts
        db.run("UPDATE assignments SET submitted_version=NULL, submitted_at=(SELECT v.created_at FROM versions v JOIN "
               "groups g ON g.id=v.group_id WHERE g.name=? AND g.corpus=? AND v.number=1) WHERE annotator='alice' AND "
               "topic_id=(SELECT id FROM topics WHERE corpus=? AND name='floods')",
               ("floods · alice", s.corpus, s.corpus))
    assert {x.annotator: x for x in s.assignments("floods")}["alice"].counted == 1
    assert [t.name for t in s.topics()] == ["floods"] and s.topic("floods").blind
    from core.teams import hidden_groups

    rows = s.team_groups()
    assert sorted((t.name, who, g, bool(at)) for t, who, g, at in rows) == [
        ("floods", "alice", "floods · alice", True), ("floods", "bob", "floods · bob", False)]
    assert hidden_groups("bob", rows) == {"floods · alice"} and hidden_groups("alice", rows) == set()
    assert make_store("other").team_groups() == [], "another corpus's topics are not this one's"


def test_a_topics_groups_are_not_deleted_and_the_refusal_says_whose_they_are(make_store):
    """Deleting an annotator's group for a topic only hid it from the Groups page: the Team and Review pages went on
    counting its submitted version, and its annotator reopened it from the Team page without a word. A topic's
    groups (each annotator's, and its gold) are now refused with whose they are; any other group is deleted."""
    from core.store import TeamGroup

    s = make_store()
    s.create_topic("floods", "", created_by="lead")
    for who in ("alice", "bob"):
        s.save(s.assign("floods", who), ["1"], ["2"], topic="floods")
    s.submit("floods", "alice")
    s.save("floods · gold", ["1"], [], topic="floods", kind="gold")
    s.save("floods · carol", ["1"], [])  # named like a topic's group, but nobody is assigned it
    for name, says in (("floods · alice", "alice's group for the topic 'floods', submitted"),
                       ("floods · bob", "bob's group for the topic 'floods': the topic's Team page"),
                       ("floods · gold", "the gold of the topic 'floods'")):
        with pytest.raises(TeamGroup, match=says):
            s.delete(name)
    assert s.team_record("floods · alice") == ("floods", "alice", True) and s.team_record("floods · carol") is None
    s.delete("floods · carol")
    assert sorted(s.names()) == ["floods · alice", "floods · bob", "floods · gold"]
    assert make_store("other").team_record("floods · alice") is None, "another corpus's topics are not this one's"


@pytest.mark.parametrize("name, clash", [("gold", "gold group"), ("Gold", "gold group"), ("text", "column"),
                                         ("id", "column"), ("copies", "column"), ("item_id", "column"),
                                         ("Decided by", "column"), ("carol: how", "end with"),
                                         ("b · gold", "another topic's")])
def test_an_annotator_named_like_the_gold_group_or_a_review_column_is_refused(make_store, name, clash):
    """An annotator named ``gold`` would build the topic's gold group; one named ``text`` (or ``id``, ``copies``,
    ``... : how``) would overwrite a column of the Review page's table and report; ``b · gold`` on topic ``a``
    would build the gold group of a topic ``a · b``. Each is refused with the reason, and nothing is assigned."""
    s = make_store()
    s.create_topic("a", "", created_by="lead")
    s.create_topic("a · b", "", created_by="lead")
    with pytest.raises(ValueError, match=clash):
        s.assign("a", name)
    assert s.assignments("a") == [] and s.team_groups() == []
    mended = f"{name}x".replace(" · ", "-")  # a letter more, or no separator: fine
    assert s.assign("a", mended) == f"a · {mended}"


def test_agreement_against_scikit_learn_and_krippendorff_and_by_hand():
    import krippendorff
    from sklearn.metrics import cohen_kappa_score

    from core.teams import agreement, gold_labels

    a = {"1": 1, "2": 1, "3": -1, "4": 1, "5": -1, "6": 1}
    b = {"1": 1, "2": -1, "3": -1, "4": 1, "5": -1, "7": 1}  # 5 texts both reviewed, 1 disagreement
    r = agreement({"alice": a, "bob": b})
    assert r.items == 5 and r.percent == pytest.approx(4 / 5)
    both = ["1", "2", "3", "4", "5"]
    assert r.kappa == pytest.approx(cohen_kappa_score([a[i] for i in both], [b[i] for i in both]))
    # by hand: po = 0.8; pe = (3/5 * 2/5) + (2/5 * 3/5) = 0.48; kappa = (0.8 - 0.48) / 0.52
    assert r.kappa == pytest.approx((0.8 - 0.48) / 0.52)
    c = {"1": 1, "2": 1, "3": 1, "6": 1}
    r3 = agreement({"alice": a, "bob": b, "carl": c})
    items = sorted({"1", "2", "3", "4", "5", "6"})
    data = np.array([[x.get(i, np.nan) for i in items] for x in (a, b, c)], dtype=float)
    assert r3.alpha == pytest.approx(krippendorff.alpha(reliability_data=data, level_of_measurement="nominal"))
    assert r3.kappa is None and {d["item_id"] for d in r3.disagreements} == {"2", "3"}
    from core.teams import pairwise

    pairs = {p["pair"]: p for p in pairwise({"alice": a, "bob": b, "carl": c})}
    assert list(pairs) == ["alice · bob", "alice · carl", "bob · carl"]
    assert pairs["alice · bob"]["Cohen's kappa"] == pytest.approx(r.kappa) and pairs["alice · bob"][
        "percent agreement"] == pytest.approx(4 / 5)
    ac = ["1", "2", "3", "6"]  # alice and carl: 3 of 4 alike; carl gave one label only, so kappa is 0
    assert pairs["alice · carl"]["texts both reviewed"] == 4 and pairs["alice · carl"]["percent agreement"] == .75
    assert pairs["alice · carl"]["Cohen's kappa"] == pytest.approx(
        cohen_kappa_score([a[i] for i in ac], [c[i] for i in ac]))
    assert pairwise({"alice": a, "dora": {"9": 1}})[0]["Cohen's kappa"] is None, "no text both reviewed"
    gold = gold_labels({"alice": a, "bob": b}, {"2": -1})
    assert gold == {"1": 1, "2": -1, "3": -1, "4": 1, "5": -1, "6": 1, "7": 1}
    with pytest.raises(ValueError, match="disagree on '2'"):
        gold_labels({"alice": a, "bob": b}, {})


def test_only_an_adjudicator_creates_gold(make_store):
    from core.teams import NotAllowed, Topic, may_adjudicate, may_see, save_gold

    s = make_store()
    s.create_topic("t", "", created_by="lead")
    labels = {"alice": {"1": 1}, "bob": {"1": 1}}
    with pytest.raises(NotAllowed, match="may not adjudicate"):
        save_gold(s, s.topic("t"), labels, {}, "alice")
    assert s.names() == [] and save_gold(s, s.topic("t"), labels, {}, "lead") == 1

    t = Topic("floods", "", True, "lead", "2026-01-01")
    assert may_adjudicate("lead", t, "") and not may_adjudicate("alice", t, "")
    assert may_adjudicate("alice", t, "alice, carol") and not may_adjudicate("lead", t, "alice, carol")
    assert not may_see("bob", "alice", t, submitted=set(), adjudicator=False)
    assert may_see("bob", "alice", t, submitted={"bob"}, adjudicator=False)
    assert may_see("bob", "alice", Topic("open", "", False, "lead", ""), submitted=set(), adjudicator=False)


def test_the_adjudicators_decisions_are_kept_as_they_are_made_and_taken_back(make_store):
    """Each decision on a disagreement is in the store the moment it is made (a reload or another server
    finds it), a later one replaces it, None takes it back; topics do not share decisions."""
    s = make_store()
    s.create_topic("floods", "", created_by="lead")
    s.create_topic("fires", "", created_by="lead")
    s.decide("floods", {"1": 1, "2": -1, "3": 0}, "lead")
    assert {i: d for i, (d, _, _) in s.decisions("floods").items()} == {"1": 1, "2": -1, "3": 0}
    assert s.decisions("fires") == {}
    s.decide("floods", {"1": -1, "3": None}, "eva")
    assert {i: (d, by) for i, (d, by, _) in make_store().decisions("floods").items()} == {"1": (-1, "eva"),
                                                                                         "2": (-1, "lead")}
    with pytest.raises(ValueError, match="must be 1, -1, 0 or None"):
        s.decide("floods", {"4": 2}, "lead")
    with pytest.raises(GroupNotFound):
        s.decide("no such topic", {"4": 1}, "lead")
    assert set(s.decisions("floods")) == {"1", "2"}, "a refused call writes nothing"


def test_majority_takes_the_label_more_reviewers_gave_and_leaves_ties():
    from core.teams import agreement, majority

    labels = {"a": {"1": 1, "2": 1, "3": 1, "4": 1}, "b": {"1": 1, "2": -1, "3": -1},
              "c": {"1": -1, "2": -1, "4": -1}}
    ag = agreement(labels)
    assert [d["item_id"] for d in ag.disagreements] == ["1", "2", "3", "4"]
    assert majority(ag.disagreements, ag.annotators) == {"1": 1, "2": -1}, "3 and 4 are one against one"


def test_an_older_sqlite_file_is_brought_up_to_date_in_place(tmp_path):
    """A groups.sqlite written before this schema (no corpus column, no journal, no schema_version)
    keeps its groups and versions and gains the new tables."""
    import sqlite3

    from core.store import GroupStore

    path = tmp_path / "old.sqlite"
    con = sqlite3.connect(path)
    con.executescript("""
        CREATE TABLE groups (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, annotator TEXT NOT NULL DEFAULT '',
            notes TEXT NOT NULL DEFAULT '', created_at TEXT NOT NULL, updated_at TEXT NOT NULL, deleted_at TEXT);
        CREATE TABLE versions (id INTEGER PRIMARY KEY, group_id INTEGER NOT NULL REFERENCES groups(id),
            number INTEGER NOT NULL, annotator TEXT NOT NULL DEFAULT '', created_at TEXT NOT NULL,
            n_included INTEGER NOT NULL, n_excluded INTEGER NOT NULL, session_json TEXT, UNIQUE (group_id, number));
        CREATE TABLE labels (version_id INTEGER NOT NULL REFERENCES versions(id), item_id TEXT NOT NULL,
            label INTEGER NOT NULL CHECK (label IN (1, -1)), PRIMARY KEY (version_id, item_id));
        CREATE TABLE drafts (token TEXT PRIMARY KEY, owner TEXT NOT NULL, updated_at TEXT NOT NULL,
            n_included INTEGER NOT NULL, n_excluded INTEGER NOT NULL, saved INTEGER NOT NULL DEFAULT 0,
            meta_json TEXT NOT NULL DEFAULT '{}', session_json TEXT NOT NULL);
        INSERT INTO groups VALUES (1, 'old', 'eva', 'kept', '2025-01-01', '2025-01-01', NULL);
        INSERT INTO versions VALUES (1, 1, 1, 'eva', '2025-01-01', 2, 1, NULL);
        INSERT INTO labels VALUES (1, 'b', 1), (1, 'a', 1), (1, 'c', -1);
    """)
    con.commit()
    con.close()
    from datetime import datetime, timezone

    upgraded = datetime.now(timezone.utc).isoformat(timespec="milliseconds")
    s = GroupStore(path)
    g = s.load("old")
    assert (g.included, g.excluded, g.notes) == (["b", "a"], ["c"], "kept")
    assert s.save("old", ["a"], [], overwrite=True) == 2
    assert sqlite3.connect(path).execute("SELECT version FROM schema_version").fetchone()[0] == SCHEMA_VERSION
    # drafts discarded from the upgrade on are recorded, and from when: none discarded before is offered back
    [(since,)] = sqlite3.connect(path).execute("SELECT at FROM dropped WHERE corpus='' AND item='since'").fetchall()
    assert since >= upgraded


def test_a_teams_postgresql_groups_are_snapshot_to_a_file_and_what_the_server_loses_comes_back(
        tmp_path, pg_server, monkeypatch, capsys, caplog):
    """precompute.store snapshot, with SEMANNO_DB: a corpus's groups at PostgreSQL copied out into a checked SQLite
    file the app can open; `backups` lists it; when the server loses groups (a table emptied, a dump restored from
    before), `restore` copies back what it lacks and leaves what was saved since as it is. Before, a team's groups
    were backed up only by the server's own tools, and `backups`/`restore` refused with SEMANNO_DB set."""
    from core.db import PostgreSQL
    from core.migrate import lacking, snapshots_of
    from core.store import GroupStore
    from precompute import store as store_job
    from precompute._cli import run_main

    name = f"c{uuid.uuid4().hex[:8]}"
    monkeypatch.setenv("SEMANNO_DATA", str(tmp_path))
    assert run_main(store_job.main, ["snapshot", "--corpus", name]) == 2, "no SEMANNO_DB: SQLite is backed up itself"
    assert "SEMANNO_DB is not set" in caplog.text
    monkeypatch.setenv("SEMANNO_DB", pg_server.dsn)
    pg = GroupStore(PostgreSQL(pg_server.dsn), corpus=name)
    pg.save("g", ["t3", "t1", "t2"], ["t4"], notes="kept")
    pg.save("g", ["t1"], ["t2"], overwrite=True)
    pg.save("deleted one", ["t5"], [])
    pg.delete("deleted one")
    pg.create_topic("floods", "guidelines", created_by="lead")
    pg.save(pg.assign("floods", "alice"), ["t1"], [], topic="floods")
    pg.submit("floods", "alice")
    pg.decide("floods", {"t3": -1}, "lead")
    capsys.readouterr()
    assert store_job.main(["snapshot", "--corpus", name]) == 0
    bar = capsys.readouterr().err  # 4 versions copied, then checked
    assert "versions copied, then checked: 100%" in bar and "8/8" in bar, bar
    [snap] = snapshots_of(tmp_path / name / "groups.sqlite")
    assert snap.path.parent == tmp_path / name / "backups" and snap.path.name.startswith("postgresql-")
    copy = GroupStore(snap.path)  # a SQLite groups file the app opens
    assert (copy.load("g", 1).included, copy.load("g").excluded, copy.load("g").notes) == (["t3", "t1", "t2"], ["t2"],
                                                                                           "kept")
    assert copy.names() == pg.names() and copy.decisions("floods") == pg.decisions("floods")
    assert store_job.main(["backups", "--corpus", name]) == 0
    assert f"{snap.path.name} (" in capsys.readouterr().out

    with pg.db.tx() as db:  # the server loses the group 'g' and the topic's work (an old dump put back)
        db.run("DELETE FROM decisions")
        db.run("DELETE FROM assignments")
        db.run("DELETE FROM topics WHERE corpus=?", (name,))
        db.run("DELETE FROM labels WHERE version_id IN (SELECT v.id FROM versions v JOIN groups g ON g.id=v.group_id "
               "WHERE g.corpus=? AND g.name IN ('g', 'floods · alice'))", (name,))
        db.run("DELETE FROM versions WHERE group_id IN (SELECT id FROM groups WHERE corpus=? AND name IN ('g', "
               "'floods · alice'))", (name,))
        db.run("DELETE FROM groups WHERE corpus=? AND name IN ('g', 'floods · alice')", (name,))
    pg.save("later", ["t9"], [])  # saved on the server since the snapshot
    assert store_job.main(["restore", "--corpus", name]) == 0
    assert (pg.load("g", 1).included, pg.load("g").included, pg.load("later").included) == (["t3", "t1", "t2"],
                                                                                            ["t1"], ["t9"])
    assert pg.decisions("floods") == copy.decisions("floods") and pg.assignments("floods")[0].counted == 1
    assert store_job.main(["restore", "--corpus", name]) == 0  # again: nothing new, nothing overwritten
    assert len(pg.versions("g")) == 2

    assert store_job.main(["snapshot", "--corpus", name]) == 0  # 'later' in it, then removed at the server on purpose
    with pg.db.tx() as db:
        db.run("DELETE FROM labels WHERE version_id IN (SELECT v.id FROM versions v JOIN groups g ON g.id=v.group_id "
               "WHERE g.corpus=? AND g.name='later')", (name,))
        db.run("DELETE FROM versions WHERE group_id IN (SELECT id FROM groups WHERE corpus=? AND name='later')",
               (name,))
        db.run("DELETE FROM groups WHERE corpus=? AND name='later'", (name,))
    capsys.readouterr()
    assert store_job.main(["let-go", "--corpus", name]) == 0  # listed, not let go
    said = capsys.readouterr().out
    assert re.search(r"\n  later  version 1  saved \S+\n1 saved version in all\. Where someone removed them at the "
                     r"server on purpose, --yes lets them go", said), said
    assert store_job.main(["let-go", "--corpus", name, "--yes"]) == 0
    assert "let go: 1 saved version;" in capsys.readouterr().out
    groups_db = tmp_path / name / "groups.sqlite"
    assert lacking(pg, groups_db).versions == 0 and list(lacking(pg, groups_db).gone)[0][0] == "later"
    assert store_job.main(["let-go", "--corpus", name, "--undo"]) == 0 and lacking(pg, groups_db).names == ["later"]
    monkeypatch.delenv("SEMANNO_DB")
    assert run_main(store_job.main, ["let-go", "--corpus", name]) == 2 and "SEMANNO_DB is not set" in caplog.text


def test_the_app_snapshots_a_teams_postgresql_groups_after_saves_by_itself(tmp_path, pg_server, monkeypatch, caplog):
    """A team on PostgreSQL had snapshots only where someone ran `precompute.store snapshot` from cron; a SQLite
    file's backups are the app's own. Now a save through the app's store (open_store) starts a snapshot job when
    the newest is half an hour old or there is none, in a process of its own; looked for at most every minute,
    never while one is being taken (by this server or another). A snapshot that cannot start leaves the save as it
    is."""
    import os
    from datetime import datetime, timedelta, timezone

    import core.db as dbmod
    from core import backup, migrate
    from core.store import GroupStore, open_store

    name = f"c{uuid.uuid4().hex[:8]}"
    monkeypatch.setenv("SEMANNO_DB", pg_server.dsn)
    monkeypatch.setattr(migrate, "_started", {})
    store = open_store(name, tmp_path)
    groups_db = tmp_path / name / "groups.sqlite"
    assert "No snapshot of the team's groups yet" in migrate.snapshots_line(groups_db, name)

    def finished(job):
        assert job is not None, "no snapshot job started"
        code = job.wait(timeout=180)
        assert code == 0, (groups_db.parent / "backups" / migrate.SNAPSHOT_LOG).read_text()

    store.save("floods", ["t1", "t2"], ["t3"])
    first = migrate._started[str(groups_db)][1]
    finished(first)
    [snap] = migrate.snapshots_of(groups_db)
    assert GroupStore(snap.path).load("floods").included == ["t1", "t2"]
    assert migrate.last_failure(groups_db) is None, "a snapshot that finished is named as failed"
    assert not groups_db.exists(), "the team's groups are at the server: no SQLite file is made beside"
    store.save("floods", ["t1"], ["t2"], overwrite=True)  # within the minute: not looked for again
    assert migrate._started[str(groups_db)][1] is first

    monkeypatch.setattr(dbmod, "BACKUP_CHECK_S", 0.0)  # the minute passed
    store.save("floods", ["t1", "t4"], ["t2"], overwrite=True)  # the newest is seconds old: none due
    assert migrate._started[str(groups_db)][1] is None and len(migrate.snapshots_of(groups_db)) == 1
    aged = datetime.now(timezone.utc) - timedelta(seconds=backup.EVERY_S + 60)  # the newest half an hour old
    os.rename(snap.path, snap.path.with_name(f"{migrate.SNAPSHOTS}-{aged.strftime(backup._STAMP)}.sqlite"))
    store.create_topic("rain", "guidelines", created_by="lead")  # any saved work, not only a version
    finished(migrate._started[str(groups_db)][1])
    newest, older = migrate.snapshots_of(groups_db)
    assert GroupStore(newest.path).load("floods").included == ["t1", "t4"] and GroupStore(newest.path).topics()
    assert re.search(r"Snapshots of the team's groups at PostgreSQL: 2 \([\d.]+ MB\), the newest",
                     migrate.snapshots_line(groups_db, name))

    from core.atomic import exclusive

    aged = datetime.now(timezone.utc) - timedelta(seconds=backup.EVERY_S + 30)  # the newest half an hour old again
    os.rename(newest.path, newest.path.with_name(f"{migrate.SNAPSHOTS}-{aged.strftime(backup._STAMP)}.sqlite"))
    with exclusive(groups_db.parent / "backups" / migrate.LOCK):  # another server of the team taking one
        store.save("floods", ["t1"], [], overwrite=True)
    assert migrate._started[str(groups_db)][1] is None, "a second snapshot started beside one being taken"

    (tmp_path / "not a folder").write_text("x")  # where snapshots cannot be written: the save still stands
    broken = open_store(name, tmp_path)
    broken.snapshots_at = tmp_path / "not a folder" / name / "groups.sqlite"
    assert broken.save("kept", ["t5"], []) == 1 and store.load("kept").included == ["t5"]
    assert "no snapshot of corpus" in caplog.text


def test_two_servers_that_look_at_once_start_one_snapshot_and_a_killed_job_does_not_stop_the_next(
        tmp_path, pg_server, monkeypatch):
    """Two app servers of a team (each with its own memory of what it started) that looked for a due snapshot
    within the second or two before a job had made its working folder both started one. The server that starts a
    job now takes the snapshots' lock first and hands it to the job, which holds it until it exits: the other
    server starts none. A job killed, or one that fails, leaves nothing that stops the next; a snapshot from a
    terminal waits for the lock, as the app's jobs do not start beside one."""
    import os
    import signal

    from core import migrate
    from core.atomic import try_lock
    from core.store import open_store
    from precompute import store as store_job

    name = f"c{uuid.uuid4().hex[:8]}"
    monkeypatch.setenv("SEMANNO_DB", pg_server.dsn)
    monkeypatch.setattr(migrate, "_started", {})
    open_store(name, tmp_path)
    groups_db = tmp_path / name / "groups.sqlite"
    backups = groups_db.parent / "backups"

    def run(job):
        assert job is not None, "no snapshot job started"
        assert job.wait(timeout=180) == 0, (backups / migrate.SNAPSHOT_LOG).read_text()

    def lock_free() -> bool:
        lock = try_lock(backups / migrate.LOCK)
        if lock is not None:
            os.close(lock)
        return lock is not None

    first = migrate.after_write(name, groups_db, pg_server.dsn)
    migrate._started.clear()  # the second server remembers nothing of the first's job
    second = migrate.after_write(name, groups_db, pg_server.dsn)
    third = migrate.after_write(name, groups_db, pg_server.dsn, check_s=0.0)
    running = [j for j in (second, third) if j is not None]
    assert not lock_free() and migrate.last_failure(groups_db) is None, "a snapshot being taken"
    for job in running:
        job.wait(timeout=180)
    run(first)
    said = (backups / migrate.SNAPSHOT_LOG).read_text()
    assert f"at CPU niceness {migrate.NICE}" in said, "the app's snapshot job does not yield the CPU to its searches"
    if os.path.exists("/proc/self/autogroup"):  # Linux weighs a session's group by the group's niceness
        assert re.search(rf"session's group of processes: /autogroup-\d+ nice {migrate.NICE}\b", said), said
    assert not running, "a second snapshot job started while the first was starting"
    assert len(migrate.snapshots_of(groups_db)) == 1 and lock_free(), "the job left the lock held"

    migrate._started.clear()
    killed = migrate.after_write(name, groups_db, pg_server.dsn, every_s=0.0)
    os.killpg(killed.pid, signal.SIGKILL)  # a job killed before it made its working folder
    killed.wait(timeout=60)
    migrate._started.clear()
    run(migrate.after_write(name, groups_db, pg_server.dsn, every_s=0.0))
    assert len(migrate.snapshots_of(groups_db)) == 2, "a killed job stopped the next"

    migrate._started.clear()
    failed = migrate.after_write(name, groups_db, "postgresql://semanno@127.0.0.1:1/nothing", every_s=0.0)
    assert failed is not None and failed.wait(timeout=120) != 0
    assert lock_free(), "a job that failed left the lock held, stopping the next"
    assert migrate.last_failure(groups_db), "the failed job is not named"

    monkeypatch.setenv("SEMANNO_DATA", str(tmp_path))  # from a terminal beside the app's job: after it
    migrate._started.clear()
    beside = migrate.after_write(name, groups_db, pg_server.dsn, every_s=0.0)
    niceness = os.nice(0)
    assert store_job.main(["snapshot", "--corpus", name]) == 0 and beside.poll() is not None
    assert os.nice(0) == niceness, "a snapshot from a terminal lowered its own priority"
    run(beside)
    assert len(migrate.snapshots_of(groups_db)) == 4 and lock_free()


def test_a_niceness_for_the_snapshot_job_that_is_not_a_number_is_named_and_the_job_goes_on(monkeypatch, caplog):
    import os

    from core import migrate

    monkeypatch.setenv(migrate.NICE_ENV, "low")
    niceness = os.nice(0)
    with caplog.at_level("WARNING", logger="core.migrate"):
        assert migrate.yield_cpu() is None
    assert os.nice(0) == niceness
    assert "SEMANNO_SNAPSHOT_NICE='low'" in caplog.text and "priority it was started with" in caplog.text


def test_a_snapshot_from_cron_with_nice_yields_the_cpu_and_one_from_a_terminal_leaves_the_terminal_as_it_was(
        tmp_path, pg_server):
    """A snapshot from a terminal or cron ran at the priority it was started with, and a plain ``nice`` before it
    lowers the process, not its session's group of processes, which Linux weighs against the app's. ``--nice 19``
    lowers the process; started with setsid (cron), its session's group too. From a terminal (not the leader of its
    session) the terminal's group is left as it was, and the log says so."""
    import os
    import re
    import subprocess
    import sys

    from core import migrate
    from core.db import PostgreSQL
    from core.store import GroupStore

    name = f"c{uuid.uuid4().hex[:8]}"
    env = {**os.environ, "SEMANNO_DB": pg_server.dsn, "SEMANNO_DATA": str(tmp_path), "PYTHONPATH": str(ROOT)}
    env.pop(migrate.LOCK_ENV, None)
    assert GroupStore(PostgreSQL(pg_server.dsn), corpus=name).save("g", ["t1", "t2"], ["t3"]) == 1  # no app job
    command = [sys.executable, "-m", "precompute.store", "snapshot", "--corpus", name, "--nice", "19"]

    def taken(**how) -> str:
        done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=180, **how)
        assert done.returncode == 0, done.stderr
        return done.stderr

    said = taken(start_new_session=True)  # as `setsid python -m precompute.store snapshot ... --nice 19`
    assert "at CPU niceness 19" in said, said
    if os.path.exists("/proc/self/autogroup"):
        assert re.search(r"session's group of processes: /autogroup-\d+ nice 19\b", said), said
    mine = Path("/proc/self/autogroup").read_text() if os.path.exists("/proc/self/autogroup") else None
    said = taken()  # from this process's session, as from a terminal
    assert "at CPU niceness 19" in said, said
    if mine is not None:
        assert "is left as it is" in said and "setsid" in said, said
        assert Path("/proc/self/autogroup").read_text() == mine, "the terminal's group of processes was lowered"
    assert len(migrate.snapshots_of(tmp_path / name / "groups.sqlite")) == 2
    bad = subprocess.run(command[:-1] + ["20"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "--nice" in bad.stderr and "20" in bad.stderr


def test_a_snapshot_taken_while_the_team_saves_holds_the_server_as_it_was_when_it_began(tmp_path, pg_server):
    """The app starts a snapshot right after a save, while the team goes on saving. A version saved on the server
    while the snapshot copied (in another connection) made its check fail ("verification failed ... nothing was
    copied"): each of its statements saw the server anew. It now reads one view of the server, as it was when it
    began; the version saved meanwhile is in the next snapshot."""
    from core.db import PostgreSQL
    from core.migrate import snapshot
    from core.store import GroupStore

    name = f"c{uuid.uuid4().hex[:8]}"
    pg = GroupStore(PostgreSQL(pg_server.dsn), corpus=name)
    for g in range(3):
        pg.save(f"g{g}", [f"t{g}"], [])
    saved_meanwhile = []

    def tick(n):  # the snapshot's progress: a version copied; meanwhile someone saves
        if n == 1 and not saved_meanwhile:
            saved_meanwhile.append(GroupStore(PostgreSQL(pg_server.dsn), corpus=name).save("g0", ["t9"], [],
                                                                                          overwrite=True))
            GroupStore(PostgreSQL(pg_server.dsn), corpus=name).save("new", ["t8"], [])

    path, report = snapshot(pg, tmp_path / name / "groups.sqlite", progress=tick)
    assert saved_meanwhile == [2] and report.verified == 3
    copy = GroupStore(path)
    assert sorted(copy.names()) == ["g0", "g1", "g2"] and [v[0] for v in copy.versions("g0")] == [1]
    path, report = snapshot(pg, tmp_path / name / "groups.sqlite")  # the next one has them (those of the first
    assert (report.verified, report.reused) == (2, 3) and GroupStore(path).load("g0").included == ["t9"]  # from it)


def test_snapshots_taken_within_a_second_are_both_kept_and_a_killed_ones_leftovers_are_swept(tmp_path):
    """Two snapshots of the same groups within one second: a name is a second, and the second one used to replace the
    first. A snapshot or put-back killed midway (SIGKILL, no clean-up) left a hidden working folder holding a copy of
    the groups, for ever; the next one removes it once an hour old, and leaves a younger one (another's, working)."""
    import os
    import time

    from core.migrate import put_back_snapshot, snapshot, snapshots_of
    from core.store import GroupStore

    groups_db = tmp_path / "c" / "groups.sqlite"
    src = GroupStore(tmp_path / "server.sqlite")  # snapshot copies any store; the team's is PostgreSQL
    src.save("g", ["t1", "t2"], ["t3"])
    backups = groups_db.parent / "backups"
    backups.mkdir(parents=True)
    old, young = backups / ".snapshot-killed", backups / ".put-back-working"
    for left in (old, young):
        left.mkdir()
        (left / "groups.sqlite").write_bytes(b"a copy of the groups")
    hour_ago = time.time() - 3700
    os.utime(old / "groups.sqlite", (hour_ago, hour_ago))
    os.utime(old, (hour_ago, hour_ago))
    first, _ = snapshot(src, groups_db)
    src.save("g", ["t1"], ["t2", "t3"], overwrite=True)
    second, _ = snapshot(src, groups_db)
    assert first != second and first.exists(), "the first snapshot was overwritten by the second"
    assert [c.path for c in snapshots_of(groups_db)] == [second, first]
    assert GroupStore(first).load("g").included == ["t1", "t2"] and GroupStore(second).load("g").included == ["t1"]
    assert not old.exists(), "a killed snapshot's folder was left"
    assert young.exists(), "a folder in use (written to within the hour) was removed"
    dst = GroupStore(tmp_path / "lost.sqlite")
    assert put_back_snapshot(first, dst).verified == 1 and dst.load("g").included == ["t1", "t2"]
    assert sorted(p.name for p in backups.iterdir() if p.name.startswith(".")) == [".put-back-working"]


def test_migrate_copies_everything_verifies_and_can_run_again(tmp_path, pg_server, monkeypatch):
    """precompute.store migrate: a SQLite corpus's groups, versions, drafts, journal, topics and
    assignments end up in PostgreSQL with the same content; a second run copies nothing; the SQLite
    file keeps everything; membership rebuilt from events works on the copy."""
    import uuid

    from core.db import PostgreSQL
    from core.store import GroupStore
    from precompute import store as store_job

    name = f"c{uuid.uuid4().hex[:8]}"
    monkeypatch.setenv("SEMANNO_DATA", str(tmp_path))
    src = GroupStore(tmp_path / name / "groups.sqlite")
    ids = [f"t{i}" for i in range(20)]
    sess = Session()
    sess.add_search("keyword", {"query": "x"}, range(8))
    sess.toggle(2)
    src.append_journal("w1", "alice", journal_of(sess, ids))
    src.save("g", [ids[r] for r in sess.included], [ids[r] for r in sess.excluded], work="w1", saved_by="alice")
    src.save("g", ["t1"], ["t2"], overwrite=True)
    src.save("deleted one", ["t5"], [])
    src.delete("deleted one")
    src.sync_draft("tok", "alice", keep=0, steps=[], n_included=0, n_excluded=0, saved=False, browser="", writer="w")
    left = f"left-{name}"  # draft tokens are one key across the shared server's corpora
    src.sync_draft(left, "alice", keep=0, steps=[], n_included=0, n_excluded=0, saved=False, browser="", writer="w",
                   meta={"behind": {"included": 7, "excluded": 1}}, unsaved_behind=8)  # a group left for a new one
    src.create_topic("floods", "guidelines", created_by="lead")
    src.save(src.assign("floods", "alice"), ["t1"], [], topic="floods")
    src.submit("floods", "alice")
    src.decide("floods", {"t3": -1, "t4": 0}, "lead")
    assert store_job.main(["migrate", "--corpus", name, "--to", pg_server.dsn]) == 0
    dst = GroupStore(PostgreSQL(pg_server.dsn), corpus=name)
    assert dst.load("g", 1).included == src.load("g", 1).included and dst.load("g").excluded == ["t2"]
    assert sorted(dst.membership("g", 1)[1]) == ["t2"]
    assert [g.name for g in dst.list(include_deleted=True)] == [g.name for g in src.list(include_deleted=True)]
    assert dst.load_draft("tok") is not None and [a.annotator for a in dst.assignments("floods")] == ["alice"]
    assert [(d.token, d.unsaved_behind) for d in dst.drafts("alice")] == [(left, 8)], "still offered, not pruned"
    assert dst.decisions("floods") == src.decisions("floods") and len(dst.decisions("floods")) == 2
    assert dst.assignments("floods")[0].counted == 1 == src.assignments("floods")[0].counted
    assert store_job.main(["migrate", "--corpus", name, "--to", pg_server.dsn]) == 0  # again: nothing new
    assert len(dst.versions("g")) == 2 and src.names() == ["floods · alice", "g"], "the SQLite file keeps everything"
    dst.save("g", ["other"], [], overwrite=True)
    src.save("g", ["mine"], [], overwrite=True)  # version 3 differs on the two sides now
    from precompute._cli import run_main

    assert run_main(store_job.main, ["migrate", "--corpus", name, "--to", pg_server.dsn]) == 2
    assert dst.load("g").included == ["other"], "refused, never overwritten"


def test_a_version_the_server_lost_and_saved_again_under_its_number_is_named_and_put_back_beside_it(tmp_path):
    """The server loses version 2 of a group, and an annotator saves the group again: the new version 2 holds
    other labels. The comparison by group and number said nothing was lacking (the lost work unnamed), and a
    put-back of the older snapshot was refused whole. Now it is named, and put back beside the server's group as a
    group of its own; the server's own versions are left as they are, and a second loss goes beside the first."""
    from core.migrate import lacking, put_back_lacking, put_back_snapshot, snapshot
    from core.store import GroupStore

    groups_db = tmp_path / "c" / "groups.sqlite"
    server = GroupStore(tmp_path / "server.sqlite")  # any store; the team's is PostgreSQL (tests/test_team.py)

    def lose_version_2():
        with server.db.tx() as db:
            [(vid,)] = db.run("SELECT v.id FROM versions v JOIN groups g ON g.id=v.group_id WHERE g.name='floods' "
                              "AND v.number=2")
            db.run("DELETE FROM labels WHERE version_id=?", (vid,))
            db.run("DELETE FROM versions WHERE id=?", (vid,))

    server.save("floods", ["t1", "t2"], ["t3"], topic="rivers")
    server.save("floods", ["t1"], ["t2", "t3"], overwrite=True)
    server.save("fires", ["t4"], [])
    older, _ = snapshot(server, groups_db)
    before, _ = snapshot(server, groups_db)  # two taken before the loss: the newer one is put back, alone
    lose_version_2()
    assert server.save("floods", ["t5"], [], overwrite=True) == 2, "saved again under the lost one's number"
    after, _ = snapshot(server, groups_db)  # taken after the loss: it holds the new version 2

    found = lacking(server, groups_db)
    assert (found.versions, found.names, found.beside) == (1, ["floods"], ["floods"])
    assert [k.path for k in found.snapshots] == [before, older]
    with pytest.raises(ValueError, match="'floods' version 2 is in PostgreSQL already with other labels"):
        put_back_snapshot(before, server)  # without beside: refused whole, as before
    [(kept, report)] = put_back_lacking(server, found)
    assert kept.path == before, "the older snapshot, which held nothing more, was copied again"
    assert report.beside == {"floods": "floods (put back)"} and "as ‘floods (put back)’" in report.line()
    assert server.load("floods").included == ["t5"], "the server's own version changed"
    assert server.load("floods (put back)").included == ["t1"]
    assert server.load("floods (put back)", version=1).included == ["t1", "t2"]
    with server.db.read() as db:
        topics = dict(db.run("SELECT name, topic FROM groups"))
    assert topics["floods"] == "rivers" and topics["floods (put back)"] is None, "a copy beside took the topic"
    assert lacking(server, groups_db).versions == 0, "a version put back beside still counted as lacking"
    again = put_back_snapshot(before, server, beside=True)
    assert not again.copied and not again.beside and again.already == 3, "a second put-back copied it again"

    lose_version_2()  # lost again, and saved a third time: the later snapshot's version 2 goes beside too
    server.save("floods", ["t6"], [], overwrite=True)
    found = lacking(server, groups_db)
    assert (found.versions, found.beside, [k.path for k in found.snapshots]) == (1, ["floods"], [after])
    [(_, report)] = put_back_lacking(server, found)
    assert report.beside == {"floods": "floods (put back 2)"}, "the first copy beside holds another version 2"
    assert server.load("floods (put back 2)").included == ["t5"] and server.load("floods").included == ["t6"]
    assert server.load("floods (put back)").included == ["t1"] and lacking(server, groups_db).versions == 0
    assert set(server.names()) == {"fires", "floods", "floods (put back)", "floods (put back 2)"}

    server.save("rains", ["t7"], [])  # lost and saved again with the same labels: nothing is lacking
    server.save("rains", ["t7", "t8"], [], overwrite=True)
    snapshot(server, groups_db)
    with server.db.tx() as db:
        db.run("DELETE FROM labels WHERE version_id=(SELECT v.id FROM versions v JOIN groups g ON g.id=v.group_id "
               "WHERE g.name='rains' AND v.number=2)")
        db.run("DELETE FROM versions WHERE number=2 AND group_id=(SELECT id FROM groups WHERE name='rains')")
    assert lacking(server, groups_db).names == ["rains"]
    server.save("rains", ["t8", "t7"], [], overwrite=True)
    assert lacking(server, groups_db).versions == 0, "a version saved again with the same labels named as lost"


def test_a_snapshot_with_no_room_for_it_is_refused_before_it_writes_and_snapshots_keep_to_a_room(tmp_path,
                                                                                                  monkeypatch):
    """A snapshot had no room check of its own: on a nearly full disk it wrote its copy and the check's copy until the
    disk filled, failing meanwhile the saves of the app's SQLite files there (and the server's, on the same disk). Now
    it is refused before it writes, with a message that names the room asked for and free, and the snapshots kept stay.
    And snapshots were kept by count alone, however large: now, like a SQLite file's backups, no more than a room
    (the newest two always, and one holding what the server lost past it)."""
    import shutil

    from core import backup, migrate
    from core.embed import NoRoom
    from core.migrate import expected_size, snapshot, snapshots_line, snapshots_of
    from core.store import GroupStore

    groups_db = tmp_path / "c" / "groups.sqlite"
    server = GroupStore(tmp_path / "server.sqlite", corpus="c")
    ids = [f"{1_800_000_000_000_000_000 + i}" for i in range(4000)]  # tweets' ids
    server.save("floods", ids[:3000], ids[3000:3100])
    server.save("floods", ids[:2000], ids[2000:3100], overwrite=True)
    first, _ = snapshot(server, groups_db)
    assert expected_size(server, []) >= first.stat().st_size * 0.9, "a first snapshot's size guessed far too small"
    disk = shutil.disk_usage(tmp_path)
    asked = int(2 * expected_size(server, snapshots_of(groups_db)) + backup.SPARE)
    monkeypatch.setattr(migrate.shutil, "disk_usage", lambda where: disk._replace(free=int(asked) - 1))
    with pytest.raises(NoRoom, match=r"a snapshot of corpus c.s groups \(its copy and the check.s, [\d,]+ MB each\) "
                                      r"needs about [\d.]+ GB free on the disk of .*backups, and [\d.]+ GB are free: "
                                      r"nothing was written"):
        snapshot(server, groups_db)
    assert [c.path for c in snapshots_of(groups_db)] == [first], "a refused snapshot touched the kept ones"
    assert not list(groups_db.parent.joinpath("backups").glob(".snapshot-*")), "a refused snapshot left a folder"
    monkeypatch.setattr(migrate.shutil, "disk_usage", lambda where: disk._replace(free=first.stat().st_size))
    lost = GroupStore(tmp_path / "lost.sqlite", corpus="c")  # putting one back reads it from a copy beside it
    with pytest.raises(NoRoom, match=r"reading postgresql-\S+ back .* needs about .* GB are free: nothing was put "
                                     r"back"):
        migrate.put_back_snapshot(first, lost)
    assert lost.names() == [] and not list(groups_db.parent.joinpath("backups").glob(".put-back-*"))
    monkeypatch.setattr(migrate.shutil, "disk_usage", lambda where: disk._replace(free=int(asked)))
    second, _ = snapshot(server, groups_db)  # as much room as it asks for: taken
    assert [c.path for c in snapshots_of(groups_db)] == [second, first]
    monkeypatch.undo()

    monkeypatch.setattr(backup, "ROOM_FLOOR", 0)
    monkeypatch.setattr(backup, "ROOM_TIMES", 2)  # the room of two snapshots, so the newest two are kept
    with server.db.tx() as db:  # the server loses version 2, which both snapshots hold
        db.run("DELETE FROM labels WHERE version_id=(SELECT id FROM versions WHERE number=2)")
        db.run("DELETE FROM versions WHERE number=2")
    server.save("fires", ids[:10], [])
    third, _ = snapshot(server, groups_db)
    fourth, _ = snapshot(server, groups_db)
    assert [c.path for c in snapshots_of(groups_db)] == [fourth, third, second], \
        "snapshots past the room kept, or the newest one holding the lost version removed with them"
    assert re.search(r"PostgreSQL: 3 \([\d.]+ MB; 1 older than the newest 2 kept, as they hold saved versions the "
                     r"server lacks\)", snapshots_line(groups_db, "c"))


def test_the_snapshot_and_restore_jobs_with_no_room_end_in_one_line_that_names_it(tmp_path, pg_server, monkeypatch,
                                                                                   caplog):
    """The job (``precompute.store snapshot``, started by the app or cron) refused for want of room ends in one
    line that says so, not a traceback: its last line is what the Groups page shows of a failed snapshot. So does
    ``restore``, which reads a snapshot from a copy of it."""
    import shutil

    from core import migrate
    from core.db import PostgreSQL
    from core.store import GroupStore
    from precompute import store as store_job

    name = f"c{uuid.uuid4().hex[:8]}"
    monkeypatch.setenv("SEMANNO_DATA", str(tmp_path))
    monkeypatch.setenv("SEMANNO_DB", pg_server.dsn)
    GroupStore(PostgreSQL(pg_server.dsn), corpus=name).save("floods", ["t1", "t2"], ["t3"])
    disk = shutil.disk_usage(tmp_path)
    monkeypatch.setattr(migrate.shutil, "disk_usage", lambda where: disk._replace(free=10_000_000))
    assert store_job.run_main(store_job.main, ["snapshot", "--corpus", name]) == 2
    said = [r.getMessage() for r in caplog.records if r.levelname == "ERROR"]
    assert said and said[-1].startswith(f"a snapshot of corpus {name}'s groups (its copy and the check's") \
        and "0.0 GB are free: nothing was written" in said[-1], said
    assert migrate.snapshots_of(tmp_path / name / "groups.sqlite") == []
    monkeypatch.undo()
    monkeypatch.setenv("SEMANNO_DATA", str(tmp_path))
    monkeypatch.setenv("SEMANNO_DB", pg_server.dsn)
    assert store_job.run_main(store_job.main, ["snapshot", "--corpus", name]) == 0
    disk = shutil.disk_usage(tmp_path)
    monkeypatch.setattr(migrate.shutil, "disk_usage", lambda where: disk._replace(free=10_000))
    assert store_job.run_main(store_job.main, ["restore", "--corpus", name]) == 2  # so is restore's copy to read
    said = [r.getMessage() for r in caplog.records if r.levelname == "ERROR"]
    assert said[-1].startswith("reading postgresql-") and "nothing was put back" in said[-1], said


def test_a_snapshot_holding_versions_the_server_lost_is_kept_past_the_newest_ones(tmp_path, caplog, monkeypatch):
    """Snapshots were kept by count alone (the newest eight, four hours of saving and more). A loss at the server
    that nobody saw on the Groups page within that time rolled out of them: the lost version was in no snapshot
    any more. Now one beyond the count that holds a version neither the server nor a newer kept snapshot holds is
    kept (the newest of those that hold it), and removed once the server holds it again."""
    from core import backup
    from core.migrate import lacking, put_back_lacking, snapshot, snapshots_line, snapshots_of
    from core.store import GroupStore

    groups_db = tmp_path / "c" / "groups.sqlite"
    server = GroupStore(tmp_path / "server.sqlite")
    server.save("floods", ["t1", "t2"], ["t3"])
    server.save("floods", ["t1"], ["t2", "t3"], overwrite=True)
    first, _ = snapshot(server, groups_db, keep=2)
    second, _ = snapshot(server, groups_db, keep=2)  # both hold version 2
    with server.db.tx() as db:
        db.run("DELETE FROM labels WHERE version_id=(SELECT id FROM versions WHERE number=2)")
        db.run("DELETE FROM versions WHERE number=2")
    server.save("fires", ["t4"], [])
    third, _ = snapshot(server, groups_db, keep=2)
    fourth, _ = snapshot(server, groups_db, keep=2)
    assert [c.path for c in snapshots_of(groups_db)] == [fourth, third, second], \
        "the newest snapshot holding the lost version was removed (or an older one that holds it too was kept)"
    assert any("kept past the newest 2: it holds 1 saved version the server lacks (of floods)" in r.getMessage()
               for r in caplog.records)
    monkeypatch.setattr(backup, "KEEP", 2)  # the app's count, which the Groups page's line reads
    assert re.search(r"PostgreSQL: 3 \([\d.]+ MB; 1 older than the newest 2 kept, as they hold saved versions the "
                     r"server lacks\), the newest", snapshots_line(groups_db, "c"))
    monkeypatch.undo()
    fifth, _ = snapshot(server, groups_db, keep=2)
    assert second in [c.path for c in snapshots_of(groups_db)], "kept only once"
    assert lacking(server, groups_db).names == ["floods"]

    put_back_lacking(server, lacking(server, groups_db))
    assert server.load("floods", version=2).included == ["t1"]
    sixth, _ = snapshot(server, groups_db, keep=2)
    assert [c.path for c in snapshots_of(groups_db)] == [sixth, fifth], "kept after the server holds it again"


def test_a_draft_the_server_lost_is_kept_in_snapshots_and_put_back_but_not_one_discarded_before_it_recorded(
        tmp_path, caplog):
    """A draft of unsaved work the server lost (not discarded: the server records what is) is found in the
    snapshots, and the newest snapshot that holds it is kept past the newest ones until the server holds it again,
    as a lost version is. A draft gone from the server that was written before the server recorded discards (a
    server of an earlier version) is not: it may have been discarded. A record of a discard goes once a draft
    would have been pruned untouched."""
    from datetime import datetime, timedelta, timezone

    from core.migrate import lacking, put_back_lacking, snapshot, snapshots_of
    from core.store import ABANDONED_DRAFT_DAYS, GroupStore

    groups_db = tmp_path / "c" / "groups.sqlite"
    server = GroupStore(tmp_path / "server.sqlite")
    step = {"kind": "search", "method": "keyword", "params": {"q": "flood"}, "changes": [[1, 0, 1]], "id": "s1"}
    for token, owner in (("lost", "eva"), ("older", "jan"), ("discarded", "eva"), ("saved", "eva")):
        assert server.sync_draft(token, owner, keep=0, steps=[step], n_included=1, n_excluded=0,
                                 saved=token == "saved", browser="B", writer="w")
    now = datetime.now(timezone.utc)
    def ago(days: int) -> str:
        return (now - timedelta(days=days)).isoformat(timespec="milliseconds")

    with server.db.tx() as db:  # "older": written before the server recorded discards (upgraded yesterday)
        db.run("UPDATE dropped SET at=? WHERE item='since'", (ago(1),))
        db.run("UPDATE drafts SET updated_at=? WHERE token='older'", (ago(2),))
    first, _ = snapshot(server, groups_db, keep=2)
    assert server.delete_draft("discarded", "eva")
    with server.db.tx() as db:  # lost at the server, as is the one written before it recorded, and a saved one
        for token in ("lost", "older", "saved"):
            db.run("DELETE FROM draft_steps WHERE token=?", (token,))
            db.run("DELETE FROM drafts WHERE token=?", (token,))
    assert lacking(server, groups_db).drafts == {"lost": "eva"}, "only the unsaved draft written since it records"
    assert bool(lacking(server, groups_db)) and lacking(server, groups_db).versions == 0
    second, _ = snapshot(server, groups_db, keep=2)
    third, _ = snapshot(server, groups_db, keep=2)
    assert [c.path for c in snapshots_of(groups_db)] == [third, second, first], "the snapshot holding it was removed"
    assert any("kept past the newest 2: it holds 1 unsaved draft the server lacks;" in r.getMessage()
               for r in caplog.records), [r.getMessage() for r in caplog.records]

    put_back_lacking(server, lacking(server, groups_db))
    assert server.load_draft("lost").steps == (step,) and not lacking(server, groups_db)
    assert server.load_draft("discarded") is None and server.load_draft("older") is None
    fourth, _ = snapshot(server, groups_db, keep=2)
    assert [c.path for c in snapshots_of(groups_db)] == [fourth, third], "kept after the server holds it again"

    later = now + timedelta(days=ABANDONED_DRAFT_DAYS + 1)
    discards = "SELECT item FROM dropped WHERE item LIKE 'draft %'"
    with server.db.read() as db:
        assert [tuple(r) for r in db.run(discards)] == [("draft discarded",)]
    server.prune_drafts(now=later)
    with server.db.read() as db:
        assert not db.run(discards), "the record of a discard stays for ever"


def test_a_discard_and_a_taking_back_whose_record_the_server_lost_are_known_from_a_snapshot_that_holds_it(tmp_path):
    """A server brought back from an older dump lacks the record of a draft discarded and of a decision taken back
    since: the Groups page offered them again as lost, put them back from a snapshot taken before, and kept that
    snapshot past the newest ones for them. A later snapshot holds the records: now they count, and only what the
    server lost with them (a draft, a decision, a saved version) is offered and put back."""
    from core.migrate import lacking, put_back_lacking, snapshot, snapshots_of
    from core.store import GroupStore

    groups_db = tmp_path / "c" / "groups.sqlite"
    server = GroupStore(tmp_path / "server.sqlite")
    step = {"kind": "search", "method": "keyword", "params": {"q": "flood"}, "changes": [[1, 0, 1]], "id": "s1"}
    for token, owner in (("discarded", "eva"), ("lost", "jan")):
        assert server.sync_draft(token, owner, keep=0, steps=[step], n_included=1, n_excluded=0, saved=False,
                                 browser="B", writer="w")
    server.create_topic("floods", "", created_by="lead")
    server.decide("floods", {"t1": 1, "t2": -1}, "lead")
    server.save("quakes", ["t1", "t2"], ["t3"])
    server.save("quakes", ["t1"], ["t2", "t3"], overwrite=True)
    first, _ = snapshot(server, groups_db, keep=2)
    assert server.delete_draft("discarded", "eva")
    server.decide("floods", {"t1": None}, "lead")
    with server.db.tx() as db:  # lost at the server, with a saved version, before the next snapshot
        db.run("DELETE FROM draft_steps WHERE token='lost'")
        db.run("DELETE FROM drafts WHERE token='lost'")
        db.run("DELETE FROM decisions WHERE item_id='t2'")
        db.run("DELETE FROM labels WHERE version_id=(SELECT id FROM versions WHERE number=2)")
        db.run("DELETE FROM versions WHERE number=2")
    second, _ = snapshot(server, groups_db, keep=2)
    with server.db.tx() as db:  # and then the records of the discard and the taking back
        assert db.run("DELETE FROM dropped WHERE item<>'since' RETURNING item")

    found = lacking(server, groups_db)
    assert found.drafts == {"lost": "jan"}, "a draft its owner discarded is offered again"
    assert found.decisions == {("floods", "t2")}, "a decision taken back is offered again"
    assert found.names == ["quakes"] and [c.path for c in found.snapshots] == [first]
    put_back_lacking(server, found)
    assert server.load_draft("lost").steps == (step,) and server.load("quakes", version=2).included == ["t1"]
    assert server.load_draft("discarded") is None, "the draft discarded came back"
    assert set(server.decisions("floods")) == {"t2"}, "the decision taken back came back"
    assert not lacking(server, groups_db)
    third, _ = snapshot(server, groups_db, keep=2)
    assert [c.path for c in snapshots_of(groups_db)] == [third, second], "kept for what was discarded"


def test_versions_removed_at_the_server_on_purpose_can_be_let_go_and_their_snapshots_go_a_week_later(tmp_path, capsys,
                                                                                                     monkeypatch):
    """A version removed at the server on purpose kept its snapshot past the newest ones for good, and the Groups
    page warned of it and offered it back on every visit. Now the team can let it go: it is no longer lacking nor
    put back (the versions lost beside it still are), its snapshot is kept a week more, then removed as the others
    are; until then letting go can be undone. A damaged record lets nothing go."""
    from datetime import datetime, timedelta, timezone

    from core.migrate import LET_GO, folder, lacking, let_go, let_go_of, put_back_lacking, snapshot, snapshots_of
    from core.store import GroupStore
    from precompute import store as store_job

    groups_db = tmp_path / "c" / "groups.sqlite"
    server = GroupStore(tmp_path / "server.sqlite")
    server.save("floods", ["t1", "t2"], ["t3"])
    server.save("floods", ["t1"], ["t2", "t3"], overwrite=True)
    server.save("spam", ["t9"], [])
    first, _ = snapshot(server, groups_db, keep=1)
    with server.db.tx() as db:  # spam removed on purpose, floods' second version lost
        db.run("DELETE FROM labels WHERE version_id IN (SELECT v.id FROM versions v JOIN groups g ON "
               "g.id=v.group_id WHERE g.name='spam' OR v.number=2)")
        db.run("DELETE FROM versions WHERE id IN (SELECT v.id FROM versions v JOIN groups g ON g.id=v.group_id "
               "WHERE g.name='spam' OR v.number=2)")
        db.run("DELETE FROM groups WHERE name='spam'")
    found = lacking(server, groups_db)
    assert (found.names, found.versions, found.gone) == (["floods", "spam"], 2, {})
    spam = {v for v in found.missing if v[0] == "spam"}
    let_go(groups_db, spam)
    found = lacking(server, groups_db)
    assert (found.names, found.versions, set(found.gone)) == (["floods"], 1, spam), "spam is still lacking"
    monkeypatch.setenv("SEMANNO_DATA", str(tmp_path))
    assert store_job.list_snapshots("c", "postgresql://team@db/groups", None) == 0
    assert "\n1 saved version let go on the Groups page (removed at the server on purpose), of spam: restore puts " \
           "it back" in capsys.readouterr().out
    put_back_lacking(server, found)
    assert server.load("floods", version=2).included == ["t1"]
    assert "spam" not in server.names(), "a version let go was put back"

    second, _ = snapshot(server, groups_db, keep=1)
    assert [c.path for c in snapshots_of(groups_db)] == [second, first], "let go today: its snapshot went at once"
    let_go(groups_db, [])  # undone: warned of again
    assert lacking(server, groups_db).names == ["spam"]
    let_go(groups_db, spam, at=datetime.now(timezone.utc) - timedelta(days=8))
    (folder(groups_db) / LET_GO).write_text("{not json")  # a damaged record: nothing let go, nothing removed
    third, _ = snapshot(server, groups_db, keep=1)
    assert [c.path for c in snapshots_of(groups_db)] == [third, first] and lacking(server, groups_db).versions == 1
    let_go(groups_db, spam, at=datetime.now(timezone.utc) - timedelta(days=8))
    fourth, _ = snapshot(server, groups_db, keep=1)
    assert [c.path for c in snapshots_of(groups_db)] == [fourth], "let go a week ago: its snapshot was kept"
    assert lacking(server, groups_db).versions == 0 and let_go_of(groups_db) == {}, \
        "the record still names versions no snapshot holds"


def test_a_snapshot_takes_the_labels_of_versions_unchanged_since_the_last_from_it(tmp_path, caplog):
    """A snapshot read every label of every version from the server every half hour of saving (~11 s of a core
    for 2M labels). A saved version never changes: now the labels of one the newest snapshot holds as the server
    does (group, number, time of saving, counts) are copied from that snapshot, and counted. A version lost and
    saved again, and one saved since, are read from the server; the first snapshot of a day reads every one; a
    previous snapshot that does not hold what it says is not used. Every snapshot holds the server's labels."""
    import sqlite3
    from datetime import datetime, timedelta, timezone

    from core import backup
    from core.migrate import snapshot, snapshots_of
    from core.store import GroupStore

    def same_as_server(path):
        copy = GroupStore(path)
        for name in server.names():
            for number, *_ in server.versions(name):
                a, b = server.load(name, number), copy.load(name, number)
                assert (a.included, a.excluded) == (b.included, b.excluded), (name, number)
        assert copy.names() == server.names()

    groups_db = tmp_path / "c" / "groups.sqlite"
    server = GroupStore(tmp_path / "server.sqlite")
    server.save("floods", ["t3", "t1", "t2"], ["t4"])
    server.save("floods", ["t1"], ["t2", "t3"], overwrite=True)
    server.save("fires", ["t9", "t5"], ["t6"])
    first, report = snapshot(server, groups_db)
    assert report.reused == 0 and report.verified == 3
    with server.db.tx() as db:  # floods' second version lost, and saved again with other labels; a new one of fires
        db.run("DELETE FROM labels WHERE version_id=(SELECT id FROM versions WHERE number=2)")
        db.run("DELETE FROM versions WHERE number=2")
    server.save("floods", ["t2"], ["t1"], overwrite=True)
    server.save("fires", ["t5", "t8", "t9"], [], overwrite=True)
    second, report = snapshot(server, groups_db)
    assert (report.reused, report.verified) == (2, 2), report.line()
    assert "; the labels of 2 versions taken from the previous snapshot (unchanged at the server since) and " \
           "counted" in report.line()
    same_as_server(second)

    for n, old in enumerate((first, second)):  # taken yesterday: the first of today reads every label again
        stamp = datetime.now(timezone.utc) - timedelta(days=1, seconds=10 - n)
        old.rename(old.with_name(f"postgresql-{stamp.strftime(backup._STAMP)}.sqlite"))
    third, report = snapshot(server, groups_db)
    assert (report.reused, report.verified) == (0, 4)
    con = sqlite3.connect(third)  # the newest short of a version's labels: not used
    con.execute("DELETE FROM labels WHERE rowid=(SELECT MIN(rowid) FROM labels)")
    con.commit()
    con.close()
    fourth, report = snapshot(server, groups_db)
    assert (report.reused, report.verified) == (0, 4) and "could not be taken from " + third.name in caplog.text
    same_as_server(fourth)
    fifth, report = snapshot(server, groups_db)
    assert (report.reused, report.verified) == (4, 0)
    same_as_server(fifth)
    assert len(snapshots_of(groups_db)) == 5
