"""Nobody runs code, takes a name or loses a draft through another's hands (issue 25): model and
checkpoint files load without unpickling objects, the proxy's user header is believed only with the
proxy's secret, drafts belong to their owner and browser and are written a step at a time."""

from __future__ import annotations

import io
import pickle
from datetime import datetime, timedelta, timezone
from pathlib import Path

import numpy as np
import pytest
import torch
from streamlit.runtime.context import StreamlitHeaders
from streamlit.testing.v1 import AppTest

from core.store import GroupStore
from tests.conftest import ROOT


class _Payload:
    """Unpickling this calls ``Path(marker).touch()``: a stand-in for ``os.system``."""

    def __init__(self, marker: Path):
        self.marker = str(marker)

    def __reduce__(self):
        return (Path.touch, (Path(self.marker),))


def plant(path: Path, marker: Path, **extra) -> Path:
    """A .pt file whose pickle runs code when loaded with weights_only=False."""
    path.parent.mkdir(parents=True, exist_ok=True)
    buf = io.BytesIO()
    torch.save({"format": 1, "config": {"dim": 384}, "state": {}, "payload": _Payload(marker), **extra}, buf)
    path.write_bytes(buf.getvalue())
    return path


# --- 1. model and checkpoint files -----------------------------------------------------------------

def test_a_planted_model_file_is_refused_by_name_and_runs_nothing(tmp_path):
    from core.cluster.dac import train as tr

    marker = tmp_path / "pwned"
    path = plant(tmp_path / "amortized" / "shared-model.pt", marker)
    with pytest.raises(tr.ModelError, match="refused to load the DAC model shared-model.pt"):
        tr.load(path)
    assert not marker.exists(), "loading the file ran its code"


def test_a_planted_checkpoint_is_refused_and_runs_nothing(tmp_path):
    from core import safeload
    from core.cluster import ClusterContext
    from core.cluster.kmeans import fit
    from tests.conftest import clustered_unit_vectors

    marker = tmp_path / "pwned"
    x, _ = clustered_unit_vectors(200, 8, clusters=4)
    plant(tmp_path / "ck" / "state.pt", marker)
    with pytest.raises(safeload.UnsafeFileError, match="state.pt"):
        fit(ClusterContext(x, checkpoint=tmp_path / "ck"), 4)
    assert not marker.exists()


@pytest.mark.filterwarnings("ignore:Detected pickle protocol")  # torch's, for the plain pickle this test plants
def test_a_file_that_is_no_model_is_called_damaged_not_dangerous(tmp_path):
    """Text or a copy cut short in a model's place was called a file "which could run code when loaded"."""
    from core import safeload

    for name, data in (("text.pt", b"garbage"), ("empty.pt", b""), ("pickle.pt", pickle.dumps({"a": [1, 2]}))):
        (tmp_path / name).write_bytes(data)
        with pytest.raises(safeload.DamagedFileError, match=f"the DAC model {name} is") as err:
            safeload.load(tmp_path / name, "DAC model")
        assert "run code" not in str(err.value)


def test_what_the_tool_saves_loads_back_without_pickle(tmp_path):
    """Checkpoints hold numpy arrays, random-generator states and dataclasses: saved as plain data."""
    from core import safeload
    from core.cluster.base import Checkpoint
    from core.cluster.kmeans import KMeansResult

    gen = np.random.default_rng(3)
    best = KMeansResult(np.arange(5, dtype=np.int32), np.ones((2, 3), np.float32), [1.5, np.float64(1.0)], [2, 0])
    ck = Checkpoint(tmp_path, {"method": "kmeans", "shape": (5, 3)})
    ck.save({"best": best, "labels": np.arange(4), **ck.random_state(gen)})
    state = ck.load()
    assert state is not None and state["best"]["labels"].tolist() == [0, 1, 2, 3, 4]
    assert torch.load(tmp_path / "state.pt", weights_only=True)["rng"] == gen.bit_generator.state
    assert safeload.load(tmp_path / "state.pt", "checkpoint")["labels"].tolist() == [0, 1, 2, 3]


