"""The reliability campaign's parts: kills, concurrent writers, interrupted imports, bad inputs, hostile
queries, attacks. What each part does and the command line: ``python -m bench.reliability``."""

from __future__ import annotations

import json
import random
import signal
import sqlite3
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from pathlib import Path

import numpy as np
import pandas as pd

from testbed.common import FakeModel, SCALE, emit

ROOT = Path(__file__).resolve().parents[1]

SAVER = textwrap.dedent("""
    import random, sys
    from core.store import GroupStore
    s = GroupStore(sys.argv[1])
    name, seed = sys.argv[2], int(sys.argv[3])
    rng = random.Random(seed)
    n = 0
    while True:
        size = rng.randint(1, 5_000)
        v = s.save(name, [f"{seed}-{n}-{i}" for i in range(size)], [], overwrite=True)
        print(v, size, flush=True)
        n += 1
""")

WRITER = textwrap.dedent("""
    import sys, time
    from core.store import GroupStore
    s = GroupStore(sys.argv[1])
    tag, until = sys.argv[2], time.time() + float(sys.argv[3])
    n = 0
    while time.time() < until:
        name = "shared" if n % 2 == 0 else f"{tag}-{n}"
        try:
            v = s.save(name, [f"{tag}{n}-{i}" for i in range(50)], [], overwrite=True)
            print(json.dumps({"name": name, "version": v, "first": f"{tag}{n}-0"}), flush=True)
        except Exception as exc:
            print(json.dumps({"error": repr(exc)}), flush=True)
        n += 1
""").replace("import sys, time", "import json, sys, time")

IMPORTER = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    import numpy as np
    from core.corpus import ImportSpec, import_corpus

    class Slow:  # deterministic vectors, slowly, so that a kill lands mid-import
        def get_sentence_embedding_dimension(self): return 24
        def encode(self, texts, **kw):
            time.sleep(0.01 * len(texts) / 32)
            return np.stack([np.frombuffer(t.encode().ljust(96, b"x")[:96], dtype=np.uint8)[:24].astype("float32") + 1
                             for t in texts])

    import_corpus(ImportSpec(input=Path(sys.argv[1]), name="c", overwrite=True, chunk_size=256, batch_size=32),
                  root=Path(sys.argv[2]), model_loader=lambda n, d: Slow())
