"""A team on one corpus, through the pages (AppTest): a topic with guidelines assigned to two people,
each builds and submits their own group (blind until they submit), the Review page measures agreement
(checked against scikit-learn), lists the disagreements with the search that brought each text in,
and only the adjudicator saves the gold version."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from sklearn.metrics import cohen_kappa_score
from streamlit.runtime.context import StreamlitHeaders
from streamlit.testing.v1 import AppTest

from core.store import GroupStore
from tests.conftest import ROOT
from ui.text import unescape

SECRET = "team-secret-0123456789"


def as_user(monkeypatch, who: str) -> None:
    monkeypatch.setenv("SEMANNO_PROXY_USER_HEADER", "X-Remote-User")
    monkeypatch.setenv("SEMANNO_PROXY_SECRET", SECRET)
    monkeypatch.setattr("ui.access.request_headers",
                        lambda: StreamlitHeaders([("X-Remote-User", who), ("X-Semanno-Proxy-Secret", SECRET)]))


def app(page: str) -> AppTest:
    return AppTest.from_file(str(ROOT / page), default_timeout=120)


def submitted(store: GroupStore, topic: str, creator: str, work) -> None:
    """A topic (not blind) whose annotators each saved and submitted a group: ``work`` is (who, included ids,
    excluded ids) per annotator, as the Team and Annotate pages would have made it."""
    store.create_topic(topic, "", creator, blind=False)
    for who, inc, exc in work:
        store.save(store.assign(topic, who), inc, exc, annotator=who, topic=topic)
        store.submit(topic, who)


def test_a_groups_topic_is_the_one_it_was_assigned_for_and_must_exist(tmp_path):
    from core.teams import gold_group, topic_group
    from ui.team_panel import topic_of

    store = GroupStore(tmp_path / "groups.sqlite")
    store.create_topic("floods", "rivers", "alice")
    store.create_topic("a · b", "", "bob", blind=False)
    store.assign("floods", "carol")
    assert store.topic(topic_of(store, topic_group("floods", "carol"))).guidelines == "rivers"
    assert topic_of(store, gold_group("a · b")) == "a · b"
    assert topic_of(store, "floods") is None  # a group of its own, not a topic's
    assert topic_of(store, topic_group("fires", "carol")) is None  # no such topic (deleted, another corpus)


def test_back_from_annotate_the_team_page_shows_the_topic_being_worked_on(tweets, monkeypatch):
    store = GroupStore(tweets / "tweets" / "groups.sqlite")
    for topic in ("older", "newer"):
        store.create_topic(topic, f"guidelines of {topic}", "alice")
        store.assign(topic, "alice")
    as_user(monkeypatch, "alice")
    team = app("pages/7_Team.py").run()
    assert team.selectbox(key="team_topic").value == "older"  # nothing worked on yet: the first topic
    team.selectbox(key="team_topic").set_value("newer").run()
    team.button(key="team_work").click().run()
    back = app("pages/7_Team.py")  # Annotate, then Team again: the picker's state went with the page left
    back.session_state["group_meta"] = team.session_state["group_meta"]
    back.run()
    assert not back.exception
    assert back.selectbox(key="team_topic").value == "newer" and back.text[0].value == "guidelines of newer"
    review = app("pages/8_Review.py")  # then Review: the topic last picked, with no group being built
    review.session_state["topic_last_picked"] = back.session_state["topic_last_picked"]
    review.run()
    assert not review.exception and review.selectbox(key="rv_topic").value == "newer"


def work_on(monkeypatch, who: str, exclude: int) -> None:
    """``who`` opens their group for the topic, takes 10 keyword hits, excludes the first ``exclude``,
    saves and submits."""
    as_user(monkeypatch, who)
    team = app("pages/7_Team.py").run()
    assert not team.exception, team.exception
    assert team.button(key="team_submit").disabled, "nothing saved yet: nothing to submit"
    guidelines = team.text[0].value
    team.button(key="team_work").click().run()
    ann = app("pages/1_Annotate.py")
    ann.session_state["session"] = team.session_state["session"]
    ann.session_state["group_meta"] = team.session_state["group_meta"]
    ann.run()
    assert ann.text_input(key="save_name").value == f"floods · {who}"
    # the topic's guidelines are one click away while labelling
    assert "Guidelines of the topic ‘floods’" in [e.label for e in ann.expander]
    assert guidelines in [t.value for t in ann.text]
    # their group opened empty (nothing saved yet): the page says how to begin
    assert any("Start with a keyword search" in i.value for i in ann.info), [i.value for i in ann.info]
    ann.text_input(key="kw_query").set_value("ockovani")
    ann.button(key="FormSubmitter:kw_form-Search (KW)").click().run()
    for key in [b.key for b in ann.button if b.key and b.key.startswith("tog_")][:exclude]:
        ann.button(key=key).click().run()
    ann.button(key="save_btn").click().run()
    assert any("Saved group" in s.value for s in ann.success), [e.value for e in ann.error + ann.warning]
    team = app("pages/7_Team.py").run()
    team.button(key="team_submit").click().run()
    assert not team.exception


def test_two_annotators_agree_disagree_and_the_adjudicator_makes_gold(tweets, monkeypatch):
    as_user(monkeypatch, "alice")
    team = app("pages/7_Team.py").run()
    assert any("No topic yet" in i.value for i in team.info)
    team.text_input(key="team_new_name").set_value("floods")
    team.text_area(key="team_new_guidelines").set_value("Tweets on vaccination, not on testing.")
    team.text_input(key="team_new_people").set_value("alice, bob")
    team.button(key="FormSubmitter:team_new-Create the topic").click().run()
    assert not team.exception and any("Created the topic" in s.value for s in team.success)
    work_on(monkeypatch, "alice", exclude=2)
    as_user(monkeypatch, "bob")
    review = app("pages/8_Review.py").run()
    assert any("submit yours first" in i.value for i in review.info), "blind until bob submits"
    work_on(monkeypatch, "bob", exclude=4)
    store = GroupStore(tweets / "tweets" / "groups.sqlite")
    a, b = store.load("floods · alice"), store.load("floods · bob")
    progress = {x.annotator: x for x in store.assignments("floods")}
    assert progress["alice"].reviewed == progress["bob"].reviewed == 10 and progress["bob"].submitted_at
    review = app("pages/8_Review.py").run()  # bob: may see, may not adjudicate
    assert not review.exception and not review.get("data_editor") and any("adjudicator" in c.value for c in review.caption)
    la = {**{i: 1 for i in a.included}, **{i: -1 for i in a.excluded}}
    lb = {**{i: 1 for i in b.included}, **{i: -1 for i in b.excluded}}
    both = sorted(set(la) & set(lb))
    kappa = next(m for m in review.metric if m.label == "Cohen's kappa").value
    assert float(kappa) == pytest.approx(cohen_kappa_score([la[i] for i in both], [lb[i] for i in both]), abs=1e-3)
    as_user(monkeypatch, "alice")
    review = app("pages/8_Review.py").run()
    table = review.get("data_editor")[0]
    assert len(table.value) == 2 and len(both) == 10 and review.button(key="rv_save").disabled  # 2 disagreements, none decided yet
    from core.corpus import load_corpus

    corpus = load_corpus("tweets")
    truth = dict(zip(corpus.frame["id"], corpus.frame["text"]))
    assert table.value["text"].tolist() == [truth[i] for i in table.value["id"]]  # each disagreement's own text
    asked = [table.value["id"].iloc[1], "no-such-id", table.value["id"].iloc[0]]
    assert corpus.texts_by_id(asked) == {i: truth[i] for i in (asked[0], asked[2])}
    review.session_state[review.session_state["rv_editor"]] = {"edited_rows": {0: {"gold": "excluded"}},
                                                                "added_rows": [], "deleted_rows": []}
    review.run()
    # the tab is closed before the gold is saved: a fresh session opens with the decision made
    review = app("pages/8_Review.py").run()
    table = review.get("data_editor")[0]
    assert table.value["gold"].tolist() == ["excluded", "undecided"]
    assert "(1 of 2 decided)" in review.button(key="rv_save").label and review.button(key="rv_save").disabled
    review.session_state[review.session_state["rv_editor"]] = {"edited_rows": {1: {"gold": "included"}},
                                                                "added_rows": [], "deleted_rows": []}
    review.run()
    review.button(key="rv_save").click().run()
    assert not review.exception and any("Saved the gold version" in s.value for s in review.success)
    gold = store.load("floods · gold")
    assert gold.kind == "gold" and len(gold.included) + len(gold.excluded) == 10 and gold.saved_by == "alice"


def test_three_annotators_the_majority_decides_at_a_click_undone_at_another_and_ties_are_left(tweets, monkeypatch):
    """Three annotators; where two of them agree the adjudicator may take their label for every undecided text
    at once (and undo it); a text only two reviewed, one against one, stays to decide; the gold keeps all."""
    from core.corpus import load_corpus

    ids = load_corpus("tweets").frame["id"].tolist()[:8]
    store = GroupStore(tweets / "tweets" / "groups.sqlite")
    submitted(store, "floods", "lead",
              (("alice", ids[:6], []), ("bob", ids[:3], ids[3:5]), ("carol", ids[:2], ids[2:4])))
    # ids[2]: 2 in / 1 out; ids[3], ids[4] (alice in, bob and carol out... ids[4]: carol did not review): 1 vs 2,
    # 1 vs 1; ids[5]: alice only
    as_user(monkeypatch, "lead")
    review = app("pages/8_Review.py").run()
    assert not review.exception, review.exception
    assert review.button(key="rv_majority").label.startswith("Take the majority's label for 2 undecided")
    pairs = review.dataframe[1].value.set_index("pair")  # three annotators: which pair parts ways
    assert pairs.loc["alice · bob", "texts both reviewed"] == 5
    assert pairs.loc["bob · carol", "percent agreement"] == .75
    review.button(key="rv_majority").click().run()
    decided = {i: d for i, (d, _, _) in store.decisions("floods").items()}
    assert decided == {ids[2]: 1, ids[3]: -1}
    review.button(key="rv_majority_undo").click().run()
    assert store.decisions("floods") == {}, "undone"
    review.button(key="rv_majority").click().run()
    review.segmented_control(key="rv_show").set_value("Undecided").run()
    table = review.get("data_editor")[0].value
    assert table["id"].tolist() == [ids[4]], "only the tie is left to decide"
    back = app("pages/8_Review.py")  # another page, then this one again: Streamlit dropped the control's state
    back.session_state["kept:rv_show"] = review.session_state["kept:rv_show"]
    assert back.run().segmented_control(key="rv_show").value == "Undecided"  # still only what is left to decide
    assert back.get("data_editor")[0].value["id"].tolist() == [ids[4]]
    review.session_state[review.session_state["rv_editor"]] = {"edited_rows": {0: {"gold": "leave out"}},
                                                                "added_rows": [], "deleted_rows": []}
    review.run()
    assert not review.button(key="rv_save").disabled
    review.button(key="rv_save").click().run()
    gold = store.load("floods · gold")
    assert (sorted(gold.included), sorted(gold.excluded)) == (sorted(ids[:3] + ids[5:6]), [ids[3]])
    # carol saves again, now excluding ids[4] too, and submits that: the page's comparison is made afresh
    store.save("floods · carol", ids[:2], ids[2:5], annotator="carol", topic="floods", overwrite=True)
    store.submit("floods", "carol")
    review.segmented_control(key="rv_show").set_value("Every disagreement").run()
    table = review.get("data_editor")[0].value.set_index("id")
    assert table.loc[ids[4], "carol"] == "excluded" and table.loc[ids[4], "gold"] == "leave out"


def test_a_blind_topics_other_groups_are_on_no_page_until_you_submit_yours(tweets, monkeypatch):
    """On a blind topic, alice does not see bob's group anywhere (Groups, Annotate's list to open, the Scatter,
    the Timeline) until she has submitted hers; then she does. Someone outside the
    topic never sees it; the adjudicator always does. Her own group and the gold are never hidden."""
    from core.corpus import load_corpus
    from core.teams import hidden_groups

    ids = load_corpus("tweets").frame["id"].tolist()[:6]
    store = GroupStore(tweets / "tweets" / "groups.sqlite")
    store.create_topic("floods", "", "lead")  # blind, the default
    store.save("notes of eva", ids[:1], [], annotator="eva")
    for who in ("alice", "bob"):
        store.save(store.assign("floods", who), ids[:3], ids[3:], annotator=who, topic="floods")
    store.submit("floods", "bob")

    def visible(who: str) -> dict[str, list]:
        as_user(monkeypatch, who)
        pages = {}
        groups = app("pages/5_Groups.py").run()
        pages["groups"] = groups.selectbox(key="gr_pick").options
        annotate = app("pages/1_Annotate.py").run()
        pages["annotate"] = annotate.selectbox(key="open_name").options
        pages["scatter"] = app("pages/3_Scatter.py").run().selectbox(key="sc_group").options[1:]
        timeline = app("pages/2_Timeline.py")
        timeline.session_state["tl_source"] = "Saved groups (included)"
        pages["timeline"] = timeline.run().multiselect(key="tl_groups").options
        return pages

    for page, names in visible("alice").items():
        assert sorted(names) == ["floods · alice", "notes of eva"], page
    assert hidden_groups("eva", store.team_groups()) == {"floods · alice", "floods · bob"}
    assert hidden_groups("lead", store.team_groups()) == set()
    store.submit("floods", "alice")
    for page, names in visible("alice").items():
        assert sorted(names) == ["floods · alice", "floods · bob", "notes of eva"], page


def test_a_save_after_submitting_counts_only_once_submitted_again(tweets, monkeypatch):
    """Alice submits, sees bob's group (the topic is no longer blind to her) and saves hers again to match it:
    the agreement and the gold still use the version she submitted; the Team page says so and offers to submit
    the new one, which then counts."""
    from core.corpus import load_corpus

    ids = load_corpus("tweets").frame["id"].tolist()[:6]
    store = GroupStore(tweets / "tweets" / "groups.sqlite")
    store.create_topic("floods", "", "lead")
    store.save(store.assign("floods", "alice"), ids[:4], ids[4:], annotator="alice", topic="floods")
    store.save(store.assign("floods", "bob"), ids[:2], ids[2:], annotator="bob", topic="floods")
    store.submit("floods", "bob")
    store.submit("floods", "alice")
    store.save("floods · alice", ids[:2], ids[2:], annotator="alice", topic="floods", overwrite=True)  # bob's labels
    as_user(monkeypatch, "lead")
    review = app("pages/8_Review.py").run()
    assert next(m for m in review.metric if m.label == "Percent agreement").value == f"{4 / 6:.1%}"
    assert any(h.value == "Disagreements (2)" for h in review.subheader), "version 1 counts, not the copy of bob's"
    as_user(monkeypatch, "alice")
    team = app("pages/7_Team.py").run()
    assert any("version 2, saved since, does not count" in w.value for w in team.warning)
    assert team.button(key="team_submit").label == "Submit version 2 instead"
    team.button(key="team_submit").click().run()
    assert any("(version 2)" in s.value for s in team.success)
    as_user(monkeypatch, "lead")
    review = app("pages/8_Review.py").run()
    assert not review.exception, review.exception
    assert next(m for m in review.metric if m.label == "Percent agreement").value == "100.0%"
    assert not review.button(key="rv_save").disabled, "nothing to decide: the gold can be saved"


def test_the_team_page_shows_whichever_topic_is_picked_and_a_new_one_at_once(tweets, monkeypatch):
    """The topic picker was drawn inside a search over the topics, once per topic until the picked one:
    picking any topic but the first drew it twice, and the page stopped on a duplicate key."""
    as_user(monkeypatch, "alice")
    team = app("pages/7_Team.py").run()
    for name, guide in (("floods", "Rivers and rain."), ("fires", "Wildfires only.")):
        team.text_input(key="team_new_name").set_value(name)
        team.text_area(key="team_new_guidelines").set_value(guide)
        team.button(key="FormSubmitter:team_new-Create the topic").click().run()
        assert not team.exception, team.exception
        assert team.selectbox(key="team_topic").value == name  # the topic just made is the one shown
    picker = team.selectbox(key="team_topic")
    assert sorted(picker.options) == ["fires", "floods"]
    for name, guide in (("floods", "Rivers and rain."), ("fires", "Wildfires only."), ("floods", "Rivers and rain.")):
        team.selectbox(key="team_topic").set_value(name).run()
        assert not team.exception, team.exception
        assert guide in [t.value for t in team.text], name
    review = app("pages/8_Review.py").run()  # the Review page's picker, the same way
    for name in ("fires", "floods", "fires"):
        review.selectbox(key="rv_topic").set_value(name).run()
        assert not review.exception, review.exception
        assert any("0 submitted of 1" in i.value for i in review.info), name


def test_a_topic_with_an_annotator_named_gold_is_refused_whole_with_the_reason(tweets, monkeypatch):
    """Before, the topic was created and the names before ``gold`` assigned when the page stopped on it."""
    as_user(monkeypatch, "alice")
    team = app("pages/7_Team.py").run()
    store = GroupStore(tweets / "tweets" / "groups.sqlite")
    team.text_input(key="team_new_name").set_value("floods")
    team.text_area(key="team_new_guidelines").set_value("Rivers and rain.")
    for people in ("alice, gold, bob", "alice, bob"):
        team.text_input(key="team_new_people").set_value(people)
        team.button(key="FormSubmitter:team_new-Create the topic").click().run()
        assert not team.exception, team.exception
        if "gold" in people:
            assert any("cannot be named" in unescape(e.value) and "gold" in e.value for e in team.error), \
                [e.value for e in team.error]
            assert store.topics() == [] and store.team_groups() == [], "nothing half made"
            # what was typed stays to mend: the form emptied on every submit, the guidelines lost with the name
            assert team.text_input(key="team_new_name").value == "floods"
            assert team.text_area(key="team_new_guidelines").value == "Rivers and rain."
            assert team.text_input(key="team_new_people").value == people
    assert [a.annotator for a in store.assignments("floods")] == ["alice", "bob"], "mended, made for both"
    assert store.topics()[0].guidelines == "Rivers and rain."
    assert team.text_input(key="team_new_name").value == ""  # made: the form is empty for the next topic
    assert team.text_area(key="team_new_guidelines").value == ""
    assert team.text_input(key="team_new_people").value == "alice"


def test_annotate_says_who_labelled_a_text_and_how_and_the_event_log_exports(tweets, monkeypatch):
    as_user(monkeypatch, "alice")
    ann = app("pages/1_Annotate.py").run()
    ann.text_input(key="kw_query").set_value("ockovani")
    ann.button(key="FormSubmitter:kw_form-Search (KW)").click().run()
    first = [b.key for b in ann.button if b.key and b.key.startswith("tog_")][0]
    ann.button(key=first).click().run()
    lines = [c.value for c in ann.caption if "alice" in c.value]
    assert sum("via KW ‘ockovani’" in line.replace("\\\\", "") for line in lines) == 9
    assert sum("alice by a click" in line for line in lines) == 1
    ann.text_input(key="save_name").set_value("vaccines")
    ann.button(key="save_btn").click().run()
    store = GroupStore(tweets / "tweets" / "groups.sqlite")
    v = store.load("vaccines")
    log = store.journal(v.work, v.last_entry)
    assert {e["who"] for e in log} == {"alice"} and {e["method"] for e in log} == {"keyword", "toggle"}
    inc, exc = store.membership("vaccines")
    assert sorted(inc) == sorted(v.included) and sorted(exc) == sorted(v.excluded) and len(exc) == 1
    groups = app("pages/5_Groups.py").run()
    assert not groups.exception and groups.get("download_button")


def test_with_postgresql_down_the_page_says_so_keeps_the_group_and_saves_after_the_restart(tweets, pg_server,
                                                                                          monkeypatch):
    from core.db import PostgreSQL

    monkeypatch.setenv("SEMANNO_DB", pg_server.dsn)
    ann = app("pages/1_Annotate.py").run()
    assert not ann.exception, ann.exception
    ann.text_input(key="kw_query").set_value("ockovani")
    ann.button(key="FormSubmitter:kw_form-Search (KW)").click().run()
    toggles = [b.key for b in ann.button if b.key and b.key.startswith("tog_")]
    pg_server.stop("fast")
    try:
        ann.button(key=toggles[0]).click().run()  # labelled while the database is down
        said = [unescape(e.value) for e in ann.error]
        assert not ann.exception and any("cannot be used" in e and "127.0.0.1" in e and "kept in this tab" in e
                                         for e in said), said
        assert ann.session_state["session"].counts()["excluded"] == 1, "the click is kept in the tab"
    finally:
        pg_server.start()
    ann.run()  # the database is back: the page, and the pending steps written
    assert [m.value for m in ann.metric[:2]] == ["9", "1"]
    ann.text_input(key="save_name").set_value("after the outage")
    ann.button(key="save_btn").click().run()
    assert any("Saved group" in s.value for s in ann.success), [e.value for e in ann.error]
    from core.store import GroupStore

    saved = GroupStore(PostgreSQL(pg_server.dsn), corpus="tweets").load("after the outage")
    assert (len(saved.included), len(saved.excluded)) == (9, 1), "the click made during the outage is in"
    inc, exc = GroupStore(PostgreSQL(pg_server.dsn), corpus="tweets").membership("after the outage")
    assert sorted(exc) == sorted(saved.excluded), "and in the events, written once the database was back"
    from core import migrate  # the save started a snapshot of the team's groups; the Groups page names it

    job = migrate._started[str(tweets / "tweets" / "groups.sqlite")][1]
    assert job is not None and job.wait(timeout=180) == 0
    groups = app("pages/5_Groups.py").run()
    lines = [unescape(c.value) for c in groups.caption]
    assert any(re.search(r"Snapshots of the team's groups at PostgreSQL: 1 \([\d.]+ MB\), the newest", c)
               and "backups --corpus tweets lists them" in c for c in lines), lines
    assert not groups.warning, [w.value for w in groups.warning]
    # a snapshot job that fails (here: a server nobody answers at) is named on the page, not only in its log
    failing = migrate.after_write("tweets", tweets / "tweets" / "groups.sqlite", "postgresql://semanno@127.0.0.1:1/x",
                                  every_s=0, check_s=0)
    assert failing.wait(timeout=180) != 0
    groups.run()
    said = [unescape(w.value) for w in groups.warning]
    assert any("The last snapshot of the team's groups did not finish" in w and "127.0.0.1" in w for w in said), said


def test_the_groups_page_puts_back_what_the_teams_server_lost_from_the_newest_snapshot(tweets, pg_server, monkeypatch):
    """A team's server that lost saved work (a dump from before put back, rows removed there) was put right only
    from a terminal (precompute.store restore). The Groups page now compares the newest snapshot with the server
    (versions' numbers, no labels) and says what the server lacks, with a button that puts it back: here the
    server lost a group's second version, then every group of the corpus (the page has no group to list, and
    still offers them back). Nothing the server holds is changed."""
    import uuid

    from core import migrate
    from core.db import PostgreSQL
    from core.store import GroupStore

    monkeypatch.setenv("SEMANNO_DB", pg_server.dsn)
    monkeypatch.setattr(migrate, "_started", {})
    groups_db = tweets / "tweets" / "groups.sqlite"
    pg = GroupStore(PostgreSQL(pg_server.dsn), corpus="tweets")
    first, second = f"floods {uuid.uuid4().hex[:6]}", f"<b>rain</b> {uuid.uuid4().hex[:6]}"
    pg.save(first, ["t1", "t2"], ["t3"])
    pg.save(first, ["t1"], ["t2", "t3"], overwrite=True)
    pg.save(second, ["t4"], [])
    topic, draft = f"topic {uuid.uuid4().hex[:6]}", f"draft-{uuid.uuid4().hex}"
    pg.create_topic(topic, "guidelines", created_by="lead")
    pg.decide(topic, {"t3": -1}, "lead")
    pg.sync_draft(draft, "alice", keep=0, steps=[], n_included=0, n_excluded=0, saved=False, browser="", writer="w")
    migrate.snapshot(pg, groups_db)
    held = {name: len(pg.versions(name)) for name in pg.names()}
    groups = app("pages/5_Groups.py").run()
    assert not groups.exception and not groups.warning, [w.value for w in groups.warning]

    pg.decide(topic, {"t3": None}, "lead")  # since the snapshot: a decision taken back, a draft discarded
    assert pg.delete_draft(draft, "alice")
    with pg.db.tx() as db:  # and the server loses the second version of the first group
        [(vid,)] = db.run("SELECT v.id FROM versions v JOIN groups g ON g.id=v.group_id WHERE g.corpus='tweets' "
                          "AND g.name=? AND v.number=2", (first,))
        db.run("DELETE FROM labels WHERE version_id=?", (vid,))
        db.run("DELETE FROM versions WHERE id=?", (vid,))
    migrate.snapshot(pg, groups_db)  # a snapshot taken after the loss holds it no more; the one before still does
    groups.run()
    said = [unescape(w.value) for w in groups.warning]
    assert any("hold 1 saved version the server does not, of ‘" + first + "’" in w for w in said), said
    groups.button(key="gr_put_back_button").click().run()
    assert not groups.exception and not groups.warning, [w.value for w in groups.warning]
    assert any("Put back: from postgresql-" in unescape(s.value) and "copied 1 version;" in unescape(s.value)
               for s in groups.success), [s.value for s in groups.success]
    assert pg.load(first).included == ["t1"] and pg.load(first, 1).included == ["t1", "t2"]
    assert not pg.decisions(topic) and not [d for d in pg.drafts("alice", unsaved_only=False, limit=1000)
                                           if d.token == draft], \
        "a decision taken back or a draft discarded since the snapshot came back"

    with pg.db.tx() as db:  # the server loses every group of the corpus
        db.run("DELETE FROM labels WHERE version_id IN (SELECT v.id FROM versions v JOIN groups g ON "
               "g.id=v.group_id WHERE g.corpus='tweets')")
        db.run("DELETE FROM versions WHERE group_id IN (SELECT id FROM groups WHERE corpus='tweets')")
        db.run("DELETE FROM groups WHERE corpus='tweets'")
    assert pg.names() == []
    groups = app("pages/5_Groups.py").run()
    assert any("No saved groups yet" in i.value for i in groups.info)
    said = [unescape(w.value) for w in groups.warning]
    assert any(f"hold {sum(held.values())} saved versions the server does not" in w and second in w
               for w in said), said
    groups.button(key="gr_put_back_button").click().run()
    assert not groups.exception and not groups.warning, [w.value for w in groups.warning]
    assert {name: len(pg.versions(name)) for name in pg.names()} == held
    assert pg.load(second).included == ["t4"] and groups.dataframe, "the groups are listed again"

    with pg.db.tx() as db:  # the second group removed at the server on purpose: let go, after asking, and undone
        db.run("DELETE FROM labels WHERE version_id IN (SELECT v.id FROM versions v JOIN groups g ON "
               "g.id=v.group_id WHERE g.corpus='tweets' AND g.name=?)", (second,))
        db.run("DELETE FROM versions WHERE group_id IN (SELECT id FROM groups WHERE corpus='tweets' AND name=?)",
               (second,))
        db.run("DELETE FROM groups WHERE corpus='tweets' AND name=?", (second,))
    groups.run()
    assert any("hold 1 saved version the server does not, of ‘" + second + "’" in unescape(w.value)
               for w in groups.warning), [w.value for w in groups.warning]
    groups.button(key="gr_let_go_button").click().run()
    assert any(unescape(w.value).startswith("Let go of 1 saved version of ‘" + second + "’?")
               for w in groups.warning), [w.value for w in groups.warning]
    groups.button(key="gr_let_go_confirm").click().run()
    assert not groups.exception and not groups.warning, [w.value for w in groups.warning]
    assert any("Let go: 1 saved version" in unescape(s.value) for s in groups.success)
    assert any("was let go (removed at the server on purpose)" in unescape(c.value) and second in unescape(c.value)
               for c in groups.caption), [c.value for c in groups.caption]
    assert second not in pg.names()
    groups.button(key="gr_warn_again").click().run()
    assert any("hold 1 saved version the server does not" in unescape(w.value) for w in groups.warning)


def test_the_groups_page_puts_back_the_drafts_and_decisions_the_teams_server_lost_not_those_discarded(
        tweets, pg_server, monkeypatch):
    """Drafts of unsaved work and an adjudicator's decisions that a team's server lost came back only by restore
    from a terminal: the page could not tell them from ones discarded or taken back, which leave no row. The
    server now records those, so the page names what it lost (from every kept snapshot, not only the newest) and
    puts it back with the saved work: a draft with its steps, offered again to its owner; a discarded draft and a
    decision taken back stay away, and nothing the server holds changes."""
    import uuid

    from core import migrate
    from core.db import PostgreSQL

    monkeypatch.setenv("SEMANNO_DB", pg_server.dsn)
    monkeypatch.setattr(migrate, "_started", {})
    groups_db = tweets / "tweets" / "groups.sqlite"
    pg = GroupStore(PostgreSQL(pg_server.dsn), corpus="tweets")
    topic, tag = f"topic {uuid.uuid4().hex[:6]}", uuid.uuid4().hex[:6]
    pg.create_topic(topic, "guidelines", created_by="lead")
    pg.decide(topic, {"t1": 1, "t2": -1, "t3": 0}, "lead")
    owners = {f"alice-{tag}": f"a-{tag}", f"bob-{tag}": f"b-{tag}", f"carol-{tag}": f"c-{tag}"}
    steps = {o: [{"kind": "search", "method": "keyword", "params": {"q": o}, "changes": [[1, 0, 1]], "id": "s1"}]
             for o in owners}
    for owner, token in owners.items():
        assert pg.sync_draft(token, owner, keep=0, steps=steps[owner], n_included=1, n_excluded=0, saved=False,
                             browser="B", writer="w")
    migrate.snapshot(pg, groups_db)
    groups = app("pages/5_Groups.py").run()
    assert not groups.exception and not groups.warning, [w.value for w in groups.warning]

    alice, bob, carol = owners
    assert pg.delete_draft(owners[carol], carol)  # discarded on purpose, and a decision taken back
    pg.decide(topic, {"t2": None}, "lead")
    pg.decide(topic, {"t3": 1}, "lead")  # and one changed: the server's stays
    with pg.db.tx() as db:  # the server loses two drafts and a decision
        for token in (owners[alice], owners[bob]):
            db.run("DELETE FROM draft_steps WHERE token=?", (token,))
            db.run("DELETE FROM drafts WHERE token=?", (token,))
        db.run("DELETE FROM decisions WHERE item_id='t1' AND topic_id=(SELECT id FROM topics WHERE corpus='tweets' "
               "AND name=?)", (topic,))
    migrate.snapshot(pg, groups_db)  # taken after the loss: the one before still holds them
    groups.run()
    said = [unescape(w.value) for w in groups.warning]
    assert any(f"The snapshots hold 2 drafts of unsaved work (of ‘{alice}’, ‘{bob}’) and 1 adjudicator's "
               f"decision on ‘{topic}’ that the server lost" in w for w in said), said
    assert not any("saved version" in w for w in said), said
    groups.button(key="gr_put_back_button").click().run()
    assert not groups.exception and not groups.warning, [w.value for w in groups.warning]
    assert any("Put back: from postgresql-" in unescape(s.value) and "2 drafts" in unescape(s.value)
               for s in groups.success), [s.value for s in groups.success]
    for owner in (alice, bob):
        [d] = [d for d in pg.drafts(owner) if d.token == owners[owner]]  # offered again on the Annotate page
        assert pg.load_draft(d.token).steps == tuple(steps[owner]) and d.n_included == 1
    assert not pg.drafts(carol, unsaved_only=False), "a draft discarded at the server came back"
    assert {i: d for i, (d, _, _) in pg.decisions(topic).items()} == {"t1": 1, "t3": 1}, \
        "a decision taken back came back, or one the server holds changed"
    groups.run()
    assert not groups.warning, [w.value for w in groups.warning]


def test_drafts_and_decisions_the_teams_server_lost_can_be_let_go_and_their_snapshot_then_goes(tweets, pg_server,
                                                                                                 monkeypatch, capsys):
    """A draft and a decision the server lost that nobody wants back were warned of on every view of the Groups
    page, and the snapshot holding them was kept past the newest ones: only saved versions could be let go. Now,
    asked twice, the server records them as discarded and taken back: the warning goes, and the next snapshot
    removes the one that held them."""
    import uuid

    from core import migrate
    from core.db import PostgreSQL
    from precompute import store as store_job

    monkeypatch.setenv("SEMANNO_DB", pg_server.dsn)
    monkeypatch.setattr(migrate, "_started", {})
    groups_db = tweets / "tweets" / "groups.sqlite"
    pg = GroupStore(PostgreSQL(pg_server.dsn), corpus="tweets")
    topic, dave = f"topic {uuid.uuid4().hex[:6]}", f"dave-{uuid.uuid4().hex[:6]}"
    pg.create_topic(topic, "guidelines", created_by="lead")
    pg.decide(topic, {"t1": 1, "t2": -1}, "lead")
    token = f"d-{uuid.uuid4().hex[:6]}"
    assert pg.sync_draft(token, dave, keep=0, steps=[{"kind": "search", "method": "keyword", "params": {"q": "x"},
                                                      "changes": [[1, 0, 1]], "id": "s1"}],
                         n_included=1, n_excluded=0, saved=False, browser="B", writer="w")
    held, _ = migrate.snapshot(pg, groups_db)
    with pg.db.tx() as db:  # the server loses the draft and a decision
        db.run("DELETE FROM draft_steps WHERE token=?", (token,))
        db.run("DELETE FROM drafts WHERE token=?", (token,))
        db.run("DELETE FROM decisions WHERE item_id='t1' AND topic_id=(SELECT id FROM topics WHERE corpus='tweets' "
               "AND name=?)", (topic,))
    migrate.snapshot(pg, groups_db, keep=1)
    assert held.exists(), "the snapshot holding what the server lost was not kept past the newest"
    capsys.readouterr()
    assert store_job.main(["let-go", "--corpus", "tweets"]) == 0  # from a terminal: listed, not let go
    said = capsys.readouterr().out
    assert f"\n  a draft of unsaved work of {dave}  (token {token})\n" in said and \
        f"\n  an adjudicator's decision on {topic}  item t1\n" in said and "--yes lets them go" in said, said
    groups = app("pages/5_Groups.py").run()
    lost = f"1 draft of unsaved work (of ‘{dave}’) and 1 adjudicator's decision on ‘{topic}’"
    assert any(f"The snapshots hold {lost} that the server lost" in unescape(w.value) for w in groups.warning), \
        [w.value for w in groups.warning]
    groups.button(key="gr_let_go_button").click().run()
    assert any(unescape(w.value).startswith(f"Let go of {lost}? The server records them as discarded")
               for w in groups.warning), [w.value for w in groups.warning]
    groups.button(key="gr_let_go_cancel").click().run()  # kept: asked again
    assert any(f"The snapshots hold {lost}" in unescape(w.value) for w in groups.warning)
    assert not any(unescape(w.value).startswith("Let go of") for w in groups.warning)
    groups.button(key="gr_let_go_button").click().run()
    groups.button(key="gr_let_go_confirm").click().run()
    assert not groups.exception and not groups.warning, [w.value for w in groups.warning]
    assert any(f"Let go: {lost}, as discarded and taken back at the server." in unescape(s.value)
               for s in groups.success), [s.value for s in groups.success]
    assert not pg.drafts(dave, unsaved_only=False) and set(pg.decisions(topic)) == {"t2"}, "let go, yet put back"
    migrate.snapshot(pg, groups_db, keep=1)
    assert not held.exists(), "the snapshot holding only what was let go was still kept past the newest"
    assert store_job.main(["let-go", "--corpus", "tweets"]) == 0 and "nothing to let go" in capsys.readouterr().out
    pg.decide(topic, {"t1": -1}, "lead")  # decided again on purpose: the server's, and its record of taking back goes
    groups.run()
    assert not groups.warning and pg.decisions(topic)["t1"][0] == -1


def test_a_version_the_teams_server_lost_and_saved_again_is_named_and_put_back_beside_it(tweets, pg_server,
                                                                                       monkeypatch):
    """The server lost a group's second version and an annotator saved the group again: its new version 2 holds
    other labels. The Groups page compared versions by number alone and said nothing (the lost work unnamed), and
    restore refused the older snapshot whole. Now the page names the group, says the snapshot's versions go beside
    the server's, and its button puts them there as a group of its own; the terminal's refusal names --beside."""
    import uuid

    from core import migrate
    from core.db import PostgreSQL
    from precompute import store as store_job

    monkeypatch.setenv("SEMANNO_DB", pg_server.dsn)
    monkeypatch.setattr(migrate, "_started", {})
    groups_db = tweets / "tweets" / "groups.sqlite"
    pg = GroupStore(PostgreSQL(pg_server.dsn), corpus="tweets")
    name = f"floods {uuid.uuid4().hex[:6]}"
    pg.save(name, ["t1", "t2"], ["t3"])
    pg.save(name, ["t1"], ["t2", "t3"], overwrite=True)
    before, _ = migrate.snapshot(pg, groups_db)
    with pg.db.tx() as db:
        [(vid,)] = db.run("SELECT v.id FROM versions v JOIN groups g ON g.id=v.group_id WHERE g.corpus='tweets' "
                          "AND g.name=? AND v.number=2", (name,))
        db.run("DELETE FROM labels WHERE version_id=?", (vid,))
        db.run("DELETE FROM versions WHERE id=?", (vid,))
    assert pg.save(name, ["t5"], [], overwrite=True) == 2
    migrate.snapshot(pg, groups_db)

    with pytest.raises(ValueError, match="--beside puts that group back beside the server's"):
        store_job.main(["restore", "--corpus", "tweets", "--backup", str(before)])
    groups = app("pages/5_Groups.py").run()
    said = [unescape(w.value) for w in groups.warning]
    assert any(f"hold 1 saved version the server does not, of ‘{name}’" in w and f"Of ‘{name}’ the server holds "
               f"other versions under the same numbers" in w and f"‘{name} (put back)’" in w for w in said), said
    groups.button(key="gr_put_back_button").click().run()
    assert not groups.exception and not groups.warning, [w.value for w in groups.warning]
    assert any(f"‘{name}’ put beside the server's as ‘{name} (put back)’" in unescape(s.value)
               for s in groups.success), [s.value for s in groups.success]
    assert pg.load(name).included == ["t5"], "the server's own version 2 changed"
    assert pg.load(f"{name} (put back)").included == ["t1"]
    assert pg.load(f"{name} (put back)", version=1).included == ["t1", "t2"]


def test_the_jobs_read_a_teams_groups_from_postgresql(tweets, pg_server, monkeypatch, tmp_path, capsys):
    """With SEMANNO_DB naming PostgreSQL, the export and evaluate jobs and DAC's groups stage read the groups there;
    they read the corpus's SQLite file instead (the export said "has no group", DAC "needs two saved groups")."""
    import uuid

    import numpy as np

    from core.cluster.dac import stages
    from core.corpus import load_corpus
    from core.db import PostgreSQL
    from precompute import evaluate, export
    from precompute._cli import run_main

    monkeypatch.setenv("SEMANNO_DB", pg_server.dsn)
    corpus = load_corpus("tweets")
    ids = corpus.frame["id"].tolist()
    store = GroupStore(PostgreSQL(pg_server.dsn), corpus="tweets")
    names = [f"team {uuid.uuid4().hex[:6]}", f"team {uuid.uuid4().hex[:6]}"]  # the session's server is shared
    store.save(names[0], ids[:5], ids[5:7])
    store.save(names[1], ids[10:14], [])
    assert run_main(export.main, ["--corpus", "tweets", "--group", names[0], "--out", str(tmp_path / "g.csv")]) == 0
    import pandas as pd

    assert sorted(pd.read_csv(tmp_path / "g.csv", dtype=str)["id"]) == sorted(ids[:7])
    labels = stages.corpus_labels(corpus, "groups")
    assert {tuple(np.flatnonzero(labels == c)) for c in set(labels[labels >= 0].tolist())} >= {
        tuple(corpus.rows_of(ids[:5]).tolist()), tuple(corpus.rows_of(ids[10:14]).tolist())}
    np.save(tmp_path / "c.npy", np.arange(corpus.n) % 4)
    capsys.readouterr()
    assert run_main(evaluate.main, ["--corpus", "tweets", "--clusters", str(tmp_path / "c.npy"), "--groups"]) == 0
    import json

    scored = json.loads(capsys.readouterr().out)["groups"]
    assert scored[names[0]]["group_size"] == 5 and scored[names[1]]["group_size"] == 4


