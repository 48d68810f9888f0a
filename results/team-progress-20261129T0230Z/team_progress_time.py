"""One-off: the Team page's progress table for three annotators with 20,000 labels each on CrisisLex T26 (copies
11%), five calls after a first; run from the repository root: PYTHONPATH=. python THIS_FILE."""
import os, shutil, time, tempfile, statistics
from pathlib import Path
import numpy as np
tmp = Path(tempfile.mkdtemp())
shutil.copytree("data/crisislex_t26", tmp / "crisislex_t26", ignore=shutil.ignore_patterns("groups.sqlite*"))
os.environ["SEMANNO_DATA"] = str(tmp)
from core.corpus import load_corpus
from core.store import GroupStore
from ui import team_panel
c = load_corpus("crisislex_t26", tmp)
store = GroupStore(tmp / "crisislex_t26" / "groups.sqlite")
store.create_topic("t", "", "a", blind=False)
rng = np.random.default_rng(0)
for who in ("a", "b", "c"):
    g = store.assign("t", who)
    rows = rng.choice(c.n, 20000, replace=False)
    store.save(g, c.ids_of(rows[:8000]), c.ids_of(rows[8000:]), annotator=who, topic="t")
rows = store.assignments("t")
team_panel.progress_table("crisislex_t26", c, store, rows)
ts = []
for _ in range(5):
    t = time.perf_counter(); df = team_panel.progress_table("crisislex_t26", c, store, rows); ts.append(time.perf_counter() - t)
print(df); print("median s", statistics.median(ts), ts)