""")


def _run(code: str, *args: str, **kw) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", code, *map(str, args)], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, **kw)


def _drain(procs: list[subprocess.Popen], timeout: float | None = None) -> list[tuple[str, str]]:
    """Each process's (stdout, stderr), read concurrently as they come: a pipe left unread fills at
    64 KB and its writer then waits in print(), no longer doing what is measured."""
    outs: list[list[str]] = [[] for _ in range(2 * len(procs))]
    threads = [threading.Thread(target=outs[2 * i + j].extend, args=(stream,), daemon=True)
               for i, p in enumerate(procs) for j, stream in enumerate((p.stdout, p.stderr))]
    for t in threads:
        t.start()
    for p in procs:
        p.wait(timeout)
    for t in threads:
        t.join()
    return [("".join(outs[2 * i]), "".join(outs[2 * i + 1])) for i in range(len(procs))]


def integrity(db: Path) -> str:
    con = sqlite3.connect(db)
    try:
        return con.execute("PRAGMA integrity_check").fetchone()[0]
    finally:
        con.close()


def stored_sizes(db: Path) -> dict[int, int]:
    """Labels stored per version of group 'g' (what a load would return, counted in SQL)."""
    con = sqlite3.connect(db)
    try:
        return dict(con.execute("SELECT v.number, COUNT(l.item_id) FROM versions v JOIN groups g ON g.id = v.group_id "
                                "LEFT JOIN labels l ON l.version_id = v.id WHERE g.name = 'g' GROUP BY v.id").fetchall())
    finally:
        con.close()


def kills(trials: int, seed: int = 0) -> dict:
    from core.store import GroupStore

    rng = random.Random(seed)
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "g.sqlite"
        GroupStore(db)
        committed: dict[int, int] = {}
        for t in range(trials):
            proc = _run(SAVER, db, "g", t)
            time.sleep(rng.uniform(0.05, 1.5))
            proc.send_signal(signal.SIGKILL)
            out, _ = proc.communicate()
            for line in out.splitlines(keepends=True):
                if not line.endswith("\n"):  # the kill cut the saver's last report short: skip it
                    continue
                v, size = map(int, line.split())
                committed[v] = size
            on_disk = stored_sizes(db)  # every version, one query: number -> labels stored
            lost = [v for v, size in committed.items() if on_disk.get(v) != size]
            ok = integrity(db)
            bad = bool(lost) or ok != "ok"
            failures += bad
            emit(part="kills", trial=t, versions=len(committed), lost=lost[:5], integrity=ok)
    return {"part": "kills", "trials": trials, "failures": failures}


def writers(n: int, seconds: float) -> dict:
    from core.store import GroupStore

    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "g.sqlite"
        GroupStore(db)
        procs = [_run(WRITER, db, f"w{i}", seconds) for i in range(n)]
        results = [json.loads(line) for out, _ in _drain(procs, timeout=seconds + 120) for line in out.splitlines()]
        store = GroupStore(db)
        errors = [r["error"] for r in results if "error" in r]
        saved = [r for r in results if "error" not in r]
        shared = {v[0]: v for v in store.versions("shared")}
        missing = [r for r in saved if r["name"] == "shared" and r["version"] not in shared]
        missing += [r for r in saved if r["name"] != "shared" and store.load(r["name"]).included[0] != r["first"]]
        ok = integrity(db)
    emit(part="writers", writers=n, seconds=seconds, saves=len(saved), errors=errors[:3], missing=len(missing),
         integrity=ok)
    return {"part": "writers", "trials": len(saved) + len(errors), "failures": len(errors) + len(missing) + (ok != "ok")}


def import_kills(trials: int, rows: int = 3000, seed: int = 0) -> dict:
    from core.corpus import list_corpora, load_corpus
    from core.store import GroupStore

    rng = random.Random(seed)
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        src = tmp / "in.csv"
        pd.DataFrame({"id": [f"t{i}" for i in range(rows)],
                      "text": [f"text number {i} about {i % 17}" for i in range(rows)]}).to_csv(src, index=False)
        ref_root = tmp / "ref"
        assert _run(IMPORTER, src, ref_root).wait(600) == 0
        ref = load_corpus("c", ref_root)
        for t in range(trials):
            root = tmp / f"r{t}"
            # an older import of the corpus, with saved groups, that the re-import replaces
            assert _run(IMPORTER, src, root).wait(600) == 0
            GroupStore(root / "c" / "groups.sqlite").save("kept", ["t1", "t2"], ["t3"])
            proc = _run(IMPORTER, src, root)
            time.sleep(rng.uniform(0.1, 2.5))
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            listed = list_corpora(root) == ["c"]
            assert _run(IMPORTER, src, root).wait(600) == 0  # the same command again
            c = load_corpus("c", root)
            same = c.frame.equals(ref.frame) and np.array_equal(np.asarray(c.embeddings), np.asarray(ref.embeddings))
            groups = GroupStore(root / "c" / "groups.sqlite").load("kept").included == ["t1", "t2"]
            bad = not (listed and same and groups)
            failures += bad
            emit(part="import_kills", trial=t, listed_after_kill=listed, identical=same, groups_kept=groups)
    return {"part": "import_kills", "trials": trials, "failures": failures}


BAD_INPUTS: list[tuple[str, str, bytes, list[str]]] = [
    # (case, file name, content, substrings the message must hold)
    ("malformed CSV", "bad.csv", b'id,text\n1,"unterminated\n2,b,c,d\n', ["bad.csv"]),
    ("missing text column", "nocol.csv", b"id,words\n1,x\n", ["nocol.csv", "'text'", "'words'"]),
    ("duplicate ids", "dup.csv", b"id,text\n1,a\n2,b\n1,c\n", ["dup.csv", "'id'", "duplicate", "rows 1, 3"]),
    ("missing ids", "noid.csv", b"id,text\n1,a\n,b\n", ["noid.csv", "'id'", "rows 2"]),
    ("only empty texts", "empty.csv", b"id,text\n1,\n2,  \n", ["empty.csv", "no rows left"]),
    ("bad dates", "dates.csv", b"id,text,date\n1,a,2021-01-01\n2,b,yesterday\n", ["dates.csv", "'date'", "row 2", "yesterday"]),
    ("not UTF-8", "latin.csv", "id,text\n1,ok\n2,žluť\n".encode("cp1250"), ["latin.csv", "UTF-8", "line 3"]),
    ("zero rows", "zero.csv", b"id,text\n", ["zero.csv", "no data rows"]),
    ("binary named .csv", "binary.csv", bytes(range(256)) * 40, ["binary.csv"]),
    ("unknown type", "data.docx", b"PK\x03\x04", ["data.docx", "unknown file type"]),
    ("corrupt workbook", "data.xlsx", b"PK\x03\x04", ["data.xlsx", "cannot be read as WORKBOOK"]),
]


def _parquet(frame: pd.DataFrame) -> bytes:
    import io

    buf = io.BytesIO()
    frame.to_parquet(buf)
    return buf.getvalue()


def bad_inputs() -> dict:
    from core.corpus import ImportSpec, import_corpus, load_corpus
    from core.ingest import InputError
    from core.store import GroupStore

    cases = list(BAD_INPUTS) + [
        ("integer dates in Parquet", "intdate.parquet",  # numbers, and no Unix times (those are read as instants)
         _parquet(pd.DataFrame({"id": ["a"], "text": ["x"], "date": [20210201]})), ["intdate.parquet", "'date'", "numbers"]),
        ("list texts in Parquet", "lists.parquet",
         _parquet(pd.DataFrame({"id": ["a", "b"], "text": [["x"], ["y", "z"]]})), ["lists.parquet", "'text'", "rows 1, 2", "a list"]),
        ("binary texts in Parquet", "bytes.parquet",
         _parquet(pd.DataFrame({"id": ["a"], "text": [b"\x00\x01"]})), ["bytes.parquet", "'text'", "binary data"]),
        ("a 1 MB text", "big.csv", b"id,text\n1," + b"a" * 1_000_000 + b"\n2,ok\n", None),  # accepted as is
    ]
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        good = tmp / "good.csv"
        good.write_text("id,text\n1,apple\n2,pear\n3,plum\n")
        import_corpus(ImportSpec(input=good, name="c"), root=tmp / "data", model_loader=lambda n, d: FakeModel(8))
        GroupStore(tmp / "data" / "c" / "groups.sqlite").save("kept", ["1"], ["2"])
        before = load_corpus("c", tmp / "data").frame.copy()
        for case, fname, content, says in cases:
            path = tmp / fname
            path.write_bytes(content)
            try:
                import_corpus(ImportSpec(input=path, name="c", overwrite=True), root=tmp / "data",
                              model_loader=lambda n, d: FakeModel(8))
                message, accepted = "", True
            except (InputError, ValueError) as exc:
                message, accepted = str(exc), False
            if says is None:  # a case that must be accepted: put the good corpus back afterwards
                ok = accepted
                import_corpus(ImportSpec(input=good, name="c", overwrite=True), root=tmp / "data",
                              model_loader=lambda n, d: FakeModel(8))
            else:
                ok = not accepted and all(s in message for s in says)
            intact = (load_corpus("c", tmp / "data").frame.equals(before)
                      and GroupStore(tmp / "data" / "c" / "groups.sqlite").load("kept").included == ["1"])
            failures += not (ok and intact)
            emit(part="bad_inputs", case=case, ok=ok, corpus_and_groups_intact=intact, message=message[:160])
        # damaged corpus files: a clear CorpusError, groups untouched
        from core.corpus import CorpusError

        c = load_corpus("c", tmp / "data")
        data = c.data_folder
        emb = np.load(data / "embeddings.npy")
        damages = [("truncated embeddings.npy", lambda: (data / "embeddings.npy").write_bytes(
                        (data / "embeddings.npy").read_bytes()[:100]), "embeddings.npy"),
                   ("mis-shaped embeddings.npy", lambda: np.save(data / "embeddings.npy", emb[:-1]), "rows but embeddings"),
                   ("NaN in embeddings.npy", lambda: np.save(data / "embeddings.npy", np.where(np.arange(len(emb))[:, None] == 1, np.nan, emb).astype(np.float32)), "non-finite"),
                   ("corrupt manifest", lambda: (c.folder / "manifest.json").write_text("[1, 2]"), "expected a JSON object")]
        manifest = (c.folder / "manifest.json").read_text()
        for case, damage, says in damages:
            damage()
            try:
                load_corpus("c", tmp / "data")
                message = ""
            except CorpusError as exc:
                message = str(exc)
            ok = says in message and "c" in message
            intact = GroupStore(tmp / "data" / "c" / "groups.sqlite").load("kept").included == ["1"]
            failures += not (ok and intact)
            emit(part="bad_inputs", case=case, ok=ok, groups_intact=intact, message=message[:160])
            np.save(data / "embeddings.npy", emb)
            (c.folder / "manifest.json").write_text(manifest)
    return {"part": "bad_inputs", "trials": len(cases) + 4, "failures": failures}


CATASTROPHIC = [r"(a+)+$", r"(x+x+)+y", r"((ab)*)*c$", r"(.*a){12}", r"(\w+\s?)+$", r"^(([a-z])+.)+[A-Z]([a-z])+$"]


def regex(limit_rows: int | None = None, timeout_s: float = 2.0) -> dict:
    from core.search.keyword import KeywordError, KeywordIndex, find_rows

    texts = pd.read_csv(SCALE, usecols=["text"], dtype=str, keep_default_na=False, nrows=limit_rows)["text"].tolist()
    texts += ["a" * 5000 + "!", "x" * 3000, "ab" * 2000]
    ki = KeywordIndex(texts)
    failures = 0
    for pattern in CATASTROPHIC + ["|".join(f"word{i}" for i in range(100)), "trump" * 200]:
        t = time.perf_counter()
        try:
            found, message = len(find_rows(ki, pattern, is_regex=True, timeout_s=timeout_s)), ""
        except KeywordError as exc:
            found, message = None, str(exc)
        seconds = time.perf_counter() - t
        ok = seconds <= timeout_s * 1.1 + 0.05 and (found is not None or bool(message))
        failures += not ok
        emit(part="regex", pattern=pattern[:40], rows=len(texts), seconds=round(seconds, 3), hits=found,
             message=message[:100], ok=ok)
    return {"part": "regex", "trials": len(CATASTROPHIC) + 2, "failures": failures}


PAYLOAD = textwrap.dedent("""
    import io, sys, torch
    from pathlib import Path

    class Payload:  # unpickling it runs Path(marker).touch(): what an attacker's os.system would do
        def __reduce__(self):
            return (Path.touch, (Path(sys.argv[2]),))

    buf = io.BytesIO()
    torch.save({"format": 1, "config": {"dim": 8}, "state": {}, "payload": Payload()}, buf)
    Path(sys.argv[1]).parent.mkdir(parents=True, exist_ok=True)
    Path(sys.argv[1]).write_bytes(buf.getvalue())