def test_dac_model_names_cannot_lead_outside_the_corpus(tmp_path):
    from core.cluster import ClusterContext
    from core.cluster.dac import fit

    x = np.eye(4, dtype=np.float32)
    with pytest.raises(ValueError, match="invalid model name"):
        fit(ClusterContext(x, folder=tmp_path / "corpus"), None, model="../../x")
    with pytest.raises(ValueError, match="invalid model name"):
        fit(ClusterContext(x, folder=tmp_path / "corpus"), None, model="/tmp/x.pt")


def app(page: str) -> AppTest:
    return AppTest.from_file(str(ROOT / page), default_timeout=120)


def test_opening_annotate_never_loads_a_model_and_the_picker_refuses_a_planted_one(tweets):
    marker = tweets / "pwned"
    plant(tweets / "tweets" / "dac" / "shared-model.pt", marker)
    at = app("pages/1_Annotate.py").run()
    assert not at.exception and not marker.exists()
    page = app("pages/6_DAC.py").run()
    assert not page.exception and not marker.exists()
    assert any("Pick a model" in i.value for i in page.info)
    page.selectbox(key="dac_model").set_value("shared-model").run()
    assert not marker.exists(), "picking the model ran its code"
    assert any("refused to load" in e.value and "shared" in e.value for e in page.error), [e.value for e in page.error]


def test_a_model_trained_on_another_corpus_is_refused_with_the_reason(tweets, so_corpus, tmp_path):
    from core.cluster.dac import stages
    from core.cluster.dac import store as models
    from core.cluster.dac.model import Config
    from core.corpus import load_corpus

    tweets_corpus = load_corpus("tweets")
    tiny = stages.fit_stage(so_corpus.embeddings, "pretrain", config=Config(dim=so_corpus.dim, hidden=16, inducing=4,
                                                                            n1=1, n2=1), bag=60, epochs=1, steps=2, batch=2)
    made = models.save(so_corpus, "from-so", tiny, root=tmp_path)  # (not into the shared fixture's folder)
    (tweets / "tweets" / "dac").mkdir(exist_ok=True)
    (tweets / "tweets" / "dac" / "from-so.pt").write_bytes(made.read_bytes())
    assert "trained on corpus 'so'" in models.mismatch(models.load("tweets", "from-so"), tweets_corpus)
    page = app("pages/6_DAC.py").run()
    page.selectbox(key="dac_model").set_value("from-so").run()
    assert any("trained on corpus" in e.value for e in page.error), [e.value for e in page.error]


# --- 2. identity behind the proxy ------------------------------------------------------------------

SECRET = "s3cret-only-the-proxy-knows"


def headers(**h) -> StreamlitHeaders:
    return StreamlitHeaders([(k.replace("_", "-"), v) for k, v in h.items()])


def test_the_proxy_header_is_believed_only_with_the_proxys_secret():
    from ui.access import ProxyRefused, proxy_user

    env = {"SEMANNO_PROXY_USER_HEADER": "X-Remote-User", "SEMANNO_PROXY_SECRET": SECRET}
    assert proxy_user(headers(X_Remote_User="alice"), {}) is None  # the mode is off
    with pytest.raises(ProxyRefused, match="only through its signing-in proxy"):
        proxy_user(headers(X_Remote_User="alice@example.org"), env)  # straight to the port
    with pytest.raises(ProxyRefused, match="only through"):
        proxy_user(headers(X_Remote_User="alice", X_Semanno_Proxy_Secret="guess"), env)
    with pytest.raises(ProxyRefused, match="SEMANNO_PROXY_SECRET is not"):
        proxy_user(headers(X_Remote_User="alice"), {"SEMANNO_PROXY_USER_HEADER": "X-Remote-User"})
    with pytest.raises(ProxyRefused, match="no user name"):
        proxy_user(headers(X_Semanno_Proxy_Secret=SECRET), env)
    assert proxy_user(headers(x_remote_user=" bob ", X_Semanno_Proxy_Secret=SECRET), env) == "bob"


