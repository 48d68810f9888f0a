"""The app itself driven headless, page by page, on whatever device torch sees (issue 30, item 3: "the app
started on the GPU machine and driven through import, every search button, Topics and the Amortized page").

    python -m bench.gpu_app --csv ../shared/data/czech_politicians_tweets_2021.csv --rows 3000 \
        --model multilingual-e5-small --keyword ockovani [--device-expected cuda]

Streamlit's AppTest runs the real pages in this process, as a user's clicks would: the home page imports the
first ``--rows`` rows of ``--csv`` (the model named, embedded on the device ``pick_device("auto")`` picks);
Annotate searches a keyword, excludes two hits, then presses every semantic search button in turn (each
undone after), saves the group; Timeline and the LDA scatter open on it; Topics clusters the corpus with
K-Means and DEC (key lemmas computed); the Amortized page trains a small DAC model and reads an anchor's
bag; Annotate's Suggest runs again with that model present. Each step prints one JSON line: seconds from the
click to the rendered page, what the page said, any error, the GPU memory held when the step began and its
peak during the step (``torch.cuda.max_memory_allocated``, reset before each step: a peak above what was held
is memory the step itself took on the GPU). ``--device-expected cuda`` makes the run fail when torch sees no GPU. Needs the app's requirements;
writes its run folder under results/ (a temporary data root holds the corpus).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

from testbed.common import emit, run_folder

ROOT = Path(__file__).resolve().parents[1]
TIMEOUT = 600


def _gpu_peak_reset() -> float | None:
    """Reset the peak; the memory already held (the corpus's rows on the GPU, models), MB."""
    import torch

    if not torch.cuda.is_available():
        return None
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    return round(torch.cuda.memory_allocated() / 2**20, 1)


def _gpu_peak_mb() -> float | None:
    import torch

    if not torch.cuda.is_available():
        return None
    torch.cuda.synchronize()
    return round(torch.cuda.max_memory_allocated() / 2**20, 1)


class Drive:
    """One step at a time, each timed and reported; a failed step is reported and the drive goes on."""

    def __init__(self):
        self.failed: list[str] = []

    def step(self, name: str, fn):
        held = _gpu_peak_reset()
        t = time.perf_counter()
        try:
            at, said = fn()
            errors = [e.value for e in at.error] + [str(x.value) for x in at.exception]
        except Exception as exc:  # noqa: BLE001 - a drive reports every failure and goes on
            at, said, errors = None, "", [f"{type(exc).__name__}: {exc}"]
        seconds = round(time.perf_counter() - t, 3)
        if errors:
            self.failed.append(name)
        emit(step=name, seconds=seconds, said=said[:300], errors=[e[:500] for e in errors], gpu_held_mb=held,
             gpu_peak_mb=_gpu_peak_mb())
        return at


CORPUS = "drive"  # the corpus the drive imports, then every page opens


def page(name: str, corpus: str | None = CORPUS):
    """A page as a fresh browser tab would open it (``?corpus=`` naming the drive's corpus)."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / name), default_timeout=TIMEOUT)
    if corpus:
        at.query_params["corpus"] = corpus
    return at


def number(at, label: str):
    return next(n for n in at.number_input if n.label == label)


def toggles(at) -> list:
    return [b for b in at.button if b.key and b.key.startswith("tog_")]


def said(at, kinds=("success", "info", "warning")) -> str:
    return " | ".join(m.value for kind in kinds for m in getattr(at, kind))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--csv", type=Path, required=True)
    ap.add_argument("--rows", type=int, default=3000)
    ap.add_argument("--model", default="auto", help="the import form's Models field")
    ap.add_argument("--keyword", default="ockovani")
    ap.add_argument("--k", type=int, default=8, help="clusters for Topics' K-Means and DEC")
    ap.add_argument("--dac-steps", type=int, default=50, help="the Amortized page's training: one epoch of these")
    ap.add_argument("--device-expected", choices=["any", "cuda"], default="any")
    a = ap.parse_args(argv)

    import torch
    from streamlit import config

    from core.embed import pick_device

    if a.device_expected == "cuda" and not torch.cuda.is_available():
        raise SystemExit("--device-expected cuda: torch sees no GPU here")
    config.get_option("client.showErrorDetails")
    config.set_option("client.showErrorDetails", "full")  # a failing page's whole error in the log
    run_folder("gpu-app", sys.argv)
    gpu = torch.cuda.get_device_name(0) if torch.cuda.is_available() else None
    emit(device=pick_device("auto"), gpu=gpu, torch=torch.__version__, rows=a.rows, model=a.model, csv=str(a.csv))

    with tempfile.TemporaryDirectory(prefix="gpu-app-") as work:  # the drive's corpus and data, removed after it
        return drive(a, Path(work))


def drive(a: argparse.Namespace, tmp: Path) -> int:
    """Import ``a.rows`` rows of ``a.csv`` under ``tmp`` and drive every page; 1 when a step failed."""
    from core.search import BUTTONS

    src = tmp / "in" / "corpus.csv"
    src.parent.mkdir()
    pd.read_csv(a.csv, dtype=str, keep_default_na=False, nrows=a.rows).to_csv(src, index=False)
    os.environ["SEMANNO_DATA"] = str(tmp / "data")
    os.environ["SEMANNO_IMPORT_ROOTS"] = str(src.parent)
    d = Drive()

    def import_corpus():
        at = page("streamlit_app.py", corpus=None).run()
        at.radio(key="imp_src").set_value("A file on the server").run()
        at.text_input(key="imp_path").set_value(str(src)).run()
        at.text_input(key="imp_name").set_value(CORPUS).run()
        at.text_input(key="imp_models").set_value(a.model).run()
        at.button(key="imp_go").click().run()
        return at, said(at) + f" | rows shown {at.metric[0].value if at.metric else '?'}"

    d.step("import (home page)", import_corpus)

    ann = page("pages/1_Annotate.py")

    def keyword():
        ann.run()
        ann.text_input(key="kw_query").set_value(a.keyword)
        ann.button(key="FormSubmitter:kw_form-Search (KW)").click().run()
        return ann, said(ann)

    d.step(f"keyword '{a.keyword}'", keyword)

    def exclude_two():
        toggles(ann)[0].click().run()
        toggles(ann)[1].click().run()  # the rows again: the page reran
        return ann, "included / excluded " + " / ".join(m.value for m in ann.metric[:2])

    d.step("exclude two hits", exclude_two)

    for method in BUTTONS:
        def press(method=method):
            button = ann.button(key=f"btn_{method}")
            if button.disabled:
                return ann, f"{method}: button disabled"
            button.click().run()
            out = said(ann, ("success", "warning"))
            ann.button(key="undo").click().run()
            return ann, out

        d.step(f"search {method}", press)

    def save():
        ann.text_input(key="save_name").set_value("drive-topic").run()
        ann.button(key="save_btn").click().run()
        return ann, said(ann, ("success",))

    d.step("save the group", save)

    for name, path in (("timeline", "pages/2_Timeline.py"), ("LDA scatter", "pages/3_Scatter.py")):
        def open_page(path=path):
            at = page(path)
            at.session_state["session"] = ann.session_state["session"]  # the group just built, as a tab keeps it
            at.run()
            return at, said(at) + f" | {len(at.get('plotly_chart'))} chart(s)"

        d.step(f"open {name}", open_page)

    def cluster(method: str):
        at = page("pages/4_Topics.py").run()
        at.selectbox(key="tp_method").set_value(method)
        if method != "dac":  # DAC chooses its own k
            number(at, "Clusters (k)").set_value(a.k)
        at.button(key="FormSubmitter:tp_cluster-Run").click().run()
        tables = [t.value for t in at.dataframe if "ctfidf_terms" in t.value]
        lemmas = "; ".join(str(x) for x in tables[0]["ctfidf_terms"].head(3)) if tables else "no key lemmas shown"
        return at, said(at, ("success", "warning")) + " | " + lemmas[:150]

    for method in ("kmeans", "dec"):
        d.step(f"Topics {method}", lambda method=method: cluster(method))

    def dac_train():
        at = page("pages/6_DAC.py").run()
        number(at, "Epochs").set_value(1)
        number(at, "Steps per epoch").set_value(a.dac_steps)
        at.button(key="FormSubmitter:am_train-Train").click().run()
        at.radio(key="am_how").set_value("Keyword search").run()
        at.text_input(key="am_kw").set_value(a.keyword).run()
        bag = at.dataframe[-1].value if at.dataframe else None
        members = int((bag["role"] == "member").sum()) if bag is not None and "role" in bag else -1
        return at, said(at, ("success",)) + f" | anchor's bag {0 if bag is None else len(bag)} rows, {members} members"

    d.step("Amortized: train a DAC model, read an anchor's bag", dac_train)
    d.step("Topics dac (K-Means, k chosen by the DAC model)", lambda: cluster("dac"))

    def suggest_again():
        fresh = page("pages/1_Annotate.py").run()
        fresh.selectbox(key="open_name").set_value("drive-topic").run()
        fresh.button(key="open_btn").click().run()
        fresh.button(key="btn_suggest").click().run()
        return fresh, said(fresh, ("success", "warning"))

    d.step("reopen the group, Suggest with a DAC model present", suggest_again)
    emit(done=True, failed_steps=d.failed)
    return 1 if d.failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