""")


def attacks() -> dict:
    """The model-file, identity and draft attacks (see the module's docstring); one line each."""
    from testbed.browser import CHROMIUM, ARGS, free_port, streamlit_server, wait_idle
    from testbed.proxy import running
    from core.corpus import ImportSpec, import_corpus
    from core.store import GroupStore

    results = []

    def record(attack: str, ok: bool, **facts) -> None:
        results.append(ok)
        emit(part="attacks", attack=attack, ok=ok, **facts)

    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        src = tmp / "c.csv"
        pd.DataFrame({"id": [f"t{i}" for i in range(80)],
                      "text": [("flood water rising " if i % 2 else "vaccine news ") + str(i) for i in range(80)]}
                     ).to_csv(src, index=False)
        root = tmp / "data"
        import_corpus(ImportSpec(input=src, name="c"), root=root, model_loader=lambda n, d: FakeModel(8))
        marker = tmp / "pwned"
        env = {**__import__("os").environ, "SEMANNO_DATA": str(root), "PYTHONPATH": str(ROOT)}
        for target in (root / "c" / "dac" / "shared-model.pt", root / ".work" / "c" / "cluster-kmeans-k3" / "state.pt"):
            subprocess.run([sys.executable, "-c", PAYLOAD, str(target), str(marker)], check=True, env=env)
        # a clustering resumed from the planted checkpoint, and a model name that is a path
        for attack, args, says in [
                ("planted checkpoint resumed", ["--method", "kmeans", "--k", "3"], "refused to load the checkpoint state.pt"),
                ("model name that is a path", ["--method", "dac", "--param", "model=../../x"], "invalid model name")]:
            r = subprocess.run([sys.executable, "-m", "precompute.cluster", "--corpus", "c", *args], cwd=ROOT, env=env,
                               capture_output=True, text=True, timeout=300)
            said = next((line for line in r.stderr.splitlines() if "ERROR" in line), "")
            record(attack, r.returncode == 2 and says in said and not marker.exists(), exit_code=r.returncode,
                   code_ran=marker.exists(), message=said[:200])
        from playwright.sync_api import sync_playwright

        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)

            def page_of(context=None):
                page = (context or browser.new_context()).new_page()
                page.set_default_timeout(60_000)
                return page

            def search(page, query):
                box = page.get_by_label("Keyword or regular expression")
                box.fill(query)
                box.press("Enter")
                page.get_by_text("KW:").first.wait_for()
                wait_idle(page)

            def draft_of(page) -> str:
                return page.url.split("draft=")[1].split("&")[0]

            def counters(page) -> list[str]:
                page.wait_for_function("() => document.querySelectorAll('[data-testid=stMetricValue]').length >= 2")
                wait_idle(page)
                return page.locator('[data-testid="stMetricValue"]').all_inner_texts()[:2]

            with streamlit_server(root) as (url, _proc):
                page = page_of()
                page.goto(f"{url}/Annotate?corpus=c")
                page.get_by_label("Keyword or regular expression").wait_for()
                wait_idle(page)
                record("planted model, Annotate opened", not marker.exists(), code_ran=marker.exists())
                page.get_by_role("link", name="DAC", exact=True).click()
                page.get_by_text("Pick a model").wait_for()
                page.get_by_role("combobox", name="Model", exact=True).click()
                page.get_by_role("option", name="shared-model").click()
                page.get_by_text("refused to load").wait_for()
                record("planted model picked", not marker.exists(), code_ran=marker.exists(), refused=True)
                # drafts on a server without sign-in: another browser with this tab's URL, a made-up token
                alice = page_of()
                alice.goto(f"{url}/Annotate?corpus=c")
                search(alice, "flood")
                token = draft_of(alice)
                db = GroupStore(root / "c" / "groups.sqlite")
                before = db.load_draft(token)
                other = page_of()  # another browser: its own cookies
                other.goto(f"{url}/Annotate?corpus=c&draft={token}")
                other.get_by_label("Keyword or regular expression").wait_for()
                wait_idle(other)
                shown = counters(other)
                offered = other.get_by_text("You have an unsaved group").count()
                search(other, "vaccine")
                after = db.load_draft(token)
                record("another browser opens a tab's draft URL", shown == ["0", "0"] and not offered and
                       (after.n_included, len(after.steps)) == (before.n_included, len(before.steps)),
                       counters_shown=shown, offered=bool(offered), draft_unchanged=after.steps == before.steps)
                made_up = page_of()
                made_up.goto(f"{url}/Annotate?corpus=c&draft=AAAAAAAAAAAAAAAAAAAAAA")
                made_up.get_by_label("Keyword or regular expression").wait_for()
                shown = counters(made_up)
                record("a made-up draft token", shown == ["0", "0"] and db.load_draft("AAAAAAAAAAAAAAAAAAAAAA") is None,
                       counters_shown=shown)
            # identity: proxy-header mode
            secret = "reliability-secret-0123456789"
            proxy_env = {"SEMANNO_PROXY_USER_HEADER": "X-Remote-User", "SEMANNO_PROXY_SECRET": secret}
            with streamlit_server(root, extra_env=proxy_env) as (url, _proc):
                direct = page_of(browser.new_context(extra_http_headers={"X-Remote-User": "alice@example.org"}))
                direct.goto(f"{url}/Annotate?corpus=c")
                direct.get_by_text("only through its signing-in proxy").wait_for()
                record("a request straight to the port claiming a user", direct.get_by_label(
                    "Keyword or regular expression").count() == 0, refused=True)
                with running(url, free_port(), "alice@example.org", secret) as via_alice, \
                        running(url, free_port(), "bob@example.org", secret) as via_bob:
                    alice = page_of()
                    alice.goto(f"{via_alice}/Annotate?corpus=c")
                    search(alice, "flood")
                    alice.get_by_label("Group name").fill("alices")
                    wait_idle(alice)
                    alice.locator(".st-key-save_btn button:visible").first.click()
                    alice.get_by_text("Saved group ‘alices’ (version 1)").wait_for()
                    search(alice, "vaccine")
                    counters(alice)
                    alice.wait_for_timeout(1000)  # Alice's autosave of that step is in before Bob comes
                    token = draft_of(alice)
                    before = db.load_draft(token)
                    bob = page_of()
                    bob.goto(f"{via_bob}/Annotate?corpus=c&draft={token}")
                    bob.get_by_label("Keyword or regular expression").wait_for()
                    shown = counters(bob)
                    search(bob, "flood")
                    after = db.load_draft(token)
                    saved_by = db.load("alices").saved_by
                    record("through the proxy the save records the proxy's user", saved_by == "alice@example.org",
                           saved_by=saved_by)
                    bobs = [st.get("params", {}).get("query") for st in after.steps[len(before.steps):]]
                    record("Bob opens Alice's draft URL and searches", shown == ["0", "0"] and after.owner ==
                           "alice@example.org" and after.steps == before.steps, counters_shown=shown,
                           owner_after=after.owner, draft_unchanged=after.steps == before.steps,
                           steps_before=len(before.steps), steps_after=len(after.steps), added_queries=bobs)
            browser.close()
    return {"part": "attacks", "trials": len(results), "failures": results.count(False)}