def as_request(monkeypatch, **h):
    monkeypatch.setenv("SEMANNO_PROXY_USER_HEADER", "X-Remote-User")
    monkeypatch.setenv("SEMANNO_PROXY_SECRET", SECRET)
    monkeypatch.setattr("ui.access.request_headers", lambda: headers(**h))


def test_a_request_without_the_secret_is_refused_and_a_name_is_shown_as_text(tweets, monkeypatch):
    as_request(monkeypatch, X_Remote_User="alice@example.org")
    at = app("pages/1_Annotate.py").run()
    assert any("only through its signing-in proxy" in e.value for e in at.error)
    assert not at.text_input  # nothing of the page is served
    evil = "[boss](https://evil.example/x) **admin**"
    as_request(monkeypatch, X_Remote_User=evil, X_Semanno_Proxy_Secret=SECRET)
    at = app("pages/1_Annotate.py").run()
    assert not at.exception and not at.error
    caption = next(c.value for c in at.sidebar.caption if "through the proxy" in c.value)
    assert "](" not in caption and "\\*\\*admin\\*\\*" in caption  # escaped: no link, no bold
    assert "\\[boss\\]" in at.text_input(key="save_annotator").help


# --- 3. drafts -------------------------------------------------------------------------------------

def step(rows, label=1, method="keyword") -> dict:
    return {"kind": "search", "method": method, "params": {}, "shown": list(rows), "scores": [],
            "changes": [[r, 0, label] for r in rows], "at": "2026-01-01T00:00:00+00:00"}


def test_a_draft_belongs_to_its_owner_and_writer(tmp_path):
    s = GroupStore(tmp_path / "g.sqlite")
    alice = dict(browser="A", writer="a1")
    assert s.sync_draft("tok-alice", "alice", keep=0, steps=[step(range(9)), step([9], -1)], n_included=9,
                        n_excluded=1, saved=False, meta={"notes": "mine"}, **alice)
    # Bob's first search with Alice's token writes nothing
    assert not s.sync_draft("tok-alice", "bob", keep=0, steps=[step([42])], n_included=1, n_excluded=0,
                            saved=False, browser="B", writer="b1")
    assert s.claim_draft("tok-alice", "bob", browser="B", writer="b1", any_browser=True) is None
    assert not s.delete_draft("tok-alice", "bob")
    assert s.drafts("bob") == []
    d = s.load_draft("tok-alice")
    assert (d.owner, d.n_included, d.n_excluded, d.meta, len(d.steps)) == ("alice", 9, 1, {"notes": "mine"}, 2)
    # without sign-in everyone is "local": another browser neither sees, claims nor discards it
    s.sync_draft("tok-local", "local", keep=0, steps=[step([1, 2])], n_included=2, n_excluded=0, saved=False,
                 browser="A", writer="a2")
    assert [d.token for d in s.drafts("local", browser="B")] == []
    assert s.claim_draft("tok-local", "local", browser="B", writer="b2") is None
    assert not s.delete_draft("tok-local", "local", browser="B")
    assert [d.token for d in s.drafts("local", browser="A")] == ["tok-local"]
    # a second tab of the same browser takes the draft over; the first one's next write is refused
    assert s.claim_draft("tok-local", "local", browser="A", writer="a3") is not None
    assert not s.sync_draft("tok-local", "local", keep=1, steps=[step([3])], n_included=3, n_excluded=0,
                            saved=False, browser="A", writer="a2")


