"""When has an annotator found most of a topic? A stopping signal, scored on the simulated annotator's traces.

    python -m bench.annotator --data ../shared/data/NAME.csv --methods suggest --budget 2.0 --trace   (each corpus)
    python -m bench.stopping results/annotator-*/traces.jsonl [--windows 20 30 50] [--kept 0 1 2 3 5]
    python -m bench.stopping IDEAS_TRACES --plain PLAIN_TRACES   (runs of bench.annotator --stop N against plain runs)

The Annotate page shows, once searches have brought in enough texts, how many of the texts the last searches
brought in (whole searches, newest first, until they hold W texts or more; the newest search left out, since the
annotator may not have reviewed it yet) are still included (core.annotate.recent_yield). The rule scored here:
the annotator stops once at most ``kept`` in W of those texts are (with searches of 10 texts, as here: at most
``kept`` of the last W). In a trace (each text the simulated annotator reviewed, in order, 1 = on topic, and
where each step ended) the page shows the count after the annotator asked for the next step, so the annotator
reviews that step and then stops: recall is counted up to the end of the step after the one where the rule
first holds.

For every (W, kept) and corpus: how often the rule fired within the run's budget, recall at the stop (median
and 10th percentile over topics: the 10th percentile is the early stops a user would regret), texts reviewed
at the stop in multiples of the topic's size, and recall when the budget ran out, beside it.
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path

import numpy as np

from testbed.common import emit, run_folder


def stop_point(texts: np.ndarray, steps: list[int], window: int, kept: int) -> int | None:
    """Texts reviewed when an annotator following the rule stops, or None when it never fires. After each step,
    the steps up to it are taken back, whole, until they hold ``window`` texts or more (as the page does:
    core.annotate.recent_yield); the rule holds when at most ``kept`` in ``window`` of those texts are on topic."""
    starts = [0] + list(steps[:-1])
    for i, end in enumerate(steps):
        j = i
        while j > 0 and end - starts[j] < window:
            j -= 1
        seen = end - starts[j]
        if seen >= window and texts[starts[j]:end].sum() * window <= kept * seen:
            return steps[i + 1] if i + 1 < len(steps) else end  # the next step is shown, reviewed, then the stop
    return None


def score(traces: list[dict], window: int, kept: int) -> dict:
    recall, cost, fired, at_budget = [], [], 0, []
    for t in traces:
        texts = np.frombuffer(t["texts"].encode(), dtype=np.uint8) - ord("0")
        size = t["size"]
        at_budget.append(texts.sum() / size)
        stop = stop_point(texts, t["steps"], window, kept)
        if stop is None:
            stop = len(texts)
        else:
            fired += 1
        recall.append(texts[:stop].sum() / size)
        cost.append(stop / size)
    recall, cost = np.array(recall), np.array(cost)
    return {"topics": len(traces), "fired": round(fired / len(traces), 3),
            "recall_median": round(float(np.median(recall)), 3),
            "recall_p10": round(float(np.percentile(recall, 10)), 3),
            "recall_mean": round(float(recall.mean()), 3), "reviewed_x_median": round(float(np.median(cost)), 2),
            "recall_at_budget_mean": round(float(np.mean(at_budget)), 3)}


def ideas_against_plain(ideas: list[dict], plain: list[dict]) -> dict:
    """Runs that tried keyword ideas at the signal (bench.annotator --stop N) against the plain runs of the same
    topics (same protocol, deterministic up to the first signal): recall at the first signal, at the last stop,
    and the plain run's recall after as many texts reviewed as the last stop (Suggest going on instead)."""
    by = {(t["dataset"], t["cls"]): t for t in plain}
    first, last, going_on, extra, beyond = [], [], [], [], 0
    for t in ideas:
        p = by.get((t["dataset"], t["cls"]))
        if p is None or not t.get("stops"):
            continue
        size, n = t["size"], len(t["texts"])
        first.append(t["stops"][0][1] / size)
        last.append(t["texts"].count("1") / size)
        going_on.append(p["texts"][:n].count("1") / size)
        beyond += n > len(p["texts"])  # the plain run stopped at its budget before: its recall there, a floor
        extra.append((n - t["stops"][0][0]) / size)
    return {"topics": len(first), "recall_first_signal": round(float(np.mean(first)), 4),
            "recall_last_stop": round(float(np.mean(last)), 4),
            "recall_suggest_going_on": round(float(np.mean(going_on)), 4),
            "extra_reviewed_x_mean": round(float(np.mean(extra)), 3), "plain_run_shorter": beyond}


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("traces", type=Path, nargs="+", help="traces.jsonl files of bench.annotator --trace")
    p.add_argument("--windows", type=int, nargs="+", default=[20, 30, 50])
    p.add_argument("--kept", type=int, nargs="+", default=[0, 1, 2, 3, 5])
    p.add_argument("--plain", type=Path, nargs="*", default=[],
                   help="with traces of --stop N runs: the plain runs' traces of the same topics, to set the keyword "
                        "ideas against Suggest going on for as many texts")
    a = p.parse_args(argv)
    run_folder("stopping", ["bench/stopping.py", *(argv if argv is not None else __import__("sys").argv[1:])])
    by_corpus: dict[str, list[dict]] = defaultdict(list)
    for f in a.traces:
        for line in f.read_text().splitlines():
            t = json.loads(line)
            by_corpus[f"{t['dataset']}{'-' + str(t['size']) if t.get('shrunk') else ''}"].append(t)
    if a.plain:
        plain = [json.loads(line) for f in a.plain for line in f.read_text().splitlines()]
        ideas = [t for tr in by_corpus.values() for t in tr]
        for name, tr in sorted(by_corpus.items()):
            emit(ideas=name, **ideas_against_plain(tr, plain))
        emit(ideas="all", **ideas_against_plain(ideas, plain))
        return
    for window in a.windows:
        for kept in a.kept:
            if kept >= window:
                continue
            rows = {name: score(tr, window, kept) for name, tr in sorted(by_corpus.items())}
            every = [t for tr in by_corpus.values() for t in tr]
            emit(window=window, kept=kept, all=score(every, window, kept), **rows)


if __name__ == "__main__":
    main()