# --- the group store on both backends (issue 28) -----------------------------------------------------

OPEN = """
import sys
from core.db import PostgreSQL
from core.store import GroupStore
def open_store(where):
    return GroupStore(PostgreSQL(where), corpus="c") if where.startswith("postgresql://") else GroupStore(where)
"""

TIMED_WRITER = OPEN + textwrap.dedent("""
    import json, time
    s = open_store(sys.argv[1])
    tag, until = sys.argv[2], time.time() + float(sys.argv[3])
    n = 0
    while time.time() < until:
        name = "shared" if n % 2 == 0 else f"{tag}-{n}"
        t = time.perf_counter()
        try:
            v = s.save(name, [f"{tag}{n}-{i}" for i in range(50)], [], overwrite=True)
            print(json.dumps({"name": name, "version": v, "first": f"{tag}{n}-0",
                              "ms": (time.perf_counter() - t) * 1000}), flush=True)
        except Exception as exc:
            print(json.dumps({"error": repr(exc)[:200], "ms": (time.perf_counter() - t) * 1000}), flush=True)
        n += 1
""")

STORE_SAVER = OPEN + textwrap.dedent("""
    import random
    s = open_store(sys.argv[1])
    seed = int(sys.argv[2])
    rng = random.Random(seed)
    n = 0
    while True:
        size = rng.randint(1, 5_000)
        v = s.save("g", [f"{seed}-{n}-{i}" for i in range(size)], [], overwrite=True)
        print(v, size, flush=True)
        n += 1
""")