def test_a_decision_made_while_postgresql_is_down_is_kept_in_the_tab_and_written_after_the_restart(
        tweets, pg_server, monkeypatch):
    """The adjudicator decides while the database is down: the page says so (no traceback) and the decision
    stays in the tab; once the database is back, the next run writes it."""
    import uuid

    from core.corpus import load_corpus
    from core.db import PostgreSQL

    monkeypatch.setenv("SEMANNO_DB", pg_server.dsn)
    ids = load_corpus("tweets").frame["id"].tolist()[:4]
    store = GroupStore(PostgreSQL(pg_server.dsn), corpus="tweets")
    topic = f"outage {uuid.uuid4().hex[:6]}"  # the session's PostgreSQL is shared by the tests
    submitted(store, topic, "lead", (("alice", ids[:3], ids[3:]), ("bob", ids[1:], ids[:1])))
    as_user(monkeypatch, "lead")
    review = app("pages/8_Review.py")
    review.session_state["rv_topic"] = topic
    review.run()
    assert not review.exception, review.exception
    pg_server.stop("fast")
    try:
        review.session_state[review.session_state["rv_editor"]] = {"edited_rows": {0: {"gold": "excluded"}},
                                                                    "added_rows": [], "deleted_rows": []}
        review.run()
        said = [unescape(e.value) for e in review.error]
        assert not review.exception and any("cannot be used" in e and "press R" in e for e in said), said
    finally:
        pg_server.start()
    review.run()  # the database is back
    assert not review.exception, review.exception
    assert {i: d for i, (d, _, _) in store.decisions(topic).items()} == {ids[0]: -1}


