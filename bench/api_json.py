"""What a corpus imported from JSON costs, beside the same tweets from a CSV: ``--n`` tweets of the scale corpus
written as Twitter's API v1.1 writes them (each with its user object, entities, a place now and then, every fourth
a retweet with the retweeted tweet nested whole; past the corpus's 300,000, its tweets again with ids of their own),
and as Telegram Desktop exports them (``result.json`` of one channel, and an export of all data holding them in 8
chats: one object, written with an indent as Telegram writes it; every fifth message's text in pieces with a link,
every tenth a reply, every fiftieth a service message; and as DiscordChatExporter exports a channel, indented, each
message with its author object), imported without embedding (deterministic vectors: the
reading, checking and writing are measured), then loaded in a fresh process as a page loads it. Median of
``--repeat``; each step's peak memory is its own process's (VmHWM: getrusage's maximum would be the bench's own,
which a child inherits).

    python -m bench.api_json [--n 300000] [--repeat 3] [--formats v11 csv telegram telegram-all discord]
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


FORMATS = {"v11": "Twitter API v1.1 JSONL", "csv": "CSV", "telegram": "Telegram result.json (one channel)",
           "telegram-all": "Telegram export of all data (8 chats)", "discord": "DiscordChatExporter's channel"}


def discord(i: int, r) -> dict:
    """Tweet ``r`` as DiscordChatExporter exports a channel's message ``i`` (every tenth a reply)."""
    m = {"id": str(800_000_000_000_000_000 + i), "type": "Reply" if i % 10 == 9 else "Default",
         "timestamp": r.date + "+00:00", "timestampEdited": None, "callEndedTimestamp": None, "isPinned": False,
         "content": r.text, "author": {"id": str(hash(r.author) % 10**12), "name": r.author, "discriminator": "0000",
                                       "nickname": r.author.title(), "color": None, "isBot": False, "roles": [],
                                       "avatarUrl": "https://cdn.discordapp.com/a.png"},
         "attachments": [], "embeds": [], "stickers": [], "reactions": [], "mentions": [], "inlineEmojis": []}
    if i % 10 == 9:
        m["reference"] = {"messageId": str(800_000_000_000_000_000 + i - 1), "channelId": "5", "guildId": "4"}
    return m


def message(i: int, r) -> dict:
    """Tweet ``r`` as Telegram Desktop exports a channel's message ``i``."""
    m = {"id": i + 1, "type": "message", "date": r.date, "date_unixtime": str(1_500_000_000 + 60 * i),
         "from": r.author, "from_id": f"channel{hash(r.author) % 10**9}"}
    if i % 10 == 9:
        m["reply_to_message_id"] = i
    if i % 5 == 0:
        m["text"] = [r.text, {"type": "link", "text": "https://example.org/a"}]
        m["text_entities"] = [{"type": "plain", "text": r.text}, {"type": "link", "text": "https://example.org/a"}]
    else:
        m["text"] = r.text
        m["text_entities"] = [{"type": "plain", "text": r.text}]
    if i % 50 == 49:
        m = {"id": i + 1, "type": "service", "date": r.date, "date_unixtime": m["date_unixtime"], "actor": r.author,
             "actor_id": m["from_id"], "action": "pin_message", "message_id": i, "text": "", "text_entities": []}
    return m


def write_files(n: int, folder: Path, formats=tuple(FORMATS)) -> dict[str, Path]:
    raw = pd.read_csv(SCALE, nrows=n, dtype=str, keep_default_na=False, usecols=["id", "text", "date", "author"])
    copies = -(-n // len(raw))  # past the scale corpus's 300,000: its tweets again, each copy's ids their own
    raw = pd.concat([raw.assign(id=raw["id"] + (f"-{k}" if k else "")) for k in range(copies)]).head(n)
    files = {}
    if "telegram" in formats or "telegram-all" in formats:
        messages = [message(i, r) for i, r in enumerate(raw.itertuples())]
        if "telegram" in formats:
            files[FORMATS["telegram"]] = folder / "result.json"
            files[FORMATS["telegram"]].write_text(json.dumps(
                {"name": "Channel", "type": "public_channel", "id": 1234567890, "messages": messages},
                ensure_ascii=False, indent=1))
        if "telegram-all" in formats:
            size = -(-len(messages) // 8)
            chats = [{"name": f"Chat {k}", "type": "private_supergroup", "id": 1000 + k,
                      "messages": messages[k * size:(k + 1) * size]} for k in range(8)]
            files[FORMATS["telegram-all"]] = folder / "all" / "result.json"
            files[FORMATS["telegram-all"]].parent.mkdir()
            files[FORMATS["telegram-all"]].write_text(json.dumps(
                {"about": "Here is the data you requested.", "personal_information": {"first_name": "A"},
                 "contacts": {"about": "contacts", "list": [{"first_name": "B", "phone_number": "+420"}]},
                 "chats": {"about": "chats", "list": chats}, "left_chats": {"about": "left", "list": []}},
                ensure_ascii=False, indent=1))
        del messages
    if "discord" in formats:
        files[FORMATS["discord"]] = folder / "channel.json"
        files[FORMATS["discord"]].write_text(json.dumps(
            {"guild": {"id": "4", "name": "Guild"}, "channel": {"id": "5", "type": "GuildTextChat", "name": "general"},
             "dateRange": {"after": None, "before": None}, "exportedAt": "2021-11-01T10:00:00+00:00",
             "messages": [discord(i, r) for i, r in enumerate(raw.itertuples())], "messageCount": len(raw)},
            ensure_ascii=False, indent=2))
    if "v11" not in formats and "csv" not in formats:
        return files
    lines = []
    for i, r in enumerate(raw.itertuples()):
        tweet = {"id_str": r.id, "created_at": r.date, "full_text": r.text, "truncated": False, "lang": "en",
                 "user": user(r.author, i), "retweet_count": i % 10,
                 "entities": {"hashtags": [{"text": "x", "indices": [0, 2]}] if i % 2 else [], "urls": []},
                 "coordinates": None if i % 5 else {"type": "Point", "coordinates": [14.4, 50.1]}}
        if i % 4 == 0:
            tweet["retweeted_status"] = {"id_str": f"9{r.id}", "full_text": r.text, "user": user(f"o{r.author}", i)}
        lines.append(json.dumps(tweet, ensure_ascii=False))
    if "v11" in formats:
        files[FORMATS["v11"]] = folder / "v11.jsonl"
        files[FORMATS["v11"]].write_text("\n".join(lines))
    if "csv" in formats:
        files[FORMATS["csv"]] = folder / "t.csv"
        raw.to_csv(files[FORMATS["csv"]], index=False)
    return files


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--n", type=int, default=300_000)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--formats", nargs="+", choices=list(FORMATS), default=list(FORMATS))
    a = p.parse_args(argv)
    run_folder("api-json", sys.argv)
    root = Path(__file__).resolve().parents[1]
    with tempfile.TemporaryDirectory() as tmp:
        for k, (fmt, path) in enumerate(write_files(a.n, Path(tmp), a.formats).items()):
            runs: dict[str, list[dict]] = {"import": [], "load": []}
            for _ in range(a.repeat):
                for what in runs:
                    out = subprocess.run([sys.executable, "-c", STEP, str(path), str(Path(tmp) / f"c{k}"), what],
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