# An annotator as the Annotate page drives the store, at a person's pace: every action (a click on a text, 1 in 8 a
# search bringing 10 texts in) is written as the page's autosave writes it (ui/drafts._write: the new steps and
# journal entries in one transaction), every 30th action saves a version of the annotator's group for the topic
# (session, work and expected version, as Save does) and reads the topic's progress (the Team page's query).
PACED_ANNOTATOR = OPEN + textwrap.dedent("""
    import json, random, time
    from core.session import Session
    from testbed.reliability import labels_digest
    s = open_store(sys.argv[1])
    tag, until, pace, topic = sys.argv[2], time.time() + float(sys.argv[3]), float(sys.argv[4]), sys.argv[5]
    rng, sess, token, group = random.Random(tag), Session(), f"draft-{topic}-{tag}", s.assign(topic, tag)
    version, n, rows = None, 0, int(sys.argv[6])
    sess.add_search("keyword", {"query": "start"}, range(rows))  # the topic's first keyword: its hits, all at once
    def ids(changes):  # the journal names texts by id
        return [(f"t{r}", old, new) for r, old, new in changes]
    def timed(kind, call):
        t = time.perf_counter()
        try:
            out = call()
            print(json.dumps({"op": kind, "ms": (time.perf_counter() - t) * 1000}), flush=True)
            return out
        except Exception as exc:
            print(json.dumps({"op": kind, "error": repr(exc)[:200]}), flush=True)
    time.sleep(rng.uniform(0, pace))  # the annotators do not start in step
    while time.time() < until:
        time.sleep(min(rng.expovariate(1 / pace), 4 * pace))
        if n % 8 == 0:
            sess.add_search("keyword", {"query": f"q{n}"}, range(rows, rows + 10))
            rows += 10
        else:
            sess.toggle(rng.randrange(rows))
        counts = sess.counts()
        journal = [{**e, "changes": ids(e["changes"])} for e in sess.unsynced_journal()]
        if timed("click", lambda: s.sync_draft(token, tag, keep=sess.synced, steps=sess.unsynced_steps(),
                                               journal=journal, browser=tag, writer=tag, saved=False,
                                               n_included=counts["included"], n_excluded=counts["excluded"])):
            sess.synced, sess.journal_synced = len(sess.history), len(sess.journal)
        n += 1
        if n % 30 == 0:
            inc = [f"t{r}" for r, v in sess.labels.items() if v == 1]
            exc = [f"t{r}" for r, v in sess.labels.items() if v == -1]
            got = timed("save", lambda: s.save(group, inc, exc, annotator=tag, overwrite=version is not None,
                                               session_json=sess.to_json(), expect=version, work=token, topic=topic))
            if got is not None:
                version = got
                print(json.dumps({"saved": group, "version": got, "labels": labels_digest(inc, exc)}), flush=True)
            timed("progress", lambda: s.assignments(topic))
""")