def test_an_autosave_appends_the_new_steps_and_undo_replaces_the_tail(tmp_path):
    from core.session import Session

    s = GroupStore(tmp_path / "g.sqlite")
    sess = Session()
    sess.add_search("keyword", {"query": "the"}, range(100_000))
    w = dict(browser="", writer="w", saved=False)

    def autosave():
        c = sess.counts()
        assert s.sync_draft("t", "local", keep=sess.synced, steps=sess.unsynced_steps(), n_included=c["included"],
                            n_excluded=c["excluded"], **w)
        sess.synced = len(sess.history)

    autosave()
    import sqlite3

    def step_sizes():
        return sqlite3.connect(tmp_path / "g.sqlite").execute(
            "SELECT seq, length(step_json) FROM draft_steps WHERE token='t' ORDER BY seq").fetchall()

    sess.toggle(5)
    autosave()
    sizes = step_sizes()
    assert len(sizes) == 2 and sizes[1][1] < 1000, "a click writes one small row, whatever the group's size"
    sess.undo()
    sess.toggle(7)
    sess.toggle(8)
    autosave()
    assert [q for q, _ in step_sizes()] == [0, 1, 2]
    back = Session.from_history(s.load_draft("t").steps)
    assert back.labels == sess.labels and len(back.history) == 3
    assert back.counts() == {"included": 99_998, "excluded": 2, "steps": 3}


def test_old_drafts_are_pruned_but_never_unsaved_recent_work(tmp_path):
    s = GroupStore(tmp_path / "g.sqlite")
    for token, saved, n in [("saved", True, 3), ("empty", False, 0), ("unsaved", False, 3), ("abandoned", False, 3)]:
        s.sync_draft(token, "local", keep=0, steps=[step(range(n))] if n else [], n_included=n, n_excluded=0,
                     saved=saved, browser="", writer="w")
    import sqlite3

    con = sqlite3.connect(tmp_path / "g.sqlite")
    now = datetime.now(timezone.utc)
    for token, age in [("saved", 2), ("empty", 2), ("unsaved", 20), ("abandoned", 31)]:
        con.execute("UPDATE drafts SET updated_at=? WHERE token=?",
                    ((now - timedelta(days=age)).isoformat(timespec="milliseconds"), token))
    con.commit()
    assert s.prune_drafts(now) == 3
    assert [d.token for d in s.drafts("local", unsaved_only=False)] == ["unsaved"]
    assert con.execute("SELECT COUNT(*) FROM draft_steps WHERE token != 'unsaved'").fetchone()[0] == 0


def search(at, query="ockovani"):
    at.text_input(key="kw_query").set_value(query)
    at.button(key="FormSubmitter:kw_form-Search (KW)").click().run()
    return at


def counts(at):
    return [m.value for m in at.metric[:2]]


def test_bob_with_alices_draft_url_cannot_read_or_overwrite_it(tweets, monkeypatch):
    as_request(monkeypatch, X_Remote_User="alice", X_Semanno_Proxy_Secret=SECRET)
    alice = search(app("pages/1_Annotate.py").run())
    token = alice.query_params["draft"]
    token = token if isinstance(token, str) else token[0]
    before = GroupStore(tweets / "tweets" / "groups.sqlite").load_draft(token)
    assert before.owner == "alice" and before.n_included == 10
    as_request(monkeypatch, X_Remote_User="bob", X_Semanno_Proxy_Secret=SECRET)
    bob = app("pages/1_Annotate.py")
    bob.query_params["draft"] = token
    bob.run()
    assert counts(bob) == ["0", "0"] and not any("unsaved group" in i.value for i in bob.info)
    search(bob, "covid")
    after = GroupStore(tweets / "tweets" / "groups.sqlite").load_draft(token)
    assert (after.owner, after.n_included, len(after.steps)) == ("alice", 10, len(before.steps))
    bob_token = bob.query_params["draft"]
    assert (bob_token if isinstance(bob_token, str) else bob_token[0]) != token


