"""One-off: the Timeline page (AppTest) at 3M texts: the whole corpus, and a keyword's hits as a share of all texts
per bin; the first run (the corpus's per-bin counts computed) and the median of 3 more."""
import os, statistics, sys, time
sys.path.insert(0, "/work/main"); os.chdir("/work/main")
os.environ["SEMANNO_DATA"] = "/work/main/data"
from streamlit.testing.v1 import AppTest

at = AppTest.from_file("/work/main/pages/2_Timeline.py", default_timeout=600)
name = sys.argv[1] if len(sys.argv) > 1 else "scale-3000000"
at.query_params["corpus"] = name
t = time.perf_counter(); at.run(); print(f"page opened (corpus loaded): {time.perf_counter() - t:.2f} s")
at.radio(key="tl_source").set_value("The whole corpus")


def timed(label):
    runs = []
    for _ in range(4):
        t = time.perf_counter(); at.run(); runs.append(time.perf_counter() - t)
        assert not at.exception, at.exception
    print(f"{label}: first {runs[0]:.2f} s, then median {statistics.median(runs[1:]):.2f} s "
          f"({[round(r, 2) for r in runs[1:]]}); {at.caption[0].value[:70]}")


timed(f"the whole corpus ({name})")
at.radio(key="tl_source").set_value("Keyword search"); at.run()
at.text_input(key="tl_query").set_value("trump")
timed("keyword 'trump', counts")
at.toggle(key="tl_share").set_value(True)
timed("keyword 'trump', as a share of all texts")