def labels_digest(included, excluded) -> str:
    """A version's labels in a line: what PACED_ANNOTATOR saved, checked against what the store gives back."""
    import hashlib

    return hashlib.sha1(repr((sorted(included), sorted(excluded))).encode()).hexdigest()


def team_paced(where: str, n: int, seconds: float, pace: float = 2.0, start: int = 1000) -> dict:
    """``n`` annotators of one topic working at a person's pace (an action every ``pace`` s on average), each from
    a keyword search that brought ``start`` texts in: the latency of a click's autosave, of a save and of the Team
    page's progress query (p50 / p99), errors, and every version each reported saved loaded back with its labels."""
    s, topic = _store(where), f"team of {n}"
    s.create_topic(topic, "", created_by="lead")
    procs = [_run(PACED_ANNOTATOR, where, f"a{i}", seconds, pace, topic, start) for i in range(n)]
    lines = [json.loads(line) for out, _ in _drain(procs) for line in out.splitlines() if line.strip()]
    errors = [x["error"] for x in lines if "error" in x]
    saved = [x for x in lines if "saved" in x]
    versions = ((x, s.load(x["saved"], x["version"])) for x in saved)
    missing = [x for x, g in versions if x["labels"] != labels_digest(g.included, g.excluded)]
    figures = {}
    for op in ("click", "save", "progress"):
        ms = np.array([x["ms"] for x in lines if x.get("op") == op and "ms" in x] or [np.nan])
        figures[op] = dict(n=int(np.isfinite(ms).sum()), p50_ms=round(float(np.nanpercentile(ms, 50)), 1),
                           p99_ms=round(float(np.nanpercentile(ms, 99)), 1))
    emit(part="team_paced", backend=_backend_name(where), annotators=n, seconds=seconds, pace_s=pace, start=start,
         errors=errors[:3], n_errors=len(errors), missing=len(missing), **figures)
    return {"part": f"team_paced_{_backend_name(where)}_{n}", "trials": len(lines), "failures": len(errors) + len(missing),
            **{f"{op}_p99_ms": f["p99_ms"] for op, f in figures.items()}}