def test_without_sign_in_another_browser_neither_restores_nor_is_offered_a_draft(tweets, monkeypatch):
    monkeypatch.setattr("ui.access.browser_id", lambda cookies=None: "alices-browser")
    alice = search(app("pages/1_Annotate.py").run())
    token = alice.query_params["draft"]
    token = token if isinstance(token, str) else token[0]
    monkeypatch.setattr("ui.access.browser_id", lambda cookies=None: "bobs-browser")
    bob = app("pages/1_Annotate.py")
    bob.query_params["draft"] = token
    bob.run()
    assert counts(bob) == ["0", "0"]
    assert not any("You have an unsaved group" in i.value for i in bob.info)
    assert GroupStore(tweets / "tweets" / "groups.sqlite").load_draft(token).n_included == 10
    # a client-made token names nothing
    made_up = app("pages/1_Annotate.py")
    made_up.query_params["draft"] = "AAAAAAAAAAAAAAAA"
    made_up.run()
    assert counts(made_up) == ["0", "0"] and made_up.query_params.get("draft") != "AAAAAAAAAAAAAAAA"
    # Alice's own browser gets it back after a reload
    monkeypatch.setattr("ui.access.browser_id", lambda cookies=None: "alices-browser")
    again = app("pages/1_Annotate.py")
    again.query_params["draft"] = token
    again.run()
    assert counts(again) == ["10", "0"]


def test_the_browser_id_comes_from_the_xsrf_token_not_its_mask():
    from ui.access import browser_id

    a = browser_id({"_streamlit_xsrf": "2|ff95ec5d|1ccf4a41f8cbb30fa30fafe4f91009d4|1795462749"})
    b = browser_id({"_streamlit_xsrf": "2|5d215f60|be7bf97c5a7f003201bb1cd95ba4bae9|1795462749"})
    assert a and a == b  # the same browser, two page loads (two masks)
    assert browser_id({"_streamlit_xsrf": "2|00000000|1ccf4a41f8cbb30fa30fafe4f91009d4|1"}) != a
    assert browser_id({}) == "" and browser_id({"_streamlit_xsrf": "garbage"}) == ""


# --- 4. the leftovers of the hostile-input audit ---------------------------------------------------

@pytest.mark.parametrize("field, value, says", [
    ("languages", {"en": "most"}, "field 'languages' should map languages to shares"),
    ("languages", {"en": None}, "field 'languages'"),
    ("warnings", 5, "field 'warnings' should be list"),
    ("warnings", "abc", "field 'warnings' should be list"),
    ("warnings", [{"x": 1}], "field 'warnings' should be a list of texts"),
])
def test_a_manifest_of_the_wrong_shape_is_named_not_a_crash(tweets, field, value, says):
    import json

    from core.corpus import CorpusError, load_corpus

    mf = tweets / "tweets" / "manifest.json"
    m = json.loads(mf.read_text())
    m[field] = value
    mf.write_text(json.dumps(m))
    with pytest.raises(CorpusError, match=says):
        load_corpus("tweets")
    home = app("streamlit_app.py").run()
    assert not home.exception and any(says.split(" should")[0] in e.value for e in home.error)


def test_a_manifest_nested_200000_deep_is_named_not_a_crash(tweets):
    from core.corpus import CorpusError, load_corpus

    (tweets / "tweets" / "manifest.json").write_text("[" * 200_000 + "]" * 200_000)
    with pytest.raises(CorpusError, match="nested too deeply"):
        load_corpus("tweets")


