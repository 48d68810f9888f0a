"""What a corpus imported from Twitter API v1.1 JSON costs, beside the same tweets from a CSV: ``--n`` tweets of the
scale corpus written as the API writes them (each with its user object, entities, a place now and then, every fourth
a retweet with the retweeted tweet nested whole; past the corpus's 300,000, its tweets again with ids of their own),
imported without embedding (deterministic vectors: the reading,
checking and writing are measured), then loaded in a fresh process as a page loads it. Median of ``--repeat``; each
step's peak memory is its own process's (VmHWM: getrusage's maximum would be the bench's own, which a child
inherits).

    python -m bench.api_json [--n 300000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import pandas as pd

from testbed.common import SCALE, emit, run_folder

STEP = """
import json, re, sys, time
from pathlib import Path
from core.corpus import ImportSpec, import_corpus, load_corpus
from testbed.common import FakeModel
src, root, what = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
t = time.perf_counter()
if what == "import":
    import_corpus(ImportSpec(input=src, name="c", overwrite=True), root=root, model_loader=lambda m, d: FakeModel(8))
else:
    c = load_corpus("c", root)
peak = int(re.search(r"VmHWM:\\s+(\\d+)", Path("/proc/self/status").read_text()).group(1))  # this process's own peak
print(json.dumps({"s": time.perf_counter() - t, "rss_mb": peak / 1e3,
                  "columns": list(c.frame.columns) if what == "load" else None}))
"""


def user(name: str, i: int) -> dict:
    return {"id": i, "id_str": str(i), "screen_name": name, "name": name.title(), "location": None if i % 3 else "",
            "description": f"Bio of {name}", "followers_count": 7 * i, "verified": False,
            "entities": {"url": {"urls": []}, "description": {"urls": []}}}


def write_files(n: int, folder: Path) -> dict[str, Path]:
    raw = pd.read_csv(SCALE, nrows=n, dtype=str, keep_default_na=False, usecols=["id", "text", "date", "author"])
    copies = -(-n // len(raw))  # past the scale corpus's 300,000: its tweets again, each copy's ids their own
    raw = pd.concat([raw.assign(id=raw["id"] + (f"-{k}" if k else "")) for k in range(copies)]).head(n)
    lines = []
    for i, r in enumerate(raw.itertuples()):
        tweet = {"id_str": r.id, "created_at": r.date, "full_text": r.text, "truncated": False, "lang": "en",
                 "user": user(r.author, i), "retweet_count": i % 10,
                 "entities": {"hashtags": [{"text": "x", "indices": [0, 2]}] if i % 2 else [], "urls": []},
                 "coordinates": None if i % 5 else {"type": "Point", "coordinates": [14.4, 50.1]}}
        if i % 4 == 0:
            tweet["retweeted_status"] = {"id_str": f"9{r.id}", "full_text": r.text, "user": user(f"o{r.author}", i)}
        lines.append(json.dumps(tweet, ensure_ascii=False))
    files = {"Twitter API v1.1 JSONL": folder / "v11.jsonl", "CSV": folder / "t.csv"}
    files["Twitter API v1.1 JSONL"].write_text("\n".join(lines))
    raw.to_csv(files["CSV"], index=False)
    return files


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--n", type=int, default=300_000)
    p.add_argument("--repeat", type=int, default=3)
    a = p.parse_args(argv)
    run_folder("api-json", sys.argv)
    root = Path(__file__).resolve().parents[1]
    with tempfile.TemporaryDirectory() as tmp:
        for fmt, path in write_files(a.n, Path(tmp)).items():
            runs: dict[str, list[dict]] = {"import": [], "load": []}
            for _ in range(a.repeat):
                for what in runs:
                    out = subprocess.run([sys.executable, "-c", STEP, str(path), str(Path(tmp) / fmt[:3]), what],
                                         cwd=root, capture_output=True, text=True, check=True)
                    runs[what].append(json.loads(out.stdout.strip().splitlines()[-1]))
            emit(rows=a.n, format=fmt, mb=round(path.stat().st_size / 1e6, 1),
                 import_s=round(statistics.median(r["s"] for r in runs["import"]), 2),
                 import_peak_mb=round(statistics.median(r["rss_mb"] for r in runs["import"])),
                 load_s=round(statistics.median(r["s"] for r in runs["load"]), 3),
                 load_peak_mb=round(statistics.median(r["rss_mb"] for r in runs["load"])),
                 columns=runs["load"][0]["columns"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