def _store(where: str):
    from core.db import PostgreSQL
    from core.store import GroupStore

    return GroupStore(PostgreSQL(where), corpus="c") if where.startswith("postgresql://") else GroupStore(where)


def _backend_name(where: str) -> str:
    return "postgresql" if where.startswith("postgresql://") else "sqlite"


def store_kills(where: str, trials: int, seed: int = 0) -> dict:
    """A process saving versions of 1-5,000 labels in a loop, SIGKILLed at a random moment: every version
    it reported committed must load with all its labels (either backend)."""
    rng, failures, committed = random.Random(seed), 0, {}
    s = _store(where)
    for t in range(trials):
        proc = _run(STORE_SAVER, where, t)
        time.sleep(rng.uniform(0.3, 1.5))
        proc.send_signal(signal.SIGKILL)
        out, _ = proc.communicate()
        for line in out.splitlines(keepends=True):
            if line.endswith("\n") and len(line.split()) == 2:
                v, size = map(int, line.split())
                committed[v] = size
        counts = {n: inc + exc for n, _, _, inc, exc in s.versions("g")}
        lost = [v for v, size in committed.items() if counts.get(v) != size]
        failures += bool(lost)
        emit(part="store_kills", backend=_backend_name(where), trial=t, versions=len(committed), lost=lost[:5])
    return {"part": f"store_kills_{_backend_name(where)}", "trials": trials, "failures": failures}


def store_writers(where: str, n: int, seconds: float) -> dict:
    """``n`` processes saving 50-label versions for ``seconds`` (half to one shared group): no committed
    version missing, no error; each save's latency (p50 / p99)."""
    procs = [_run(TIMED_WRITER, where, f"w{i}", seconds) for i in range(n)]
    lines = [json.loads(line) for out, _ in _drain(procs) for line in out.splitlines() if line.strip()]
    saved, errors = [x for x in lines if "version" in x], [x["error"] for x in lines if "error" in x]
    s = _store(where)
    missing = [x for x in saved if x["first"] not in set(s.load(x["name"], x["version"]).included)]
    ms = np.array([x["ms"] for x in saved]) if saved else np.zeros(1)
    emit(part="store_writers", backend=_backend_name(where), writers=n, seconds=seconds, saves=len(saved),
         errors=errors[:3], missing=len(missing), p50_ms=round(float(np.percentile(ms, 50)), 1),
         p99_ms=round(float(np.percentile(ms, 99)), 1), saves_per_s=round(len(saved) / seconds, 1))
    return {"part": f"store_writers_{_backend_name(where)}_{n}", "trials": len(saved) + len(errors),
            "failures": len(errors) + len(missing)}