def test_set_and_clustering_metadata_that_are_lists_are_named_not_a_crash(tweets):
    import json

    from core import embedsets
    from core.cluster import store
    from core.corpus import load_corpus
    from precompute import kmeans as km_job

    c = load_corpus("tweets")
    embedsets.save(c, "adapted", np.asarray(c.embeddings), {"method": "x"})
    (embedsets.folder("tweets") / "adapted" / "manifest.json").write_text("[1, 2]")
    assert [s.name for s in embedsets.listing(c)] == ["import"]
    assert km_job.main(["--corpus", "tweets", "--k", "3", "--no-terms"]) == 0
    store.clustering_file("tweets", "kmeans-k3").with_suffix(".json").write_text("[1, 2]")
    listed = store.listing("tweets")
    assert listed[0].meta.get("damaged") and not listed[0].stale("anything")
    page = app("pages/4_Topics.py").run()
    assert not page.exception
    z = dict(np.load(store.clustering_file("tweets", "kmeans-k3")))
    z["meta"] = np.array(json.dumps([1, 2]))
    np.savez(store.clustering_file("tweets", "kmeans-k3"), **z)
    with pytest.raises(store.ClusteringError, match="kmeans-k3.npz: damaged clustering file"):
        store.load("tweets", "kmeans-k3")


@pytest.mark.parametrize("param, says", [
    ("n_init=[1,2]", "'n_init' must be 'auto' or a whole number"),
    ("tol=nan", "'tol' must be a number"),
    ("n_init=1e9", "'n_init' must be 'auto' or a whole number"),
    ("n_init=1000000000", "'n_init' must be between 1 and 1000"),
    ("n_init=abc", "'n_init' must be 'auto' or a whole number, got 'abc'"),  # was int()'s "invalid literal"
    ("sample=half", "'sample' must be 'auto' or a whole number"),
    ("init=kmeans", "'init' must be one of auto, k-means++, random"),
])
def test_cluster_parameters_of_the_wrong_kind_are_named_before_any_work(tweets, caplog, param, says):
    from precompute import cluster
    from precompute._cli import run_main

    assert run_main(cluster.main, ["--corpus", "tweets", "--k", "3", "--param", param]) == 2
    assert says in caplog.text


def test_key_lemma_options_no_list_can_be_made_with_are_named_before_any_work(tweets, caplog, capsys):
    from core.cluster import store
    from precompute import cluster, keyterms
    from precompute._cli import run_main

    # a language simplemma has no dictionary of: refused before the clustering, not after it was made and stored
    assert run_main(cluster.main, ["--corpus", "tweets", "--k", "3", "--lang", "xx"]) == 2
    assert "key lemmas in language 'xx': no dictionary of it; write auto or one of" in caplog.text
    assert "cs, " in caplog.text and not store.clustering_file("tweets", "kmeans-k3").exists()
    assert run_main(cluster.main, ["--corpus", "tweets", "--k", "3", "--lang", "en"]) == 0
    before = store.terms_file("tweets", "kmeans-k3").read_bytes()
    for args, says in ((["--top", "0"], "--top must be at least 1, got 0"),
                       (["--top", "-1"], "--top must be at least 1, got -1"),
                       (["--min-count", "0"], "--min-count must be at least 1"),
                       (["--frequent", "-1"], "--frequent must be at least 0, got -1"),
                       (["--lang", "klingon"], "key lemmas in language 'klingon'")):
        caplog.clear()
        assert run_main(keyterms.main, ["--corpus", "tweets", "--k", "3", *args]) == 2, args
        assert says in caplog.text
    assert store.terms_file("tweets", "kmeans-k3").read_bytes() == before  # the stored lemmas stay as they were
    with pytest.raises(SystemExit):
        cluster.main(["--corpus", "tweets", "--k", "3", "--param", "n_init"])
    assert "'n_init': write name=value, e.g. --param n_init=5" in capsys.readouterr().err