def test_a_malformed_or_unreachable_database_address_stops_every_page_without_the_password(tweets, monkeypatch):
    monkeypatch.setenv("SEMANNO_DB", "mysql://root:hunter2@db/x")
    page = app("pages/1_Annotate.py").run()
    said = " ".join(unescape(e.value) for e in page.error)
    assert "SEMANNO_DB must be a postgresql://" in said and "hunter2" not in said
    monkeypatch.setenv("SEMANNO_DB", "postgresql://semanno:hunter2@127.0.0.1:1/none")
    page = app("pages/2_Timeline.py").run()
    messages = " ".join(unescape(e.value) for e in page.error)
    assert "cannot reach PostgreSQL at semanno@127.0.0.1:1/none" in messages and "hunter2" not in messages


@pytest.mark.parametrize("damage", ["cut in half", "overwritten"])
def test_a_damaged_groups_file_is_named_on_every_page_and_left_as_it_is(tweets, damage, monkeypatch):
    """A groups.sqlite cut short or overwritten (a full disk, a bad copy) raised sqlite3's "database disk image is
    malformed" as a traceback on every page; the pages now say which file and what to do, and never write to it.
    Where the app kept a backup of it (cut in half), a button puts that back, and the damaged file is kept."""
    import shutil

    from core import backup
    from core.db import SQLite
    from core.store import DatabaseError, GroupStore

    monkeypatch.setattr(SQLite, "_backup_checked", {})
    db = tweets / "tweets" / "groups.sqlite"
    GroupStore(db).save("kept", ["1"], [])
    backup.settle()
    assert backup.copies(db), "the save took a backup"
    if damage == "overwritten":
        shutil.rmtree(backup.folder(db))  # as a file older than the backups would have none
    for extra in ("-wal", "-shm"):  # the saved group checkpointed into the file itself
        Path(f"{db}{extra}").unlink(missing_ok=True)
    data = db.read_bytes()
    db.write_bytes(data[:len(data) // 2] if damage == "cut in half" else b"\x00not a database" * 4096)
    before = db.read_bytes()
    with pytest.raises(DatabaseError, match=r"groups\.sqlite is damaged \(.*\); nothing was written to it"):
        GroupStore(db)
    what_to_do = "Its newest backup is backups/groups-" if damage == "cut in half" else "Restore it from a backup"
    for page in ("streamlit_app.py", "pages/1_Annotate.py", "pages/5_Groups.py", "pages/7_Team.py"):
        at = app(page).run()
        said = " ".join(unescape(e.value) for e in at.error)
        assert not at.exception and "groups.sqlite is damaged" in said and what_to_do in said, page
        assert [b.label.startswith("Put back the backup of") for b in at.button if b.key == "restore_backup"] == \
            ([True] if damage == "cut in half" else []), page
    assert db.read_bytes() == before
    if damage == "overwritten":
        return
    at.button(key="restore_backup").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    said = " ".join(unescape(x.value) for x in at.success)
    assert "The groups' file is back as it was in groups-" in said, said
    # what the damaged file holds beyond the backup is read back where it can be (tests/test_salvage.py); this one
    # holds nothing the backup lacks
    assert "The file it replaced held nothing saved after the backup that could be read." in said, said
    assert GroupStore(db).load("kept").included == ["1"]
    aside = [p for p in db.parent.glob("groups.sqlite.replaced-*") if not p.name.endswith(("-wal", "-shm"))]
    assert [p.read_bytes() for p in aside] == [before], "the damaged file is kept beside it"


def test_a_damaged_submitted_version_met_on_the_review_page_is_named_with_its_backup_and_put_back(tweets,
                                                                                                   monkeypatch):
    """The Review page reads each annotator's submitted version, which may be an old one: a damaged page among its
    labels was a traceback there. It is now named with the backup's button, as every page names it from then on;
    the button puts the backup back with the version saved after it, and the agreement is as it was."""
    import streamlit as st

    from core import backup
    from core import db as dbmod
    from core.corpus import load_corpus
    from tests.test_salvage import checkpointed, overwrite_page

    monkeypatch.setattr(dbmod.SQLite, "_backup_checked", {})
    monkeypatch.setattr(dbmod.SQLite, "_damaged", {})
    ids = load_corpus("tweets").frame["id"].astype(str).tolist()
    db = tweets / "tweets" / "groups.sqlite"
    store = GroupStore(db)
    submitted(store, "floods", "lead", [("alice", ids[:1500], ids[1500:1900]), ("bob", ids[:1400], ids[1400:1900])])
    backup.settle()
    for copy in backup.copies(db):  # the backup holds both submitted versions
        copy.path.unlink()
    backup.take(db)
    alice = store.assign("floods", "alice")
    store.save(alice, ids[:10], ids[10:12], annotator="alice", topic="floods", overwrite=True)  # not submitted
    checkpointed(db)
    as_user(monkeypatch, "lead")

    def agreement(at: AppTest) -> list[str]:
        return [m.value for m in at.metric]

    review = app("pages/8_Review.py").run()
    assert not review.exception and not review.error
    before = agreement(review)
    overwrite_page(db, "labels", 0.3)  # among alice's submitted version 1
    st.cache_data.clear()  # as in a server started since, which has not read the versions yet
    st.cache_resource.clear()
    for page in ("pages/8_Review.py", "pages/7_Team.py"):  # met on the first, named on the next
        review = app(page).run()
        said = " ".join(unescape(e.value) for e in review.error)
        assert not review.exception, review.exception
        assert "groups.sqlite is damaged (database disk image is malformed)" in said and \
            "Its newest backup is backups/groups-" in said, (page, said)
        assert [b.key for b in review.button if b.key == "restore_backup"] == ["restore_backup"], page
    review = app("pages/8_Review.py").run()
    review.button(key="restore_backup").click().run()
    assert not review.exception and not review.error, [e.value for e in review.error]
    said = " ".join(unescape(x.value) for x in review.success)
    assert "Read back from the file it replaced, saved after the backup: 1 version" in said, said
    assert agreement(review) == before
    assert GroupStore(db).load(alice).included == ids[:10], "alice's later version is read back"


def test_a_submitted_version_lost_to_damage_is_named_not_counted_and_submitted_again(tweets, monkeypatch):
    """A submitted version that could not be read back when a damaged file was put back from an older backup: the
    Review page raised GroupNotFound. It now names it and leaves it out of the agreement; its annotator is told on
    the Team page and may submit again."""
    import streamlit as st

    from core import backup, salvage
    from core import db as dbmod
    from core.corpus import load_corpus
    from tests.test_salvage import checkpointed, overwrite_page

    monkeypatch.setattr(dbmod.SQLite, "_backup_checked", {})
    monkeypatch.setattr(dbmod.SQLite, "_damaged", {})
    ids = load_corpus("tweets").frame["id"].astype(str).tolist()
    db = tweets / "tweets" / "groups.sqlite"
    store = GroupStore(db)
    store.save("first", ids[:1], [])
    backup.settle()
    for copy in backup.copies(db):  # a backup of the file before the topic
        copy.path.unlink()
    backup.take(db)
    submitted(store, "floods", "lead", [("alice", ids[:1500], ids[1500:1900]), ("bob", ids[:1400], ids[1400:1900])])
    alice = store.assign("floods", "alice")
    store.save(alice, ids[:1450], ids[1450:1900], annotator="alice", topic="floods", overwrite=True)  # not submitted
    checkpointed(db)
    overwrite_page(db, "labels", 0.3)  # among alice's submitted version 1
    _aside, got = salvage.put_back(db, backup.copies(db)[0].path, damaged=True)
    assert "Could not be read (1): version 1 of 'floods · alice'" in got.line(), got.line()
    st.cache_data.clear()
    st.cache_resource.clear()

    as_user(monkeypatch, "lead")
    review = app("pages/8_Review.py").run()
    assert not review.exception, review.exception
    assert [unescape(w.value) for w in review.warning] == [
        "Submitted, but not counted: version 1 of ‘floods · alice’. It could not be read back when the groups' file "
        "was put back from its backup (it was damaged). It counts once submitted again (Team page)."]
    assert unescape(review.info[0].value) == "Agreement needs two or more submitted groups you may see (2 submitted " \
                                             "of 2, 1 of them not counted)."

    as_user(monkeypatch, "alice")
    team = app("pages/7_Team.py").run()
    assert not team.exception, team.exception
    assert "Version 1 of your group, which you submitted, could not be read back" in unescape(team.warning[0].value)
    progress = team.dataframe[0].value.set_index("annotator")["submitted"]
    assert "(version 1, lost: to submit again); version 2 saved since" in progress["alice"], progress["alice"]
    assert "lost" not in progress["bob"]
    submit = team.button(key="team_submit")
    assert submit.label == "Submit version 2 instead" and not submit.disabled
    submit.click().run()
    assert "Submitted ‘floods · alice’ (version 2)." in [unescape(x.value) for x in team.success]

    as_user(monkeypatch, "lead")
    review = app("pages/8_Review.py").run()
    assert not review.exception and not review.warning and not review.info
    assert next(m for m in review.metric if m.label == "Percent agreement").value != "-", "alice's version 2 counts"


def test_the_review_bench_runs_and_its_figures_count_what_the_page_shows(tweets, tmp_path, monkeypatch, capsys):
    """bench/review.py on a small topic: every figure is printed, and the save button it reads counts the
    majority's decisions among the disagreements it made."""
    import json

    from bench import review as bench_review

    import os

    import ui.access

    monkeypatch.setenv("SEMANNO_BENCH_RESULTS", str(tmp_path / "results"))
    headers, env = ui.access.request_headers, dict(os.environ)
    bench_review.main(["--corpus", "tweets", "--labels", "300", "--repeat", "1"])
    # it ran the page as a proxy's user: the tests after it (run in this process) must not be that user
    assert ui.access.request_headers is headers and dict(os.environ) == env
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines() if x.startswith("{")]
    steps = {x["step"]: x for x in lines}
    assert set(steps) == {"setup", "first run", "rerun", "one decision in the table",
                          "the majority's label at one click"}
    n = steps["setup"]["disagreements"]
    assert 0 < steps["rerun"]["rows"] <= n and f"of {steps['rerun']['rows']:,} decided" in \
        steps["the majority's label at one click"]["save_button"]


def test_the_review_tables_rows_are_tall_enough_to_read_a_tweet_whole():
    """The gold table cut every text at its cell's edge (one line): read whole only by opening the cell. Rows
    now grow with the longest text shown, up to a tweet's 280 characters, and stay one line for short texts."""
    from ui.team_panel import row_height

    assert row_height(["short", "a few words more"]) is None and row_height([]) is None
    tweet = "x" * 280
    assert row_height(["short", tweet]) == row_height([tweet]) > row_height(["y" * 130]) > 35  # the grid's one line
    assert row_height(["z" * 5000]) == row_height([tweet]), "a longer text is cut at five lines"


def test_two_adjudicators_see_whose_decision_each_is(tweets, monkeypatch):
    """With two adjudicators (SEMANNO_ADJUDICATORS) sharing a topic's disagreements, the table says who
    decided each text; alone, it has no such column."""
    from core.corpus import load_corpus

    ids = load_corpus("tweets").frame["id"].tolist()[:6]
    store = GroupStore(tweets / "tweets" / "groups.sqlite")
    submitted(store, "floods", "lead", (("alice", ids[:4], ids[4:]), ("bob", ids[2:], ids[:2])))
    monkeypatch.setenv("SEMANNO_ADJUDICATORS", "lead, carol")
    as_user(monkeypatch, "lead")
    review = app("pages/8_Review.py").run()
    table = review.get("data_editor")[0].value
    assert len(table) == 4 and "decided by" not in table.columns, "one adjudicator so far: no column"
    review.session_state[review.session_state["rv_editor"]] = {"edited_rows": {0: {"gold": "excluded"}},
                                                                "added_rows": [], "deleted_rows": []}
    review.run()
    first = table["id"].iloc[0]
    as_user(monkeypatch, "carol")
    review = app("pages/8_Review.py").run()
    table = review.get("data_editor")[0].value.set_index("id")
    assert table.loc[first, ["gold", "decided by"]].tolist() == ["excluded", "lead"]
    assert (table.drop(first)["decided by"] == "").all()


def test_use_this_name_with_no_name_typed_asks_for_one_not_for_a_groups_name(tweets, monkeypatch):
    monkeypatch.setattr("ui.access.browser_id", lambda cookies=None: "a-new-browser")
    review = app("pages/8_Review.py").run()
    review.button(key="FormSubmitter:team_name-Use this name").click().run()
    assert not review.exception, review.exception
    assert [e.value for e in review.error] == ["type your name first"]
    assert GroupStore(tweets / "tweets" / "groups.sqlite").person("a-new-browser") is None


def test_a_name_is_typed_once_for_team_work_and_the_groups_a_browser_saves(tweets, monkeypatch):
    """On a server without sign-in: the Annotator typed on the Annotate page is offered as the name for team work,
    and the name a browser chose is the Annotator of the groups it saves, after a reload too. A field emptied on
    purpose stays empty."""
    monkeypatch.setattr("ui.access.browser_id", lambda cookies=None: "evas-browser")
    ann = app("pages/1_Annotate.py").run()
    assert not ann.exception and ann.text_input(key="save_annotator").value == ""
    ann.text_input(key="save_annotator").set_value("Eva Nová").run()

    review = app("pages/8_Review.py")
    review.session_state["group_meta"] = ann.session_state["group_meta"]  # the same tab
    review.run()
    (name,) = [t for t in review.text_input if t.label == "Your name (team work)"]
    assert name.value == "Eva Nová" and any("Type your name" in i.value for i in review.info)
    review.button(key="FormSubmitter:team_name-Use this name").click().run()
    assert not review.exception
    assert GroupStore(tweets / "tweets" / "groups.sqlite").person("evas-browser") == "Eva Nová"

    ann = app("pages/1_Annotate.py").run()  # a reload: a new session of the same browser
    assert ann.text_input(key="save_annotator").value == "Eva Nová"
    ann.text_input(key="save_annotator").set_value("").run()
    ann.run()
    assert ann.text_input(key="save_annotator").value == "", "an Annotator emptied on purpose is not filled again"
    monkeypatch.setattr("ui.access.browser_id", lambda cookies=None: "another-browser")
    assert app("pages/1_Annotate.py").run().text_input(key="save_annotator").value == "", "nobody else's name"


def test_a_name_another_browser_chose_is_taken_only_once_confirmed(tweets, monkeypatch):
    """On a server without sign-in, a second person who typed a name already chosen in another browser became that
    person: both then built and saved one group per topic. The name is now taken only when *Use this name* is pressed
    twice (the same person on a new browser), after a warning that names the clash; case and accents aside."""
    store = GroupStore(tweets / "tweets" / "groups.sqlite")
    store.set_person("petrs-laptop", "Petr")

    def team_as(browser: str, typed: str, presses: int) -> AppTest:
        monkeypatch.setattr("ui.access.browser_id", lambda cookies=None: browser)
        team = app("pages/7_Team.py").run()
        (box,) = [t for t in team.text_input if t.label == "Your name (team work)"]
        box.set_value(typed)
        for _ in range(presses):
            team.button(key="FormSubmitter:team_name-Use this name").click().run()
        assert not team.exception
        return team

    team = team_as("new-browser", "petr", presses=1)
    assert any("Another browser already works as ‘Petr’" in w.value for w in team.warning), team.warning
    assert store.person("new-browser") is None, "not taken at the first press"
    team.button(key="FormSubmitter:team_name-Use this name").click().run()  # that is me: pressed again
    assert store.person("new-browser") == "petr" and not team.warning
    team = team_as("a-third-browser", "Pétr ", presses=1)
    assert team.warning and store.person("a-third-browser") is None  # accents and spaces aside, the same name
    assert not team_as("a-third-browser", "Petr N.", presses=1).warning
    assert store.person("a-third-browser") == "Petr N." and store.others_named("petrs-laptop", "PETR") == ["petr"]
    assert not team_as("petrs-laptop", "Petr", presses=1).warning, "a browser's own name is no clash"