def postgres_restart(server, seconds: float = 12.0) -> dict:
    """PostgreSQL stopped and started again while a writer saves every few milliseconds: saves during the
    outage fail with a named error (never silently), every save reported committed is there afterwards,
    and saving works again after the restart."""
    outage = max(seconds / 4, 6.0)  # longer than the store's 3 s wait for a connection, so saves must fail
    proc = _run(TIMED_WRITER, server.dsn, "r", seconds + outage)
    # its output is read as it comes (_drain): left in the pipe, a fast writer filled the pipe within two
    # seconds and waited in print() through the whole outage, never seeing the server down (CI: 0 errors)
    # stop the server only once the writer is up and saving: a writer still starting (a busy machine)
    # would find the server down at its first connection and exit before saving anything
    first = proc.stdout.readline()
    drained: list = []
    reader = threading.Thread(target=lambda: drained.extend(_drain([proc])), daemon=True)
    reader.start()
    time.sleep(seconds / 4)
    server.stop("fast")
    down = time.time()
    time.sleep(outage)
    server.start()
    up = time.time()
    reader.join()
    ((out, err),) = drained
    lines = [json.loads(line) for line in [first, *out.splitlines()] if line.strip()]
    saved, errors = [x for x in lines if "version" in x], [x["error"] for x in lines if "error" in x]
    s = _store(server.dsn)
    missing = [x for x in saved if x["first"] not in set(s.load(x["name"], x["version"]).included)]
    named = all("PostgreSQL at" in e and "password" not in e.lower() for e in errors)
    last_error = max((i for i, x in enumerate(lines) if "error" in x), default=len(lines))
    after = sum(1 for x in lines[last_error + 1:] if "version" in x)  # saves once the server was back
    if not lines:
        errors = [f"the writer saved nothing: {err.strip().splitlines()[-1] if err.strip() else 'no output'}"]
    ok = not missing and named and bool(errors) and after > 0
    emit(part="postgres_restart", saves=len(saved), errors_during_outage=len(errors), named=named,
         missing=len(missing), down_s=round(up - down, 1), saves_after_restart=after, example=(errors or [""])[0][:160])
    return {"part": "postgres_restart", "trials": 1, "failures": int(not ok)}


def rebuild(where: str, events: int = 1_000_000) -> dict:
    """A version whose work journal holds ``events`` label events (entries of 10,000 texts): the time to
    rebuild its membership from them, and that it equals the saved labels."""
    s = _store(where)
    ids = [f"t{i}" for i in range(200_000)]
    rng = np.random.default_rng(0)
    state: dict[str, int] = {}
    entries = []
    for e in range(events // 10_000):
        rows = rng.choice(len(ids), 10_000, replace=False)
        new = rng.choice([1, -1], 10_000)
        changes = [(ids[r], state.get(ids[r], 0), int(v)) for r, v in zip(rows, new)]
        state.update({ids[r]: int(v) for r, v in zip(rows, new)})
        entries.append({"kind": "apply", "step": f"s{e}", "at": "2026-11-23T00:00:00+00:00", "method": "bulk",
                        "params": {}, "changes": changes})
    t = time.perf_counter()
    for chunk in range(0, len(entries), 10):
        s.append_journal("big", "bench", entries[chunk:chunk + 10])
    write_s = time.perf_counter() - t
    s.save("big", [i for i, v in state.items() if v == 1], [i for i, v in state.items() if v == -1], work="big")
    t = time.perf_counter()
    inc, exc = s.membership("big")
    rebuild_s = time.perf_counter() - t
    ok = set(inc) == {i for i, v in state.items() if v == 1} and set(exc) == {i for i, v in state.items() if v == -1}
    emit(part="rebuild", backend=_backend_name(where), events=events, write_s=round(write_s, 1),
         rebuild_s=round(rebuild_s, 2), same_as_saved=ok)
    return {"part": f"rebuild_{_backend_name(where)}", "trials": 1, "failures": int(not ok)}