def test_cluster_labels_brought_to_evaluate_are_checked_and_named(tweets, tmp_path, caplog):
    """``precompute.evaluate --clusters PATH``: a file that is not one label a row of whole numbers is named, never a
    traceback (an .npz without 'labels' was a KeyError) nor numpy's "contains pickled (object) data" for a CSV."""
    from precompute import evaluate
    from precompute._cli import run_main

    n = 2000
    bad = {"labels.csv": None, "floats.npy": np.full(n, 0.5), "negative.npy": -np.ones(n, int),
           "pairs.npy": np.zeros((n, 2), int), "words.npy": np.array(["a"] * n), "short.npy": np.zeros(5, int),
           "other.npz": {"x": np.zeros(n, int)}}
    for name, value in bad.items():
        f = tmp_path / name
        if value is None:
            f.write_text("id,cluster\n1,0\n")
        elif isinstance(value, dict):
            np.savez(f, **value)
        else:
            np.save(f, value)
    (tmp_path / "cut.npy").write_bytes((tmp_path / "negative.npy").read_bytes()[:300])
    says = {"labels.csv": "not a .npy or .npz file of cluster labels (numpy.save",
            "floats.npy": "must be whole numbers from 0", "negative.npy": "must be whole numbers from 0",
            "pairs.npy": "(2000, 2) cluster labels but the corpus has 2000 rows", "words.npy": "whole numbers",
            "short.npy": "(5,) cluster labels but the corpus has 2000 rows", "other.npz": "no array 'labels' in it "
            "(it holds: x)", "cut.npy": "not a .npy or .npz file of cluster labels"}
    for name, message in says.items():
        caplog.clear()
        assert run_main(evaluate.main, ["--corpus", "tweets", "--clusters", str(tmp_path / name), "--groups"]) == 2
        assert message in caplog.text, (name, caplog.text)
    np.save(tmp_path / "whole.npy", np.arange(n) % 3.0)  # whole numbers saved as floats are read as such
    assert run_main(evaluate.main, ["--corpus", "tweets", "--clusters", str(tmp_path / "whole.npy"), "--groups"]) == 0
    # a column of texts scored each text as a class (NMI near 1 by chance of 2,000 "classes"); the authors are classes
    caplog.clear()
    whole = ["--corpus", "tweets", "--clusters", str(tmp_path / "whole.npy"), "--labels-column"]
    assert run_main(evaluate.main, [*whole, "text"]) == 2
    assert "--labels-column text: column 'text' of corpus 'tweets' holds no classes" in caplog.text
    assert "most rows a value of their own" in caplog.text
    assert run_main(evaluate.main, [*whole, "author"]) == 0


@pytest.mark.parametrize("job, args, says", [
    ("embed", ["--batch-size", "0"], "--batch-size: must be at least 1, got 0"),  # was an exit with no message
    ("embed", ["--chunk-size", "0"], "--chunk-size: must be at least 1, got 0"),  # "range() arg 3 must not be zero"
    ("embed", ["--seed", "-1"], "--seed: must be at least 0, got -1"),
    ("cluster", ["--seed", "-1"], "--seed: must be at least 0, got -1"),  # "expected non-negative integer"
    ("embed", ["--model", " "], "--model: name a model"),  # embedded with the default, recorded as ' '
    ("embed", ["--vectors-model", "m"], "describe the file given with --vectors, and there is none"),  # ignored
])
def test_job_options_no_run_can_use_are_named_by_argparse(capsys, job, args, says):
    import importlib

    mod = importlib.import_module(f"precompute.{job}")
    first = ["in.csv", "--name", "x"] if job == "embed" else ["--corpus", "x", "--k", "3"]
    with pytest.raises(SystemExit) as exit_:
        (mod.parse if job == "embed" else mod.main)(first + args)
    assert exit_.value.code == 2 and says in capsys.readouterr().err


@pytest.mark.parametrize("args, says", [
    (["--batch", "0"], "must be at least 1"), (["--hidden", "0"], "must be at least 1"),
    (["--held-out", "1.0"], "must be in [0, 1)"), (["--held-out", "-1"], "must be in [0, 1)"),
    (["--epochs", "0"], "must be at least 1"), (["--lr", "nan"], "must be in (0, 10]"),
])
def test_dac_training_options_are_checked(tweets, capsys, args, says):
    from precompute import dac as dac_job

    with pytest.raises(SystemExit) as exit_:
        dac_job.main(["train", "--corpus", "tweets", "--stage", "pretrain", *args])
    assert exit_.value.code == 2 and says in capsys.readouterr().err


