"""Posts as the platforms' APIs and exports write them. Twitter: the pages of API v2 (what ``twarc2 search`` saves:
one response a line, the tweets in ``data``, their authors and the tweets they retweet in ``includes``) made one tweet
a row as ``twarc2 flatten`` makes them, the texts the APIs cut short read whole from the objects they nest beside
them, an archive's ``tweets.js``. Mastodon: a status's ``content`` is HTML, read as the text a reader sees; a boost
as a retweet. Bluesky: a feed's items wrap each post in ``post``; a repost as a retweet. Telegram: Telegram
Desktop's export of a channel or chat (``result.json``) holds its messages in ``messages``, each text a string or a
list of pieces (links, bold, mentions); its export of all data lists the chats, each with its messages. Discord:
DiscordChatExporter's export of a channel, its messages in ``messages``."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import numpy as np
import pandas as pd

WRAPPERS = ("post", "tweet")  # a feed item's post (Bluesky), an archive's tweet (Twitter's tweets.js)
ARCHIVE = re.compile(r"^\s*window\.YTD\.[\w.]+\s*=\s*")  # tweets.js: "window.YTD.tweets.part0 = [ ... ]"


def wrapper(record: object) -> str:
    """The field of :data:`WRAPPERS` in which ``record`` (a JSON file's first object) wraps a post; '' for none."""
    return next((k for k in WRAPPERS if isinstance(record, dict) and isinstance(record.get(k), dict)), "")


def unwrap(records: list, key: str | None = None) -> list:
    """The objects themselves where the first of ``records`` wraps one in a field (:data:`WRAPPERS`), or in ``key``:
    each that wraps one in that field (a record that does not is taken as it is); a Bluesky feed's repost as
    :func:`repost` makes it."""
    key = key if key is not None else wrapper(records[0]) if records else ""
    if not key:
        return records
    return [(repost(r) if key == "post" and _reposted(r) else r[key]) if isinstance(r, dict) and
            isinstance(r.get(key), dict) else r for r in records]


REPOST = "app.bsky.feed.defs#reasonRepost"  # a Bluesky feed item's reason where the feed's account reposted the post


def _reposted(item: dict) -> bool:
    reason = item.get("reason")
    return isinstance(reason, dict) and reason.get("$type") == REPOST and isinstance(reason.get("by"), dict)


def repost(item: dict) -> dict:
    """A Bluesky feed item reposting a post, as Twitter writes a retweet: the post's record with the text "RT
    @handle: text" and the repost's date (``reason.indexedAt``), by the account that reposted it (``reason.by``), its
    id the post's uri with "#repost/" and that account's did (a post reposted by two accounts is two texts); no
    reply of its own. Taken as the post itself, it was the post again, its author's and on its day, and who spread
    it when was lost to the Timeline."""
    post, reason = item["post"], item["reason"]
    record = post.get("record") if isinstance(post.get("record"), dict) else {}
    name = dig(post, ("author", "handle"))
    by = reason["by"]
    made = {k: v for k, v in record.items() if k != "reply"}
    made.update(text=f"RT @{name}: {record.get('text', '')}" if name else str(record.get("text", "")),
                createdAt=reason.get("indexedAt", record.get("createdAt")))
    return {**post, "uri": f"{post.get('uri')}#repost/{by.get('did') or by.get('handle')}", "record": made,
            "author": by}


TELEGRAM_SECTIONS = ("chats", "left_chats")  # where "Export Telegram data" (all chats at once) lists its chats
CHAT = "chat"  # the column naming each message's chat, in an export of several


def is_telegram(obj: object) -> bool:
    """Whether ``obj`` (a JSON file's one object) is Telegram Desktop's export of a chat (its ``messages`` a list)
    or of all the account's data (its chats listed in ``chats`` and ``left_chats``)."""
    return isinstance(obj, dict) and not is_discord(obj) and (isinstance(obj.get("messages"), list) or any(
        isinstance(obj.get(s), dict) and isinstance(obj[s].get("list"), list) for s in TELEGRAM_SECTIONS))


DISCORD_KEYS = ("guild", "channel")  # what DiscordChatExporter's export of a channel names before its messages
DISCORD_KEPT = ("Default", "Reply")  # its messages' types that are someone's words (not a join, a pin, a call)


def is_discord(obj: object) -> bool:
    """Whether ``obj`` (a JSON file's one object) is DiscordChatExporter's export of a channel: its ``guild`` and
    ``channel`` described, its ``messages`` a list (each with ``content``, ``timestamp``, ``author`` an object, a
    reply's ``reference.messageId``)."""
    return isinstance(obj, dict) and isinstance(obj.get("messages"), list) and any(k in obj for k in DISCORD_KEYS)


def discord_messages(messages: list) -> list[dict]:
    """The messages of a Discord channel's export that are someone's words (:data:`DISCORD_KEPT`: not a member's
    join, a pin or a call, whose ``content`` the exporter writes as "Joined the server.")."""
    return [m for m in messages if isinstance(m, dict) and m.get("type", "Default") in DISCORD_KEPT]


def telegram_messages(export: dict) -> list[dict]:
    """The messages of a Telegram export (service messages, a join or a pin, left out), each text one string: a
    message's pieces (a link, a bold word, a mention as objects with their ``text``) joined as they read. An export of
    all data gives every chat's messages, each with its chat's name (:data:`CHAT`) and, since each chat numbers its
    own, an id "chat id/message id" (and so the message it replies to)."""
    if isinstance(export.get("messages"), list):
        return chat_messages(export["messages"])
    out = []
    for section in TELEGRAM_SECTIONS:
        chats = export.get(section)
        for chat in chats.get("list") if isinstance(chats, dict) and isinstance(chats.get("list"), list) else []:
            if isinstance(chat, dict) and isinstance(chat.get("messages"), list):
                out.extend(chat_messages(chat["messages"], chat))
    return out


def chat_messages(messages: list, chat: dict | None = None) -> list[dict]:
    """The messages of one chat (a copy of each), as :func:`telegram_messages` says; ``chat``: the chat of an export
    of all data (its ``id`` and ``name``), named in each."""
    out = []
    for m in messages:
        if not isinstance(m, dict) or m.get("type", "message") != "message":
            continue
        text = m.get("text", "")
        if isinstance(text, list):
            text = "".join(p if isinstance(p, str) else str(p.get("text", "")) if isinstance(p, dict) else ""
                           for p in text)
        m = {**m, "text": text}
        if chat is not None:
            key = chat.get("id", chat.get("name", ""))
            m.update(id=f"{key}/{m.get('id')}", **{CHAT: str(chat.get("name") or "")})
            if m.get("reply_to_message_id") is not None:
                m["reply_to_message_id"] = f"{key}/{m['reply_to_message_id']}"
        out.append(m)
    return out


def chats_note(chats: int) -> str:
    """What the import's notes say of an export of all data of ``chats`` chats."""
    return (f"a Telegram export of all data: the messages of its {chats:,} chat{'' if chats == 1 else 's'}, each "
            f"chat's name in column {CHAT!r} and each id 'chat id/message id'")


YOUTUBE_REPLY = r"^([\w-]+)\.[\w-]+$"  # a reply's comment id: its comment's id, a dot, its own


def youtube_parents(ids: pd.Series) -> np.ndarray | None:
    """Each YouTube comment's comment it replies to ('' for a comment on the video), read from the ids as YouTube
    gives them (youtube-comment-downloader's ``cid``: a reply's is "<its comment's id>.<its own>"); None where no id
    is a reply's."""
    parents = ids.astype("string").str.extract(YOUTUBE_REPLY, expand=False)
    return None if not parents.notna().any() else parents.fillna("").to_numpy(dtype=object)


class _Text(HTMLParser):
    """The text a reader sees of a Mastodon status's HTML: paragraphs and line breaks as new lines, a link as its
    shown text with the parts Mastodon hides (``class="invisible"``) put back, so a link reads whole."""

    BREAKS = {"p", "br", "li", "blockquote"}

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag in self.BREAKS and self.parts and not self.parts[-1].endswith("\n"):
            self.parts.append("\n\n" if tag == "p" else "\n")

    def handle_data(self, data):
        self.parts.append(data)

    def text(self) -> str:
        return re.sub(r"\n{3,}", "\n\n", "".join(self.parts)).strip()


def html_text(value: str) -> str:
    """What a reader sees of ``value``, a post written in HTML (Mastodon's ``content``)."""
    parser = _Text()
    parser.feed(value)
    parser.close()
    return parser.text()


def looks_like_html(texts: pd.Series, sample: int = 100) -> bool:
    """Whether ``texts`` are written in HTML: most of the first ``sample`` that are there open with a tag."""
    first = texts.head(20 * sample).dropna().astype(str).str.strip()  # the first rows only, not the column
    first = first[first != ""].head(sample)
    return len(first) > 0 and first.str.match(r"<(p|span|a|br|div)[\s>/]", case=False).mean() > 0.5


def is_pages(records: list) -> bool:
    """Whether ``records`` (a JSON file's objects) are API v2 responses: each an object whose ``data`` is a list."""
    return bool(records) and all(isinstance(r, dict) and isinstance(r.get("data"), list) for r in records)


def flatten_pages(pages: list[dict]) -> list[dict]:
    """The tweets of API v2 responses, one object each, as ``twarc2 flatten`` writes them: its author's user object
    as ``author`` (``author.username`` is the import's author), and each tweet it references (a retweet's, a quote's,
    a reply's) whole in ``referenced_tweets`` with its own author, where the responses include them."""
    users: dict[str, dict] = {}
    tweets: dict[str, dict] = {}
    for page in pages:
        included = page.get("includes") or {}
        users.update((u["id"], u) for u in included.get("users", []) if isinstance(u, dict) and "id" in u)
        tweets.update((t["id"], t) for t in included.get("tweets", []) if isinstance(t, dict) and "id" in t)

    def with_author(tweet: dict) -> dict:
        author = users.get(tweet.get("author_id"))
        return {**tweet, "author": author} if author is not None and "author" not in tweet else tweet

    out = []
    for page in pages:
        for tweet in page["data"]:
            if not isinstance(tweet, dict):
                continue
            tweet = with_author(tweet)
            refs = tweet.get("referenced_tweets")
            if isinstance(refs, list):
                tweet["referenced_tweets"] = [{**with_author(tweets[r["id"]]), **r}
                                              if isinstance(r, dict) and r.get("id") in tweets else r for r in refs]
            out.append(tweet)
    return out


# The fields of nested objects whole_texts and quoted_texts read (a JSON file read as a stream keeps these only:
# core.json_records)
WHOLE_TEXT_FIELDS = ("extended_tweet.full_text", "note_tweet.text", "retweeted_status.user.screen_name",
                     "retweeted_status.extended_tweet.full_text", "retweeted_status.full_text", "retweeted_status.text",
                     "quoted_status.user.screen_name", "quoted_status.extended_tweet.full_text",
                     "quoted_status.full_text", "quoted_status.text", "embed.record.author.handle",
                     "embed.record.value.text", "embed.record.record.author.handle", "embed.record.record.value.text",
                     "referenced_tweets.type", "referenced_tweets.id", "referenced_tweets.author.username",
                     "referenced_tweets.note_tweet.text", "referenced_tweets.text", "quote.quoted_status.account.acct",
                     "quote.quoted_status.content", "reblog.account.acct", "reblog.content")


def dig(value: object, keys) -> object:
    """The value at ``keys`` (field names, outermost first) of the objects ``value`` nests; None where one is not."""
    for k in keys:
        value = value.get(k) if isinstance(value, dict) else None
    return value


def _field(frame: pd.DataFrame, col: str, *keys: str, pick=None) -> pd.Series | None:
    """The string at ``keys`` of the objects in ``frame[col]`` (a list's: the one ``pick`` picks), None where the
    column holds no objects."""
    if col not in frame.columns or not frame[col].map(lambda d: isinstance(d, (dict, list))).any():
        return None

    def get(d):
        d = dig(pick(d) if pick and isinstance(d, list) else d, keys)
        return d if isinstance(d, str) else None
    return frame[col].map(get).astype("string").set_axis(range(len(frame)))


def _first(*columns: pd.Series | None) -> pd.Series | None:
    """Each row's first value that is there of ``columns`` (None: none of them is)."""
    found = [c for c in columns if c is not None]
    out = found[0] if found else None
    for other in found[1:]:
        out = out.fillna(other)
    return out


def _referenced(kind: str):
    def pick(refs: list):
        return next((r for r in refs if isinstance(r, dict) and r.get("type") == kind), None)
    return pick


def quoted_texts(frame: pd.DataFrame) -> pd.Series | None:
    """The post each of ``frame``'s quotes, as "@name: text" ('' for a text that quotes none; None where the file
    holds no quoted posts): API v1.1's ``quoted_status`` (its long text whole from ``extended_tweet``), API v2's
    ``referenced_tweets`` of type "quoted" (flattened: the tweet and its author there), a Bluesky post's ``embed``
    (a quote's record view, with media or without), a Mastodon status's ``quote`` (its ``quoted_status``, read from
    HTML as the text a reader sees; a quote withheld or removed, without its status, quotes nothing). A quote's own
    words ("Přesně tak.") are read with what it quotes."""
    quoted = _referenced("quoted")
    toot = _field(frame, "quote", "quoted_status", "content")
    found = []
    for name, body in (
            (_field(frame, "quoted_status", "user", "screen_name"),
             _first(_field(frame, "quoted_status", "extended_tweet", "full_text"),
                    _field(frame, "quoted_status", "full_text"), _field(frame, "quoted_status", "text"))),
            (_field(frame, "referenced_tweets", "author", "username", pick=quoted),
             _first(_field(frame, "referenced_tweets", "note_tweet", "text", pick=quoted),
                    _field(frame, "referenced_tweets", "text", pick=quoted))),
            (_field(frame, "embed", "record", "author", "handle"), _field(frame, "embed", "record", "value", "text")),
            (_field(frame, "embed", "record", "record", "author", "handle"),
             _field(frame, "embed", "record", "record", "value", "text")),
            (_field(frame, "quote", "quoted_status", "account", "acct"),
             None if toot is None else toot.map(html_text, na_action="ignore").astype("string"))):
        if body is not None and body.notna().any():
            found.append((("@" + name + ": " + body) if name is not None else body).fillna(body))
    whole = _first(*found)
    return None if whole is None else whole.fillna("")


def boosts(frame: pd.DataFrame) -> pd.Series | None:
    """Each Mastodon boost of ``frame`` as Twitter writes a retweet, "RT @acct: text" (the boosted status's
    ``reblog.content`` read from HTML as a reader sees it); NA for a status that boosts none, None where none does.
    A boost's own ``content`` is empty: read so, it was dropped with the empty texts, and who spread a post when was
    lost to the Timeline."""
    name, body = _field(frame, "reblog", "account", "acct"), _field(frame, "reblog", "content")
    if name is None or body is None or not body.notna().any():
        return None
    return ("RT @" + name + ": " + body.map(html_text, na_action="ignore").astype("string")).where(body.notna())


def whole_texts(frame: pd.DataFrame, text: pd.Series) -> tuple[pd.Series, int]:
    """``text`` (the column ``text`` or ``full_text`` of ``frame``) with each text the API cut short read whole, and
    how many were: a tweet over 140 characters from API v1.1's ``extended_tweet.full_text`` (the streaming API cuts
    ``text`` with "…") or API v2's ``note_tweet.text``; a retweet as "RT @name: " and the whole of the tweet it
    retweets, from v1.1's ``retweeted_status`` or v2's ``referenced_tweets`` (flattened; the APIs cut a retweet at
    140 characters, even in ``full_text``). A text is replaced only by a longer one."""
    def longer(whole: pd.Series, other: pd.Series | None) -> pd.Series:
        return whole if other is None else whole.where(other.isna() | (other.str.len() <= whole.str.len()), other)

    def field(col: str, *keys: str, pick=None) -> pd.Series | None:
        found = _field(frame, col, *keys, pick=pick)
        return None if found is None else found.set_axis(text.index)

    first, retweeted = _first, _referenced("retweeted")
    whole = text.astype(str)
    whole = longer(whole, field("extended_tweet", "full_text"))
    whole = longer(whole, field("note_tweet", "text"))
    is_retweet = whole.str.startswith("RT @")
    for name, body in (
            (field("retweeted_status", "user", "screen_name"),
             first(field("retweeted_status", "extended_tweet", "full_text"), field("retweeted_status", "full_text"),
                   field("retweeted_status", "text"))),
            (field("referenced_tweets", "author", "username", pick=retweeted),
             first(field("referenced_tweets", "note_tweet", "text", pick=retweeted),
                   field("referenced_tweets", "text", pick=retweeted)))):
        if name is not None and body is not None:
            whole = longer(whole, ("RT @" + name + ": " + body).where(is_retweet))
    return whole, int((whole != text.astype(str)).sum())
