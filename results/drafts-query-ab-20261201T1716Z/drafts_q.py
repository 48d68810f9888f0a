import sys, time, statistics, tempfile
sys.path.insert(0, sys.argv[1])
from pathlib import Path
from core.store import open_store
from core.session import Session, step_dict
root = Path(tempfile.mkdtemp())
s = open_store("tweets", root)
for i in range(2000):
    sess = Session(); sess.add_search("keyword", {"query": "x"}, range(i % 50 + 1))
    undone = []
    if i % 3 == 0:
        sess.undo(); undone = sess.unsynced_undone()
    s.sync_draft(f"tok{i:05d}", f"user{i % 20}", keep=0, steps=sess.unsynced_steps(), undone=undone,
                 n_included=len(sess.labels), n_excluded=0, saved=i % 2 == 0, browser="b", writer="w")
runs = []
for _ in range(200):
    t = time.perf_counter(); s.drafts("user3", browser="b", limit=2); runs.append(time.perf_counter() - t)
t = time.perf_counter(); s.prune_drafts(); p = time.perf_counter() - t
print(sys.argv[1], "drafts() median ms", round(statistics.median(runs) * 1000, 3), "prune ms", round(p * 1000, 1))