def test_a_one_text_corpus_says_it_is_too_small_to_train_on(tmp_path, monkeypatch, model):
    from core.cluster.dac import stages
    from core.corpus import ImportSpec, import_corpus

    src = tmp_path / "one.csv"
    src.write_text("id,text\n1,just one text\n")
    c = import_corpus(ImportSpec(input=src, name="one"), root=tmp_path / "d", model_loader=lambda n, d: model)
    with pytest.raises(ValueError, match="at least 20 texts; this corpus has 1"):
        stages.fit_stage(c.embeddings, "pretrain", epochs=1, steps=1)
    monkeypatch.setenv("SEMANNO_DATA", str(tmp_path / "d"))
    page = app("pages/6_DAC.py").run()
    page.button(key="FormSubmitter:am_train-Train").click().run()
    assert not page.exception and any("at least 20 texts" in e.value for e in page.error)


def test_a_file_name_too_long_for_the_file_system_is_named(tmp_path):
    from core.ingest import InputError, read_table

    with pytest.raises(InputError, match="cannot be opened .File name too long"):
        read_table(tmp_path / ("x" * 300 + ".csv"))


def test_a_second_import_of_the_same_corpus_at_once_is_refused(tmp_path, model):
    from core import paths
    from core.atomic import exclusive
    from core.corpus import ImportSpec, import_corpus
    from core.ingest import InputError

    src = tmp_path / "a.csv"
    src.write_text("id,text\n1,apple\n2,pear\n")
    root = tmp_path / "d"
    with exclusive(paths.work_dir("fruit", root).parent / "fruit.import.lock"):  # as a running import holds it
        with pytest.raises(InputError, match="being imported by another process"):
            import_corpus(ImportSpec(input=src, name="fruit", overwrite=True), root=root, model_loader=lambda n, d: model)
    assert import_corpus(ImportSpec(input=src, name="fruit"), root=root, model_loader=lambda n, d: model).n == 2


@pytest.mark.slow
def test_in_a_browser_only_requests_through_the_proxy_get_a_name(tmp_path, tweets_root):
    """A real server in proxy mode, a real browser: straight to Streamlit's port it is refused (whatever
    it claims); through the signing-in proxy (bench/proxy.py) the page serves and the save records
    the proxy's user."""
    import shutil

    from testbed.proxy import running
    from tests.browser import browser_page, free_port, require_browser, streamlit_server, wait_idle

    require_browser()
    root = tmp_path / "d"
    shutil.copytree(tweets_root / "tweets", root / "tweets")
    env = {"SEMANNO_PROXY_USER_HEADER": "X-Remote-User", "SEMANNO_PROXY_SECRET": SECRET}
    with streamlit_server(root, extra_env=env) as (url, _proc), browser_page() as page:
        page.goto(f"{url}/Annotate?corpus=tweets")
        page.get_by_text("only through its signing-in proxy").wait_for()
        assert page.get_by_label("Keyword or regular expression").count() == 0
        with running(url, free_port(), "alice@example.org", SECRET) as proxied:
            page.goto(f"{proxied}/Annotate?corpus=tweets")
            page.get_by_text("Signed in through the proxy as alice").wait_for()
            box = page.get_by_label("Keyword or regular expression")
            box.fill("ockovani")
            box.press("Enter")
            page.get_by_text("KW:").first.wait_for()
            page.get_by_label("Group name").fill("by-alice")
            wait_idle(page)
            page.locator(".st-key-save_btn button:visible").first.click()
            page.get_by_text("Saved group ‘by-alice’ (version 1)").wait_for()
    assert GroupStore(root / "tweets" / "groups.sqlite").load("by-alice").saved_by == "alice@example.org"
