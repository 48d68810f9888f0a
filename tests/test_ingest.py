"""Validation of input files: every failure names the file, the column and the rows."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from core.ingest import QUOTED, Columns, InputError, Options, read_table, validate


def write(tmp_path, name, text, mode="w"):
    p = tmp_path / name
    if mode == "wb":
        p.write_bytes(text)
    else:
        p.write_text(text, encoding="utf-8")
    return p


def load(path, columns=Columns(), options=Options()):  # as the import reads a file: the columns named read
    return validate(read_table(path, fields=[c for c in (columns.id, columns.date, columns.author) if c]), str(path),
                    columns, options)


def test_missing_text_column_lists_existing_columns(tmp_path):
    p = write(tmp_path, "a.csv", "id,words\n1,hello\n")
    with pytest.raises(InputError) as e:
        load(p)
    assert "a.csv" in str(e.value) and "'text'" in str(e.value) and "'words'" in str(e.value)


def test_columns_other_tools_name_are_read_by_their_names_and_the_import_says_which(tmp_path):
    """A Twitter export's or a spreadsheet's headings: each role found by its usual names, said in the notes;
    a column with such a name that cannot be the role's (repeated ids, values that are no dates, nested users)
    is left a column of its own, and the notes say why."""
    p = write(tmp_path, "export.csv", "Tweet ID,Full Text,Created At,User.Screen_Name\n"
              "1344902244014170115,Povodně na Moravě,Wed Oct 10 20:19:24 +0000 2018,alice\n"
              "1344902244014170116,Rozpočet schválen,Thu Oct 11 08:00:00 +0000 2018,bob\n")
    frame, report = load(p)
    assert frame["id"].tolist() == ["1344902244014170115", "1344902244014170116"]
    assert frame["text"].tolist() == ["Povodně na Moravě", "Rozpočet schválen"]
    assert frame["date"].tolist() == [pd.Timestamp("2018-10-10 20:19:24"), pd.Timestamp("2018-10-11 08:00:00")]
    assert frame["author"].tolist() == ["alice", "bob"]
    assert "column 'Created At' read as the dates (the file has no column 'date')" in report.notes
    assert len(report.notes) == 4 and report.id_source == "column"
    assert report.record()["columns"] == {"text": "Full Text", "id": "Tweet ID", "date": "Created At",
                                          "author": "User.Screen_Name"}  # as the manifest keeps them

    p = write(tmp_path, "b.csv", "tweet_id,Text,created_at,published\n7,a,soon,2021-03-01\n7,b,later,2021-03-02\n")
    frame, report = load(p)
    assert frame["id"].tolist() == ["0", "1"] and report.id_source == "row number"
    assert "column 'tweet_id' not read as the ids: it repeats some" in report.notes
    assert "column 'created_at' not read as the dates: not all of its first values read as dates" in report.notes
    assert frame["date"].tolist() == [pd.Timestamp("2021-03-01"), pd.Timestamp("2021-03-02")]  # the next name
    assert frame["tweet_id"].tolist() == ["7", "7"] and frame["created_at"].tolist() == ["soon", "later"]

    rows = [{"full_text": "hello", "created_at": "2021-03-01T10:00:00Z", "user": ["alice"]}]
    p = write(tmp_path, "c.jsonl", "\n".join(json.dumps(r) for r in rows))
    frame, report = load(p)
    assert frame["date"].tolist() == [pd.Timestamp("2021-03-01 10:00")] and "author" not in frame.columns
    assert "column 'user' not read as the authors: it holds no plain values" in report.notes

    # a column the user named is never taken for another role; a date column taken by its name that holds a bad
    # date further down names the column and how to do without it
    p = write(tmp_path, "d.csv", "id,content,body\n1,x,first\n2,y,second\n")
    frame, _ = load(p, Columns(author="content"))
    assert frame["author"].tolist() == ["x", "y"] and frame["text"].tolist() == ["first", "second"]
    with pytest.raises(InputError, match="created_at.*was taken as the dates by its name"):
        load(write(tmp_path, "e.csv", "id,text,created_at\n" + "".join(f"{i},t,2021-03-01\n" for i in range(1000))
                   + "1000,t,never\n"))


def test_a_files_first_rows_read_for_the_form_are_the_imports_first_rows(tmp_path, monkeypatch):
    """read_head, which the home page reads to offer a file's columns, gives the rows the import reads, in every
    type, from a stream, reading only the start of a large file; a file the import would refuse says so."""
    import gzip
    import io

    import core.ingest as ingest
    from core.ingest import guess_columns, read_head

    monkeypatch.setattr(ingest, "HEAD_BYTES", 4096)  # the file below is many times this
    rows = "".join(f'{i},"text {i}, with a comma\nand a line",2021-03-{i % 28 + 1:02d}\n' for i in range(2000))
    csv = write(tmp_path, "big.csv", "tweet_id,full_text,created_at\n" + rows)
    whole = read_table(csv)
    write(tmp_path, "big.csv.gz", gzip.compress(csv.read_bytes()), mode="wb")
    whole.to_parquet(tmp_path / "big.parquet")
    whole.to_json(tmp_path / "big.jsonl", orient="records", lines=True)
    for name in ("big.csv", "big.csv.gz", "big.parquet", "big.jsonl"):
        with open(tmp_path / name, "rb") as fh:
            head = read_head(fh, name, rows=20)
        pd.testing.assert_frame_equal(head, whole.head(20), check_dtype=name != "big.jsonl")
    with open(csv, "rb") as fh:
        head = read_head(fh, "big.csv")
    assert 20 < len(head) < 200 and head.equals(whole.head(len(head)))  # what 4 KiB holds, cut at a row's end
    assert guess_columns(head) == {"text": "full_text", "id": "tweet_id", "date": "created_at", "author": None}
    assert guess_columns(pd.DataFrame({"n": ["1"], "words": ["x"]}))["text"] is None
    with pytest.raises(InputError, match="Windows-1250"):
        read_head(io.BytesIO("id;text\n1;Příliš žluťoučký kůň\n".encode("cp1250")), "export.csv")
    with pytest.raises(InputError, match="unknown file type"):
        read_head(io.BytesIO(b"x"), "notes.docx")


def test_a_workbooks_sheet_of_texts_is_read_past_a_summary_and_any_sheet_by_its_name(tmp_path):
    """A workbook whose first sheet sums up the data and whose second holds the tweets imports the tweets, and says
    so; a sheet named is read (one without the texts' column is named in the message), a sheet the workbook lacks is
    refused with its sheets listed, and a sheet named for a CSV is refused."""
    import xlsxwriter

    from core.ingest import read_head

    path = tmp_path / "export.xlsx"
    book = xlsxwriter.Workbook(path)
    summary = book.add_worksheet("Souhrn")
    summary.write_row(0, 0, ["autor", "tweetů"])
    summary.write_row(1, 0, ["alice", 2])
    data = book.add_worksheet("Data")
    data.write_row(0, 0, ["ID", "Obsah", "Datum", "Autor"])
    for i, t in enumerate(["Povodně na Moravě", "Rozpočet na rok 2021"]):
        data.write_row(1 + i, 0, [str(100 + i), t, f"2021-03-0{i + 1} 10:15", "alice"])
    mentions = book.add_worksheet("Mentions")
    mentions.write_row(0, 0, ["id", "text"])
    mentions.write_row(1, 0, ["7", "@alice díky"])
    book.close()

    frame, report = load(path)
    assert frame["text"].tolist() == ["Povodně na Moravě", "Rozpočet na rok 2021"]
    assert frame["id"].tolist() == ["100", "101"] and frame["author"].tolist() == ["alice", "alice"]
    assert report.notes[0] == ("read the sheet 'Data' (the first with a column of texts) of the workbook's 3 (not "
                               "'Souhrn', 'Mentions'; another is read with --sheet, or picked on the home page)")
    with open(path, "rb") as fh:  # the form's first rows are the same sheet's
        head = read_head(fh, path.name)
    assert head.attrs["sheet"] == "Data" and head.attrs["sheets"] == ["Souhrn", "Data", "Mentions"]
    assert head.equals(read_table(path))

    frame, report = validate(read_table(path, sheet="Mentions"), str(path))
    assert frame["text"].tolist() == ["@alice díky"] and "'Mentions' (as asked)" in report.notes[0]
    with pytest.raises(InputError, match=r"column 'text' \(text\) not found; the columns are: 'autor', 'tweetů' "
                                         r"\(read the sheet 'Souhrn' \(as asked\)"):
        validate(read_table(path, sheet="Souhrn"), str(path))
    with pytest.raises(InputError, match=r"export.xlsx: the workbook has no sheet 'data'; its sheets are: 'Souhrn', "
                                         r"'Data', 'Mentions'"):
        read_table(path, sheet="data")
    csv = write(tmp_path, "a.csv", "id,text\n1,x\n")
    with pytest.raises(InputError, match=r"a.csv: a sheet \('Data'\) was named, but the file is not a workbook"):
        read_table(csv, sheet="Data")
    named = tmp_path / "named.xlsx"  # a texts' column named for the import picks the sheet that has it
    book = xlsxwriter.Workbook(named)
    first = book.add_worksheet("a")
    first.write_row(0, 0, ["id", "text"])
    first.write_row(1, 0, ["1", "Hello"])
    other = book.add_worksheet("b")
    other.write_row(0, 0, ["id", "zprava"])
    other.write_row(1, 0, ["1", "Dobrý den"])
    book.close()
    assert read_table(named).attrs["sheet"] == "a" and read_table(named, text="zprava").attrs["sheet"] == "b"


def test_the_import_command_reads_the_sheet_named(tmp_path, monkeypatch, model):
    """python -m precompute.embed ... --sheet NAME imports that sheet of a workbook; without it, the sheet of texts."""
    import xlsxwriter

    from core.corpus import load_corpus
    from precompute import embed

    monkeypatch.setenv("SEMANNO_DATA", str(tmp_path / "d"))
    monkeypatch.setattr("core.corpus.load_model", lambda name, device="auto": model)
    path = tmp_path / "book.xlsx"
    book = xlsxwriter.Workbook(path)
    for name, texts in (("summary", None), ("tweets", ["Floods in Moravia", "The budget"]), ("replies", ["Thanks"])):
        sheet = book.add_worksheet(name)
        sheet.write_row(0, 0, ["id", "text"] if texts else ["author", "tweets"])
        for i, t in enumerate(texts or []):
            sheet.write_row(1 + i, 0, [str(i), t])
    book.close()
    assert embed.main([str(path), "--name", "first"]) == 0
    assert load_corpus("first").frame["text"].tolist() == ["Floods in Moravia", "The budget"]
    assert embed.main([str(path), "--name", "second", "--sheet", "replies"]) == 0
    corpus = load_corpus("second")
    assert corpus.frame["text"].tolist() == ["Thanks"]
    assert "'replies' (as asked)" in corpus.manifest["validation"]["notes"][0]


def test_the_import_command_draws_a_bar_for_each_counted_step(tmp_path, monkeypatch, model, capsys):
    """Each counted step after the embedding (the keyword index, the scatter's sketch: minutes at ten million rows)
    had its bar looked up under the embedding's own, closed by then, and drew nothing (the sketch: from 64 texts)."""
    from precompute import embed

    monkeypatch.setenv("SEMANNO_DATA", str(tmp_path / "d"))
    monkeypatch.setattr("core.corpus.load_model", lambda name, device="auto": model)
    path = write(tmp_path, "t.csv", "id,text\n" + "".join(f"{i},Flood warning number {i} in Moravia\n"
                                                          for i in range(40)))
    assert embed.main([str(path), "--name", "t", "--indexes", "on"]) == 0
    said = capsys.readouterr().err
    for step in ("embed [1/1]", "indexing the words for keyword search"):
        assert f"{step}" in said and "40/40" in said.split(step, 1)[1].split("\n", 1)[0], step


def test_a_workbook_is_read_as_a_csv_of_it_would_be_and_an_export_comes_back_whole(tmp_path):
    """Excel's own cells (numbers, dates, a second sheet) read as a CSV of the sheet would hold them; ids a
    spreadsheet kept as numbers and so rounded are refused as the CSV's are; the Groups page's Excel export of real
    tweets imports again with the same ids, texts and dates."""
    from datetime import datetime

    import xlsxwriter

    from core import export
    from core.ingest import read_head
    from tests.conftest import shared_file

    path = tmp_path / "tweets.xlsx"
    book = xlsxwriter.Workbook(path)
    sheet = book.add_worksheet("tweets")
    when = book.add_format({"num_format": "d.m.yyyy h:mm"})
    sheet.write_row(0, 0, ["id", "text", "date", "author", "likes"])
    sheet.write_string(1, 0, "1344902244014170115")
    sheet.write_row(1, 1, ["Povodně na Moravě", None, "alice", 5])
    sheet.write_datetime(1, 2, datetime(2021, 3, 1, 10, 15), when)
    sheet.write_number(2, 0, 17)
    sheet.write_row(2, 1, ["Rozpočet", "2.3.2021 11:00", "bob", 2.5])
    book.add_worksheet("notes")
    book.close()
    frame, report = load(path)
    assert frame["id"].tolist() == ["1344902244014170115", "17"] and frame["likes"].tolist() == ["5", "2.5"]
    assert frame["date"].tolist() == [pd.Timestamp("2021-03-01 10:15"), pd.Timestamp("2021-03-02 11:00")]
    assert report.notes == ["read the sheet 'tweets' (the first) of the workbook's 2 (not 'notes'; another is read "
                            "with --sheet, or picked on the home page)"]
    with open(path, "rb") as fh:
        assert read_head(fh, "tweets.xlsx").equals(read_table(path))

    rounded = tmp_path / "rounded.xlsx"
    book = xlsxwriter.Workbook(rounded)
    sheet = book.add_worksheet()
    sheet.write_row(0, 0, ["id", "text"])
    for i, n in enumerate((1344902244014170115, 1344902244014170116), start=1):
        sheet.write_row(i, 0, [n, f"tweet {i}"])  # as Excel keeps an id typed as a number
    book.close()
    with pytest.raises(InputError, match="rows 1, 2.*a spreadsheet rounded"):
        load(rounded)

    tweets = pd.read_csv(shared_file("czech_politicians_tweets_2021.csv"), dtype=str, keep_default_na=False,
                         nrows=300)
    tweets["date"] = pd.to_datetime(tweets["date"]).dt.tz_localize(None)
    out = write(tmp_path, "group.xlsx", export.to_bytes(tweets, "xlsx"), mode="wb")
    back, _ = load(out)
    assert back["id"].tolist() == tweets["id"].tolist() and back["text"].tolist() == tweets["text"].tolist()
    assert (back["date"] == tweets["date"]).all()
    assert back["conversation_id"].tolist() == tweets["conversation_id"].tolist()


def test_unix_times_are_read_as_the_instants_they_are_in_any_zone(tmp_path):
    """Reddit's created_utc and many APIs' timestamps: seconds (with a fraction or not) or milliseconds since 1970,
    as text or as numbers, read as UTC instants whatever the corpus's zone, and said in the notes; a column that
    mixes them with other dates is read as dates, and its numbers are unparseable dates, named."""
    zone = Options(timezone="Europe/Prague")
    p = write(tmp_path, "reddit.csv", "id,body,created_utc\n1,a,1614593700\n2,b, 1614593760.5\n3,c,\n")
    frame, report = load(p, options=zone)
    assert frame["date"].tolist()[:2] == [pd.Timestamp("2021-03-01 10:15"), pd.Timestamp("2021-03-01 10:16:00.5")]
    assert pd.isna(frame["date"].iloc[2])
    assert "read column 'created_utc' as Unix times (seconds since 1970, UTC)" in report.notes
    rows = [{"id": "1", "text": "a", "date": 1614593700000}, {"id": "2", "text": "b", "date": 1614593760000}]
    p = write(tmp_path, "ms.jsonl", "\n".join(json.dumps(r) for r in rows))
    frame, report = load(p, options=zone)
    assert frame["date"].tolist() == [pd.Timestamp("2021-03-01 10:15"), pd.Timestamp("2021-03-01 10:16")]
    assert "read column 'date' as Unix times (milliseconds since 1970, UTC)" in report.notes
    p = write(tmp_path, "mixed.csv", "id,text,date\n1,a,1614593700\n2,b,2021-03-01 10:15\n")
    with pytest.raises(InputError, match=r"1 unparseable date in row 1, e.g. '1614593700'"):
        load(p)


def test_a_twitter_api_export_imports_as_it_is(tmp_path):
    """Tweets as Twitter's API v1.1 returns them, one JSON object a line: the id, the full text, Twitter's own
    date format, the author nested in the user object, the replies' links as text beside their rounded numbers:
    every role found, the conversations made, nothing to rename first."""
    from core.threads import threads_of

    def tweet(i, reply_to=None):
        return {"created_at": f"Wed Oct {10 + i} 20:19:24 +0000 2018", "id": 1050118621198921728 + i,
                "id_str": str(1050118621198921728 + i), "full_text": f"tweet {i} &amp; more", "truncated": False,
                "user": {"id": 6253282, "screen_name": f"user{i % 2}", "name": "Someone"},
                "in_reply_to_status_id": None if reply_to is None else 1050118621198921728 + reply_to,
                "in_reply_to_status_id_str": None if reply_to is None else str(1050118621198921728 + reply_to),
                "entities": {"hashtags": [], "urls": []}, "retweet_count": 3}

    p = write(tmp_path, "tweets.jsonl", "\n".join(json.dumps(t) for t in [tweet(0), tweet(1, 0), tweet(2, 1),
                                                                            tweet(3)]))
    frame, report = load(p)
    assert frame["id"].tolist() == [str(1050118621198921728 + i) for i in range(4)]
    assert frame["text"].tolist()[0] == "tweet 0 & more"
    assert frame["date"].tolist()[3] == pd.Timestamp("2018-10-13 20:19:24")
    assert frame["author"].tolist() == ["user0", "user1", "user0", "user1"]
    assert threads_of(frame).mates(2).tolist() == [0, 1, 2]
    assert "field 'screen_name' of column 'user' read as the authors" in report.notes
    # the nested objects themselves are left out (an object per row in every page's corpus), the other columns kept
    assert "user" not in frame.columns and "entities" not in frame.columns and frame["retweet_count"].iloc[0] == 3
    assert ("left out 2 columns of nested objects or lists ('user', 'entities'): the fields read from them are in "
            "the corpus's own columns") in report.notes
    # the home page's form offers the field by that name, and the import takes it so
    from core.ingest import guess_columns, read_head

    with open(p, "rb") as fh:
        head = read_head(fh, p.name)
    assert guess_columns(head) == {"text": "full_text", "id": "id", "date": "created_at", "author": "user.screen_name"}
    assert "user.screen_name" not in head.columns  # the guess adds nothing to the rows read
    frame, _ = load(p, Columns(text="full_text", date="created_at", author="user.screen_name"))
    assert frame["author"].tolist() == ["user0", "user1", "user0", "user1"]


def test_tweets_the_twitter_api_cut_short_are_read_whole(tmp_path):
    """500 real tweets as Twitter's streaming API v1.1 writes them: a text over 140 characters cut with "…" and
    whole in extended_tweet.full_text; every fifth a retweet of another, cut again after its "RT @name: " and whole
    in retweeted_status. The import reads every text whole, as its author wrote it; a text named in another column
    is left as it is."""
    from tests.conftest import shared_file

    tweets = pd.read_csv(shared_file("czech_politicians_tweets_2021.csv"), dtype=str, keep_default_na=False)
    tweets = tweets[~tweets["text"].str.startswith("RT @")].head(500).reset_index(drop=True)

    def cut(t):
        return t if len(t) <= 140 else t[:139] + "…"

    def status(row):
        out = {"id_str": row.id, "created_at": "Wed Oct 10 20:19:24 +0000 2018", "text": cut(row.text),
               "truncated": len(row.text) > 140, "user": {"screen_name": row.author}}
        if len(row.text) > 140:
            out["extended_tweet"] = {"full_text": row.text}
        return out

    lines, expected = [], []
    for i, row in enumerate(tweets.itertuples()):
        if i % 5 == 4:  # a retweet of the tweet before it
            original = tweets.iloc[i - 1]
            record = status(row)
            record.update(text=cut(f"RT @{original.author}: {original.text}"), truncated=False,
                          retweeted_status=status(original))
            record.pop("extended_tweet", None)
            expected.append(f"RT @{original.author}: {original.text}")
        else:
            record = status(row)
            expected.append(row.text)
        lines.append(json.dumps(record, ensure_ascii=False))
    p = write(tmp_path, "stream.jsonl", "\n".join(lines))
    frame, report = load(p)
    assert sum(len(t) > 140 for t in expected) > 100  # the cut ones are many
    assert frame["text"].tolist() == expected
    cut_short = sum(cut(t) != t for t in expected)
    assert f"read {cut_short:,} texts the Twitter API had cut short whole" in " ".join(report.notes)
    v2 = pd.DataFrame({"id": ["1", "2"], "text": ["A long post…", "short"],
                       "note_tweet": [{"text": "A long post whole"}, None]})
    assert validate(v2, "v2.jsonl")[0]["text"].tolist() == ["A long post whole", "short"]  # API v2's long posts
    shown = pd.DataFrame({"id": ["1"], "tweet": ["RT @a: short…"], "retweeted_status": [{"full_text": "whole"}]})
    assert validate(shown, "x.jsonl")[0]["text"].tolist() == ["RT @a: short…"]


def test_twarc2s_pages_of_api_v2_and_a_json_array_import_as_they_are(tmp_path):
    """600 real tweets as ``twarc2 search`` saves them (API v2 responses of 100, one a line: the tweets in data,
    their authors and the retweeted tweets in includes; a retweet's text cut after its "RT @name: ", a long post
    whole only in note_tweet): one row a tweet, every text whole, each author's username, the conversations. The
    same tweets as a JSON array (a scraper's .json, pretty printed) read alike, and the form's first rows of a large
    array are its first objects."""
    from core.ingest import read_head
    from core.threads import threads_of
    from tests.conftest import shared_file

    tweets = pd.read_csv(shared_file("czech_politicians_tweets_2021.csv"), dtype=str, keep_default_na=False)
    tweets = tweets[~tweets["text"].str.startswith("RT @")].head(600).reset_index(drop=True)
    users = {a: str(1000 + i) for i, a in enumerate(sorted(tweets["author"].unique()))}

    def v2(row, **more):
        return {"id": row.id, "author_id": users[row.author], "conversation_id": row.conversation_id,
                "created_at": "2021-03-01T10:15:00.000Z", "lang": "cs", **more}

    pages, expected = [], []
    for start in range(0, len(tweets), 100):
        data, retweeted = [], []
        for i in range(start, start + 100):
            row = tweets.iloc[i]
            if i % 7 == 6:  # a retweet of the tweet before it, whose text the API cuts at 140 characters
                original = tweets.iloc[i - 1]
                whole = f"RT @{original.author}: {original.text}"
                data.append(v2(row, text=whole[:139] + "…" if len(whole) > 140 else whole,
                               referenced_tweets=[{"type": "retweeted", "id": original.id}]))
                retweeted.append(v2(original, text=original.text))
                expected.append(whole)
            elif len(row.text) > 100:  # a long post: cut in text, whole in note_tweet
                data.append(v2(row, text=row.text[:99] + "…", note_tweet={"text": row.text}))
                expected.append(row.text)
            else:
                data.append(v2(row, text=row.text))
                expected.append(row.text)
        pages.append({"data": data, "includes": {"users": [{"id": u, "username": a, "name": a.title()}
                                                           for a, u in users.items()], "tweets": retweeted},
                      "meta": {"result_count": 100}, "__twarc": {"version": "2.14.0"}})
    p = write(tmp_path, "search.jsonl", "\n".join(json.dumps(page, ensure_ascii=False) for page in pages))
    frame, report = load(p)
    assert frame["id"].tolist() == tweets["id"].tolist() and frame["text"].tolist() == expected
    assert frame["author"].tolist() == tweets["author"].tolist()
    assert frame["date"].iloc[0] == pd.Timestamp("2021-03-01 10:15")
    assert threads_of(frame).count == threads_of(tweets).count > 10
    assert "field 'username' of column 'author' read as the authors" in report.notes
    from core.ingest import guess_columns

    with open(p, "rb") as fh:  # the home page's form offers the same columns, and the import takes them so
        guess = guess_columns(read_head(fh, p.name))
    assert guess == {"text": "text", "id": "id", "date": "created_at", "author": "author.username"}
    assert load(p, Columns(**guess))[0]["author"].tolist() == tweets["author"].tolist()

    flat = [{"id": row.id, "text": row.text, "created_at": "2021-03-01T10:15:00Z", "user": {"username": row.author}}
            for row in tweets.itertuples()]
    array = write(tmp_path, "scraped.json", json.dumps(flat * 10, ensure_ascii=False, indent=2))
    assert array.stat().st_size > (1 << 20)  # more than the form reads of it
    frame, _ = load(array, options=Options(dedupe="first"))
    assert frame["text"].tolist() == tweets["text"].tolist() and frame["author"].tolist() == tweets["author"].tolist()
    with open(array, "rb") as fh:
        head = read_head(fh, array.name)
    assert head["id"].tolist() == tweets["id"].tolist()[:200]
    with pytest.raises(InputError, match=r"numbers.json: cannot be read as JSONL: a JSON array of objects"):
        load(write(tmp_path, "numbers.json", "[1, 2, 3]"))
    with pytest.raises(InputError, match=r"bad.jsonl: cannot be read as JSONL: line 3 is no JSON \(Expecting value at "
                                         r"its character 19\): '\{\"id\": 2, \"text\": broken\}'"):
        load(write(tmp_path, "bad.jsonl", '{"id": 1, "text": "a"}\n\n{"id": 2, "text": broken}\n'))


def test_an_emoji_cut_in_two_in_a_json_file_is_read_not_the_whole_file_refused(tmp_path, monkeypatch):
    """A tool that cut texts at a length in UTF-16 leaves half an emoji, which JSON writes as ``\\ud83d`` alone; no
    UTF-8 text can hold it, so a column of such strings could not be made and one such tweet refused a file of
    millions ("surrogates not allowed"). Each half is now read as U+FFFD, in a text and in a nested user's name, in
    every JSON form (streamed lines across chunks, an array, one object, the form's first rows); a whole emoji stays
    whole, and the report names the rows."""
    from core import json_records
    from core.ingest import read_head

    monkeypatch.setattr(json_records, "CHUNK", 3)  # rows numbered across the chunks a stream is made in
    rows = [{"id": str(i), "text": f"tweet {i} 😀", "user": {"screen_name": f"u{i}"}} for i in range(8)]
    rows[0]["text"] = "the first line's \ud83d"  # where the reader looks for a Telegram export's marks
    rows[1]["text"] = "cut short \ud83d"
    rows[4]["user"]["screen_name"] = "name \udc00 cut"
    rows[6]["text"] = "whole \ud83d\ude00 and cut \ud83d"
    lines = "\n".join(json.dumps(r) for r in rows)  # ensure_ascii: each half written as a \\u escape
    assert "\\ud83d\\ude00" in lines and json.loads(lines.splitlines()[1])["text"].endswith("\ud83d")
    files = [write(tmp_path, "t.jsonl", lines), write(tmp_path, "t.json", "[" + ",\n".join(lines.splitlines()) + "]")]
    for path in files:
        frame, report = load(path, Columns(author="user.screen_name"))
        assert len(frame) == 8, path.name
        assert frame["text"].iloc[1] == "cut short \ufffd" and frame["author"].iloc[4] == "name \ufffd cut"
        assert frame["text"].iloc[6] == "whole 😀 and cut \ufffd" and frame["text"].iloc[7] == "tweet 7 😀"
        note = next(n for n in report.notes if "cut in two" in n)
        assert "4 row(s): 1, 2, 5, 7" in note and "\\ud83d" in note, note
    one = write(tmp_path, "one.json", json.dumps({"id": "1", "text": "half \ud83d"}, indent=1))  # read whole
    assert load(one)[0]["text"].tolist() == ["half \ufffd"]
    head = read_head(files[1].open("rb"), "t.json")  # the form's first rows
    assert head["text"].iloc[1] == "cut short \ufffd" and "1, 2, 5, 7" in head.attrs["note"]


def test_an_id_holding_a_nul_character_is_refused_by_its_row(tmp_path):
    """PostgreSQL keeps no NUL in a text, so a group holding a text whose id has one could not be saved for a team:
    such an id is refused at the import, its row named, and row numbers offered."""
    p = write(tmp_path, "a.csv", "id,text\n1,hello\n2\x00,world\n3,more\n")
    with pytest.raises(InputError) as e:
        load(p)
    assert "a.csv" in str(e.value) and "'id'" in str(e.value) and "NUL" in str(e.value) and "rows 2;" in str(e.value)
    frame, _ = load(p, Columns(id=None))
    assert frame["text"].tolist() == ["hello", "world", "more"]


def test_a_json_file_is_read_as_a_stream_each_tweet_cut_to_what_the_import_reads(tmp_path, monkeypatch):
    """Millions of tweets as Twitter's API writes them must fit in memory while they are read: each object is cut to
    what the import reads as it is read (its own values; of its user object, entities and retweeted tweet only the
    fields the import takes, and those named for it). 1,500 real tweets read a few hundred bytes at a time (an
    object longer than what is read; a JSONL, a gzipped one, a pretty-printed array) import as when read whole;
    reading holds a fraction of what the whole read held (a few hundred whole objects at a time); a fault deep in
    the file is named by line and character."""
    import gzip
    import tracemalloc

    from core import json_records
    from core.ingest import _parse_text, _read_utf8
    from tests.conftest import shared_file

    tweets = pd.read_csv(shared_file("czech_politicians_tweets_2021.csv"), dtype=str, keep_default_na=False,
                         nrows=1500)

    def api(i, row):  # as API v1.1 writes a tweet: a user object, entities, a place now and then, retweets
        user = {"id": 1000 + i, "screen_name": row.author, "name": row.author.title(), "description": "x" * 300,
                "entities": {"url": {"urls": []}}, "followers_count": i}
        out = {"id_str": row.id, "created_at": "Wed Oct 10 20:19:24 +0000 2018", "full_text": row.text,
               "user": user, "entities": {"hashtags": [{"text": "h", "indices": [0, 2]}] * 5, "urls": []},
               "coordinates": None if i % 5 else {"type": "Point", "coordinates": [14.4, 50.1]}, "lang": "cs"}
        if i % 4 == 0:
            out["retweeted_status"] = {"id_str": "9" + row.id, "full_text": row.text, "user": dict(user)}
        return out

    objects = [api(i, row) for i, row in enumerate(tweets.itertuples())]
    lines = "\n".join(json.dumps(o, ensure_ascii=False) for o in objects)
    files = {"lines": write(tmp_path, "tweets.jsonl", lines), "array": write(tmp_path, "tweets.json",
                                                                           json.dumps(objects, indent=2))}
    files["gz"] = write(tmp_path, "tweets.jsonl.gz", gzip.compress(lines.encode()), mode="wb")
    whole, whole_report = validate(_parse_text(_read_utf8(files["lines"], "t"), "jsonl"), "t")  # read whole
    assert whole["author"].tolist() == tweets["author"].tolist() and "coordinates" not in whole.columns
    monkeypatch.setattr(json_records, "BLOCK", 512)  # shorter than most of the objects
    monkeypatch.setattr(json_records, "CHUNK", 97)
    for kind, path in files.items():
        frame, report = load(path)
        pd.testing.assert_frame_equal(frame, whole, obj=kind)
        assert report.notes == whole_report.notes[:-1] + [report.notes[-1]]
        left = report.notes[-1]  # every nested field is named as left out, as a whole read names them
        assert all(f"'{c}'" in left for c in ("user", "entities", "coordinates", "retweeted_status")), left
    read = read_table(files["lines"])  # what is held: of a user object, only the field the import reads
    assert read["user"].iloc[0] == {"screen_name": tweets["author"].iloc[0]} and "entities" not in read.columns
    named, _ = load(files["array"], Columns(text="full_text", id="id_str", date="created_at", author="user.name"))
    assert named["author"].tolist() == tweets["author"].str.title().tolist()  # a field named for the import is kept

    broken = objects[:40] + ["BROKEN"] + objects[40:]
    text = json.dumps(broken, indent=2).replace('"BROKEN"', "{broken}")
    line = text[:text.index("{broken}")].count("\n") + 1
    with pytest.raises(InputError, match=rf"broken.json: cannot be read as JSONL: Expecting property name enclosed "
                                         rf"in double quotes: line {line:,}, character 4"):
        load(write(tmp_path, "broken.json", text))
    with pytest.raises(InputError, match=r"cut.json: cannot be read as JSONL: the JSON array ends without its '\]'"):
        load(write(tmp_path, "cut.json", json.dumps(objects[:50])[:-1]))
    flat = tweets[["id", "text", "author"]].to_dict("records")  # a scraper's flat records: read a block at once
    for indent in (None, 2):
        frame, _ = load(write(tmp_path, "flat.json", json.dumps(flat, indent=indent, ensure_ascii=False)))
        assert frame["text"].tolist() == tweets["text"].tolist()
        assert frame["author"].tolist() == tweets["author"].tolist()
    text = json.dumps(flat[:700] + ["BROKEN"] + flat[700:], indent=2).replace('"BROKEN"', '{"id": 1,}')
    line = text[:text.index('{"id": 1,}')].count("\n") + 1
    with pytest.raises(InputError, match=rf"Expecting property name enclosed in double quotes: line {line:,}, "
                                         r"character 12"):
        load(write(tmp_path, "flat.json", text))

    tracemalloc.start()  # what reading holds: a chunk of whole objects at a time, the rest cut
    _parse_text(_read_utf8(files["lines"], "t"), "jsonl")
    whole_peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.reset_peak()
    read_table(files["lines"])
    stream_peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert stream_peak < whole_peak / 3, (stream_peak, whole_peak)


def test_a_quote_tweet_is_read_with_the_tweet_it_quotes(tmp_path):
    """A quote's own words ("Přesně tak.") say little without the tweet it quotes: 400 real tweets, every fourth a
    quote of the tweet before it, as API v1.1 writes them (the quoted tweet in quoted_status, a long one whole only
    in its extended_tweet, its text HTML-escaped) and as twarc2 saves API v2's pages (referenced_tweets of type
    "quoted", the quoted tweet and its author in includes): each quote's quoted_text is "@author: the whole quoted
    text", '' for the others, and the notes say how many quote; a file's own quoted_text column is its own."""
    from tests.conftest import shared_file

    tweets = pd.read_csv(shared_file("czech_politicians_tweets_2021.csv"), dtype=str, keep_default_na=False)
    tweets = tweets[~tweets["text"].str.startswith("RT @")].head(400).reset_index(drop=True)
    quotes = [i for i in range(len(tweets)) if i % 4 == 3]
    expected = ["" if i % 4 != 3 else f"@{tweets['author'][i - 1]}: {tweets['text'][i - 1]}"
                for i in range(len(tweets))]
    assert sum(len(tweets["text"][i - 1]) > 140 for i in quotes) > 20  # many quoted tweets are long

    def v11(row):
        return {"id_str": row.id, "created_at": "Wed Oct 10 20:19:24 +0000 2018", "full_text": row.text,
                "user": {"screen_name": row.author}}

    lines = []
    for i, row in enumerate(tweets.itertuples()):
        tweet = v11(row)
        if i in quotes:
            q = tweets.iloc[i - 1]
            escaped = q.text.replace("&", "&amp;").replace("<", "&lt;")
            tweet["is_quote_status"] = True
            tweet["quoted_status"] = {"id_str": q.id, "text": escaped[:139] + "…" if len(escaped) > 140 else escaped,
                                      "user": {"screen_name": q.author}, "truncated": len(escaped) > 140}
            if len(escaped) > 140:
                tweet["quoted_status"]["extended_tweet"] = {"full_text": escaped}
        lines.append(json.dumps(tweet, ensure_ascii=False))
    frame, report = load(write(tmp_path, "v11.jsonl", "\n".join(lines)))
    assert frame["quoted_text"].tolist() == expected
    assert frame["text"].tolist() == tweets["text"].tolist()  # the quote's own words as written
    assert f"{len(quotes)} texts quote a tweet: what each quotes is in column 'quoted_text'" in " ".join(report.notes)

    users = {a: str(1000 + i) for i, a in enumerate(sorted(tweets["author"].unique()))}
    data, included = [], []
    for i, row in enumerate(tweets.itertuples()):
        tweet = {"id": row.id, "text": row.text, "author_id": users[row.author], "created_at": "2021-03-01T10:15:00Z"}
        if i in quotes:
            q = tweets.iloc[i - 1]
            tweet["referenced_tweets"] = [{"type": "quoted", "id": q.id}]
            included.append({"id": q.id, "text": q.text, "author_id": users[q.author]})
        data.append(tweet)
    pages = [{"data": data[s:s + 100], "includes": {"users": [{"id": u, "username": a} for a, u in users.items()],
                                                     "tweets": [t for t in included if t["id"] in
                                                                {r["referenced_tweets"][0]["id"] for r in
                                                                 data[s:s + 100] if "referenced_tweets" in r}]}}
             for s in range(0, len(data), 100)]
    frame, _ = load(write(tmp_path, "search.jsonl", "\n".join(json.dumps(p, ensure_ascii=False) for p in pages)))
    assert frame["quoted_text"].tolist() == expected
    own = write(tmp_path, "own.csv", "id,text,quoted_text\n1,Přesně tak.,Their own words\n2,Jinak,\n")
    assert load(own)[0]["quoted_text"].fillna("").tolist() == ["Their own words", ""]


def _threaded_sample(n: int) -> pd.DataFrame:
    """n real tweets with their conversations, each reply pointed at its thread's first tweet (``parent``)."""
    from tests.conftest import shared_file

    tweets = pd.read_csv(shared_file("czech_politicians_tweets_2021.csv"), dtype=str, keep_default_na=False)
    tweets = tweets[~tweets["text"].str.startswith("RT @")].head(n).reset_index(drop=True)
    return tweets.assign(parent=np.where(tweets["conversation_id"] != tweets["id"], tweets["conversation_id"], ""))


def test_mastodon_and_bluesky_posts_and_a_twitter_archive_import_as_they_are(tmp_path):
    """800 real tweets written as the platforms write posts, each import giving back the texts a reader sees, the
    authors, the dates and the conversations (each reply pointed at its thread's first post): Mastodon's statuses
    (the content in HTML, links cut by hidden spans, the author as account.acct, in_reply_to_id; a boost, whose own
    content is empty, as "RT @acct: text" with its own id, author and date, a copy of what it boosts); Bluesky's feed (each post wrapped in a feed item: the uri as id, the record's text
    and createdAt, the author's handle, replies by record.reply.parent.uri, a quote's quoted post from its embed; a
    repost as a retweet by whom, when); a Twitter archive's tweets.js."""
    import html as htmllib
    import re

    from core.copies import codes_of
    from core.threads import threads_of

    tweets = _threaded_sample(800)
    expected = ["\n\n".join(p.strip() for p in t.split("\n\n") if p.strip()) for t in tweets["text"]]  # paragraphs

    def mastodon_html(text):  # as Mastodon writes a status: paragraphs, line breaks, links cut by hidden spans
        def link(m):
            url = m.group(0)
            scheme, rest = url.split("://", 1)
            return (f'<a href="{url}" rel="nofollow noopener" target="_blank"><span class="invisible">{scheme}://'
                    f'</span><span class="ellipsis">{rest[:30]}</span><span class="invisible">{rest[30:]}</span></a>')
        paragraphs = [p.strip() for p in text.split("\n\n") if p.strip()]
        return "".join("<p>" + re.sub(r"https?://\S+", link, htmllib.escape(p, quote=False)).replace("\n", "<br />")
                       + "</p>" for p in paragraphs)

    statuses = [{"id": r.id, "created_at": "2021-03-01T10:15:00.000Z", "in_reply_to_id": r.parent or None,
                 "content": mastodon_html(r.text), "language": "cs", "reblog": None,
                 "account": {"id": str(i % 50), "username": r.author, "acct": f"{r.author}@mastodon.social"}}
                for i, r in enumerate(tweets.itertuples())]
    for i in range(8, len(statuses), 9):  # a quote of the status before it (Mastodon 4.5), one of them withheld
        statuses[i]["quote"] = ({"state": "accepted", "quoted_status": dict(statuses[i - 1])} if i != 17 else
                                {"state": "revoked", "quoted_status": None})
    boost = {**statuses[0], "id": "boost", "content": "", "reblog": statuses[0], "created_at": "2021-03-02T08:00:00Z",
             "account": {"id": "77", "username": "fan", "acct": "fan@witter.cz"}, "in_reply_to_id": None}
    statuses.append(boost)
    p = write(tmp_path, "statuses.json", json.dumps(statuses, ensure_ascii=False))
    frame, report = load(p)
    assert frame["text"].tolist() == expected + [f"RT @{tweets['author'][0]}@mastodon.social: {expected[0]}"]
    assert frame.iloc[-1][["id", "author"]].tolist() == ["boost", "fan@witter.cz"]  # the boost's own
    assert frame["date"].iloc[-1] == pd.Timestamp("2021-03-02 08:00")
    assert any("read 1 boost as Twitter writes a retweet" in n for n in report.notes), report.notes
    assert codes_of(frame["text"])[-1] == codes_of(frame["text"])[0]  # a copy of the status it boosts
    frame = frame.iloc[:-1]  # the rest as read without it
    assert frame[QUOTED].tolist() == [f"@{tweets['author'][i - 1]}@mastodon.social: {expected[i - 1]}"
                                      if i % 9 == 8 and i != 17 else "" for i in range(len(frame))]
    assert frame["author"].tolist() == [f"{a}@mastodon.social" for a in tweets["author"]]
    assert frame["text_raw"].iloc[0] == statuses[0]["content"]  # as written
    assert frame["date"].iloc[0] == pd.Timestamp("2021-03-01 10:15")
    assert threads_of(frame).count == threads_of(tweets).count > 10
    assert any("written in HTML" in n for n in report.notes), report.notes

    uri = {r.id: f"at://did:plc:{r.author.lower()}/app.bsky.feed.post/{r.id}" for r in tweets.itertuples()}

    def post(r):
        record = {"$type": "app.bsky.feed.post", "text": r.text, "createdAt": "2021-03-01T10:15:00.000Z",
                  "langs": ["cs"]}
        if r.parent:
            parent = {"uri": uri.get(r.parent, f"at://did:plc:gone/app.bsky.feed.post/{r.parent}"), "cid": "c"}
            record["reply"] = {"root": parent, "parent": parent}
        view = {"post": {"uri": uri[r.id], "cid": "c", "record": record, "replyCount": 0,
                         "author": {"did": f"did:plc:{r.author.lower()}", "handle": f"{r.author.lower()}.bsky.social",
                                    "displayName": r.author}}}
        if r.Index % 9 == 8:  # a quote of the post before it (every other one with an image beside it)
            q = tweets.iloc[r.Index - 1]
            quote = {"$type": "app.bsky.embed.record#viewRecord", "uri": uri[q.id], "value": {"text": q.text},
                     "author": {"handle": f"{q.author.lower()}.bsky.social"}}
            view["post"]["embed"] = ({"$type": "app.bsky.embed.record#view", "record": quote} if r.Index % 2 else
                                     {"$type": "app.bsky.embed.recordWithMedia#view", "record": {"record": quote},
                                      "media": {"images": []}})
        return view

    items = [post(r) for r in tweets.itertuples()]
    first = tweets.iloc[0]
    items.append({**items[0], "reason": {"$type": "app.bsky.feed.defs#reasonRepost", "by": {
        "did": "did:plc:fan", "handle": "fan.bsky.social"}, "indexedAt": "2021-03-02T08:00:00Z"}})
    p = write(tmp_path, "feed.jsonl", "\n".join(json.dumps(i, ensure_ascii=False) for i in items))
    frame, report = load(p)
    assert frame.iloc[-1][["id", "text", "author"]].tolist() == [  # a repost, as a retweet: by whom, when
        uri[first["id"]] + "#repost/did:plc:fan", f"RT @{first['author'].lower()}.bsky.social: {first['text']}",
        "fan.bsky.social"]
    assert frame["date"].iloc[-1] == pd.Timestamp("2021-03-02 08:00")
    assert codes_of(frame["text"])[-1] == codes_of(frame["text"])[0]  # a copy of the post it reposts
    frame = frame.iloc[:-1]
    assert frame["id"].tolist() == [uri[i] for i in tweets["id"]] and frame["text"].tolist() == tweets["text"].tolist()
    assert frame["author"].tolist() == [f"{a.lower()}.bsky.social" for a in tweets["author"]]
    assert frame["date"].iloc[0] == pd.Timestamp("2021-03-01 10:15")
    assert frame["quoted_text"].tolist() == ["" if i % 9 != 8 else
                                             f"@{tweets['author'][i - 1].lower()}.bsky.social: {tweets['text'][i - 1]}"
                                             for i in range(len(tweets))]
    made, named = threads_of(frame), threads_of(tweets)
    assert made.count == named.count and all(made.mates(r).tolist() == named.mates(r).tolist() for r in range(800))
    from core.ingest import guess_columns, read_head

    with open(p, "rb") as fh:  # the home page's form offers the fields the import reads
        guess = guess_columns(read_head(fh, p.name))
    assert guess == {"text": "record.text", "id": "uri", "date": "record.createdAt", "author": "author.handle"}
    assert load(p, Columns(**guess))[0]["text"].tolist()[:-1] == tweets["text"].tolist()

    archive = [{"tweet": {"id_str": r.id, "full_text": r.text, "created_at": "Mon Mar 01 10:15:00 +0000 2021",
                          "in_reply_to_status_id_str": r.parent or None}} for r in tweets.itertuples()]
    p = write(tmp_path, "tweets.js", "window.YTD.tweets.part0 = " + json.dumps(archive, indent=2, ensure_ascii=False))
    frame, _ = load(p)
    assert frame["text"].tolist() == tweets["text"].tolist() and threads_of(frame).count == named.count


def _telegram_messages(tweets: pd.DataFrame) -> list[dict]:
    """``tweets`` as Telegram Desktop exports a channel's messages: numbered from 1, a service message first, a text
    with a link written as pieces, replies by the number of the message they answer (one outside the channel
    numbered past its own)."""
    import re

    number = {i: n + 1 for n, i in enumerate(tweets["id"])}
    outside: dict[str, int] = {}

    def pieces(text):  # as Telegram writes a text with links: plain strings and link objects
        parts = re.split(r"(https?://\S+)", text)
        return text if len(parts) == 1 else [p if i % 2 == 0 else {"type": "link", "text": p}
                                             for i, p in enumerate(parts) if p]

    messages = [{"id": 0, "type": "service", "date": "2021-01-01T00:00:00", "actor": "Politici",
                 "action": "create_channel", "text": ""}]
    for r in tweets.itertuples():
        m = {"id": number[r.id], "type": "message", "date": "2021-03-01T10:15:00", "from": r.author,
             "from_id": f"user{len(r.author)}", "text": pieces(r.text)}
        if r.parent:
            m["reply_to_message_id"] = number.get(r.parent) or outside.setdefault(r.parent, 10_000 + len(outside))
        messages.append(m)
    return messages


def test_a_telegram_channels_export_imports_as_it_is(tmp_path):
    """600 real tweets as Telegram Desktop exports a channel (result.json: one indented object, its messages in
    ``messages``, numbered; a text with a link written as pieces; a service message; replies by the number of the
    message they answer, most messages answering none): the texts as they read, the authors ('from'), the dates,
    and the conversations as the file's. Telegram's export of all data (its chats in ``chats`` and ``left_chats``,
    each numbering its own messages): every chat's messages, each id "chat id/number", the chat named in a column,
    a reply in the conversation of its own chat's message."""
    from core.threads import threads_of

    tweets = _threaded_sample(600)
    export = {"name": "Politici", "type": "public_channel", "id": 1, "messages": _telegram_messages(tweets)}
    p = write(tmp_path, "result.json", json.dumps(export, ensure_ascii=False, indent=1))
    frame, report = load(p)
    assert frame["text"].tolist() == tweets["text"].tolist() and frame["author"].tolist() == tweets["author"].tolist()
    assert frame["id"].tolist() == [str(n) for n in range(1, 601)] and "chat" not in frame.columns
    assert frame["date"].iloc[0] == pd.Timestamp("2021-03-01 10:15")
    made, named = threads_of(frame), threads_of(tweets)
    assert made.count == named.count > 10 and all(made.mates(r).tolist() == named.mates(r).tolist() for r in range(600))
    assert any(n.startswith("conversations made from column 'reply_to_message_id'") for n in report.notes)

    side = tweets["conversation_id"].str[-1].astype(int) % 3  # whole conversations to each of three chats
    chats = [{"name": f"Chat {c}", "type": "public_channel", "id": 100 + c,
              "messages": _telegram_messages(tweets[side == c])} for c in range(3)]
    everything = {"about": "Here is the data you requested.", "personal_information": {"first_name": "A"},
                  "chats": {"about": "chats", "list": chats[:2]}, "left_chats": {"about": "left", "list": chats[2:]},
                  "contacts": {"about": "", "list": [{"first_name": "B", "phone_number": "+420"}]}}
    p = write(tmp_path, "all.json", json.dumps(everything, ensure_ascii=False, indent=1))
    frame, report = load(p)
    order = pd.concat([tweets[side == c] for c in range(3)])
    assert frame["text"].tolist() == order["text"].tolist() and frame["author"].tolist() == order["author"].tolist()
    assert frame["chat"].tolist() == [f"Chat {c}" for c in side.sort_values(kind="stable")]
    assert frame["id"].tolist() == [f"{100 + c}/{n}" for c in range(3) for n in range(1, int((side == c).sum()) + 1)]
    made, named = threads_of(frame), threads_of(order.reset_index(drop=True))
    assert made.count == named.count > 10 and all(made.mates(r).tolist() == named.mates(r).tolist() for r in range(600))
    assert any("Telegram export of all data: the messages of its 3 chats" in n for n in report.notes), report.notes


def test_a_telegram_export_is_read_a_message_at_a_time(tmp_path, monkeypatch):
    """A channel's history as Telegram Desktop exports it is one object, hundreds of megabytes for a large channel:
    read a message at a time (a chat's export, and an export of all data whose contacts and pictures come before
    its chats; plain, gzipped, with a byte-order mark), it imports as when read whole, holding a fraction of what
    the whole read held; a file cut short is named with the messages read before the cut."""
    import gzip
    import tracemalloc

    from core import json_records
    from core.ingest import _parse_text, _read_utf8, guess_columns, read_head

    tweets = _threaded_sample(600)
    channel = {"name": "Politici", "type": "public_channel", "id": 1, "messages": _telegram_messages(tweets)}
    side = tweets["conversation_id"].str[-1].astype(int) % 3
    chats = [{"name": f"Chat {c}", "type": "public_channel", "id": 100 + c,
              "messages": _telegram_messages(tweets[side == c])} for c in range(3)]
    everything = {"about": "Here is the data you requested.", "personal_information": {"first_name": "A"},
                  "profile_pictures": [{"date": "2021-01-01T10:00:00", "photo": "profile_pictures/1.jpg"}],
                  "contacts": {"about": "", "list": [{"first_name": "B", "phone_number": "+420"}] * 50},
                  "chats": {"about": "chats", "list": chats[:2]}, "left_chats": {"about": "left", "list": chats[2:]}}
    def longer(export):  # each chat's messages 20 times over (12,000 in all)
        if "messages" in export:
            return {**export, "messages": export["messages"] * 20}
        return {**export, **{s: {**export[s], "list": [longer(c) for c in export[s]["list"]]}
                             for s in ("chats", "left_chats")}}

    monkeypatch.setattr(json_records, "CHUNK", 97)
    for name, export in (("channel", channel), ("all", everything)):
        text = json.dumps(export, ensure_ascii=False, indent=1)
        path = write(tmp_path, f"{name}.json", text)
        whole, whole_report = validate(_parse_text(_read_utf8(path, "t"), "jsonl"), "t")  # read whole
        assert len(whole) == 600
        for kind, variant in (("plain", path), ("gzip", write(tmp_path, f"{name}.json.gz", gzip.compress(
                text.encode()), mode="wb")), ("BOM", write(tmp_path, f"{name}-bom.json", "\ufeff" + text))):
            frame, report = validate(read_table(variant), "t")
            pd.testing.assert_frame_equal(frame, whole, obj=f"{name}, {kind}")
            assert sorted(report.notes) == sorted(whole_report.notes), (name, kind)

        big = write(tmp_path, f"big-{name}.json", json.dumps(longer(export), ensure_ascii=False, indent=1))
        with open(big, "rb") as fh:  # the home page's form reads the first MiB of its 4: the first messages whole
            head = read_head(fh, big.name)
        assert len(head) == 200 and head["text"].tolist() == read_table(big)["text"].head(200).tolist()
        assert guess_columns(head) == {"text": "text", "id": "id", "date": "date", "author": "from"}
        tracemalloc.start()  # what reading holds: a chunk of whole messages at a time (the modules it uses loaded)
        _parse_text(_read_utf8(big, "t"), "jsonl")
        whole_peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.reset_peak()
        read_table(big)
        stream_peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        assert stream_peak < whole_peak / 3, (name, stream_peak, whole_peak)

        marked = json.loads(text)
        ms = marked["messages"] if name == "channel" else [m for s in ("chats", "left_chats")
                                                          for c in marked[s]["list"] for m in c["messages"]]
        ms[300]["text"] = "CUT HERE"
        cut = json.dumps(marked, ensure_ascii=False, indent=1)
        cut = cut[:cut.index("CUT HERE")]  # inside the 301st message
        with pytest.raises(InputError, match=rf"cut-{name}.json: cannot be read as JSONL: a Telegram export cut "
                                             rf"short or broken after 300 messages \(parse error: premature EOF\)$"):
            load(write(tmp_path, f"cut-{name}.json", cut))


def test_a_discord_channels_export_imports_as_it_is(tmp_path, monkeypatch):
    """600 real tweets as DiscordChatExporter exports a channel (one indented object: the guild and channel, then
    ``messages``, each with ``content``, ``timestamp``, ``author`` an object, a reply's ``reference.messageId``; a
    member's join and a pin among them): the texts, authors (``author.name``), dates and conversations as the file's,
    the join and the pin left out; read a message at a time as when read whole; a file cut short named; the home
    page's form offers its columns from the first MiB. It was read as a Telegram export, whose messages' type it
    lacks, and refused as holding no data rows."""
    from core import json_records
    from core.ingest import _parse_text, _read_utf8, guess_columns, read_head
    from core.threads import threads_of

    tweets = _threaded_sample(600)
    snowflake = {i: str(800_000_000_000_000_000 + n) for n, i in enumerate(tweets["id"])}
    messages = []
    for n, r in enumerate(tweets.itertuples()):
        m = {"id": snowflake[r.id], "type": "Reply" if r.parent else "Default",
             "timestamp": f"2021-03-01T10:{n // 60:02d}:{n % 60:02d}.123+01:00", "timestampEdited": None,
             "callEndedTimestamp": None, "isPinned": False, "content": r.text,
             "author": {"id": str(1000 + n % 41), "name": r.author, "discriminator": "0000",
                        "nickname": r.author.title(), "color": None, "isBot": False, "roles": [],
                        "avatarUrl": "https://cdn.discordapp.com/a.png"},
             "attachments": [], "embeds": [], "stickers": [], "reactions": [], "mentions": [], "inlineEmojis": []}
        if r.parent:
            m["reference"] = {"messageId": snowflake.get(r.parent, "1" + r.parent), "channelId": "5", "guildId": "4"}
        messages.append(m)
    service = {**messages[0], "id": "1", "type": "GuildMemberJoin", "content": "Joined the server."}
    pin = {**messages[0], "id": "2", "type": "ChannelPinnedMessage", "content": "Pinned a message."}
    export = {"guild": {"id": "4", "name": "Politika", "iconUrl": "https://cdn.discordapp.com/g.png"},
              "channel": {"id": "5", "type": "GuildTextChat", "categoryId": "3", "category": "Text", "name": "obecne",
                          "topic": None},
              "dateRange": {"after": None, "before": None}, "exportedAt": "2021-11-01T10:00:00+00:00",
              "messages": [service] + messages[:300] + [pin] + messages[300:], "messageCount": 602}
    text = json.dumps(export, ensure_ascii=False, indent=2)
    p = write(tmp_path, "obecne.json", text)
    monkeypatch.setattr(json_records, "CHUNK", 97)
    frame, report = load(p)
    assert frame["text"].tolist() == tweets["text"].tolist() and frame["author"].tolist() == tweets["author"].tolist()
    assert frame["id"].tolist() == [snowflake[i] for i in tweets["id"]]
    assert frame["date"].iloc[61] == pd.Timestamp("2021-03-01 09:01:01.123")  # UTC
    made, named = threads_of(frame), threads_of(tweets)
    assert made.count == named.count > 10 and all(made.mates(r).tolist() == named.mates(r).tolist() for r in range(600))
    whole, whole_report = validate(_parse_text(_read_utf8(p, "t"), "jsonl"), str(p))  # read whole
    pd.testing.assert_frame_equal(frame, whole)
    left = [n.startswith("left out 7 columns of nested") for n in report.notes]  # named in the order they were met
    assert left == [n.startswith("left out 7 columns of nested") for n in whole_report.notes] and sum(left) == 1
    assert [n for n, x in zip(report.notes, left) if not x] == [n for n, x in zip(whole_report.notes, left) if not x]
    big = write(tmp_path, "big.json", json.dumps({**export, "messages": export["messages"] * 4}, indent=2))
    with open(big, "rb") as fh:  # the home page's form reads the first MiB: the first messages whole
        head = read_head(fh, big.name)
    guess = guess_columns(head)
    assert len(head) == 200 and guess == {"id": "id", "text": "content", "date": "timestamp", "author": "author.name"}
    assert load(p, Columns(**guess))[0]["author"].tolist() == tweets["author"].tolist()
    cut = text[:text.index(f'"id": "{snowflake[tweets["id"].iloc[400]]}"')]  # in the 403rd (a join, 300, a pin)
    with pytest.raises(InputError, match=r"cut.json: cannot be read as JSONL: a Discord export cut short or broken "
                                         r"after 402 messages"):
        load(write(tmp_path, "cut.json", cut))


def test_youtube_comments_import_with_their_replies_as_conversations(tmp_path):
    """600 real tweets as youtube-comment-downloader writes a video's comments (JSON lines: ``cid``, ``text``,
    ``time`` as YouTube shows it, ``time_parsed`` its Unix time, ``author`` "@handle", the channel, votes and the
    rest; a reply's cid "<its comment's cid>.<its own>", a reply to a comment the file lacks too): the ids, the
    texts, the dates (said to be as near as "2 years ago"), the authors, and each reply in its comment's
    conversation."""
    from core.threads import threads_of

    tweets = _threaded_sample(600)
    cid = {i: f"Ugw{n:05d}xYz-_" for n, i in enumerate(tweets["id"])}
    rows = []
    for n, r in enumerate(tweets.itertuples()):
        own = cid[r.id] if not r.parent else f"{cid.get(r.parent, 'UgzGone' + r.parent[-6:])}.9z{n:05d}AbC"
        rows.append({"cid": own, "text": r.text, "time": "2 years ago", "author": "@" + r.author,
                     "channel": "UC" + r.author, "votes": str(n % 7), "replies": "", "photo": "https://yt3.ggpht.com/x",
                     "heart": n % 11 == 0, "reply": bool(r.parent), "time_parsed": 1614593700.0 + 60 * n})
    p = write(tmp_path, "comments.json", "\n".join(json.dumps(r, ensure_ascii=False) for r in rows))
    frame, report = load(p)
    assert frame["id"].tolist() == [r["cid"] for r in rows] and frame["text"].tolist() == tweets["text"].tolist()
    assert frame["author"].tolist() == ["@" + a for a in tweets["author"]]
    assert frame["date"].tolist() == list(pd.Timestamp("2021-03-01 10:15") + pd.to_timedelta(60 * np.arange(600), "s"))
    assert any("'2 years ago'" in n for n in report.notes), report.notes
    made, named = threads_of(frame), threads_of(tweets)
    assert made.count == named.count > 10 and all(made.mates(r).tolist() == named.mates(r).tolist() for r in range(600))
    assert any(n.startswith("conversations made from the comment ids of column 'cid'") for n in report.notes)


def test_a_reports_title_lines_before_its_header_are_passed_over(tmp_path):
    """A social-listening export (Brandwatch, Meltwater, Talkwalker) starts with its report's title lines: the header
    below them is found by its column of texts, as a CSV (semicolons, as Excel writes it in Czech) and as a
    workbook, in the import and in the form's first rows alike; the notes say which lines were passed over. A file
    whose header names no texts is not searched below it: its message stays the missing column's."""
    import xlsxwriter

    from core.ingest import read_head

    titles = [["Brandwatch Report"], ["Query: Povodně 2024"], ["Date range:", "2024-09-01 - 2024-09-30"], []]
    header = ["Query Id", "Query Name", "Date", "Title", "Url", "Author", "Full Text", "Sentiment"]
    rows = [["1", "povodne", f"2024-09-{14 + i} 10:00:00.0", "", f"https://x.com/a/status/{i}", f"@user{i}",
             f"Voda stoupá v Opavě {i}", "negative"] for i in range(5)]
    csv_path = write(tmp_path, "mentions.csv", "\r\n".join(";".join(r) for r in titles + [header] + rows) + "\r\n")
    book_path = tmp_path / "mentions.xlsx"
    book = xlsxwriter.Workbook(book_path)
    sheet = book.add_worksheet("Mentions")
    for i, row in enumerate(titles + [header] + rows):
        sheet.write_row(i, 0, row)
    book.close()
    for path in (csv_path, book_path):
        frame, report = load(path)
        assert frame["text"].tolist() == [f"Voda stoupá v Opavě {i}" for i in range(5)], path.name
        assert frame["author"].tolist()[:2] == ["@user0", "@user1"]
        assert frame["date"].iloc[0] == pd.Timestamp("2024-09-14 10:00")
        assert report.notes[0] == ("the header is row 5: the 4 before it were read as a report's title lines "
                                   "('Brandwatch Report', 'Query: Povodně 2024', "
                                   "'Date range: 2024-09-01 - 2024-09-30')")
        with open(path, "rb") as fh:
            assert read_head(fh, path.name).columns.tolist() == header
    meltwater = write(tmp_path, "meltwater.csv", "Meltwater export\n\nDate,Headline,Opening Text,Source\n"
                      "14-Sep-2024 10:00AM,Povodně,Voda stoupá v Opavě,ct24.cz\n")
    frame, _ = validate(read_table(meltwater, text="Opening Text"), "meltwater.csv", Columns(text="Opening Text"))
    assert frame["text"].tolist() == ["Voda stoupá v Opavě"]  # a texts' column of another name, named
    plain = write(tmp_path, "words.csv", "id,words\n1,text\n2,x\n")
    with pytest.raises(InputError, match=r"column 'text' \(text\) not found; the columns are: 'id', 'words'"):
        load(plain)


def test_named_optional_column_that_is_missing_is_an_error(tmp_path):
    p = write(tmp_path, "a.csv", "id,text\n1,hello\n")
    with pytest.raises(InputError, match="'published'"):
        load(p, Columns(date="published"))
    frame, _ = load(p)  # the default 'date' column is optional
    assert "date" not in frame.columns


def test_duplicate_ids_listed_or_deduped(tmp_path):
    p = write(tmp_path, "d.csv", "id,text\n1,a\n2,b\n1,c\n3,d\n2,e\n")
    with pytest.raises(InputError) as e:
        load(p)
    msg = str(e.value)
    assert "2 duplicate ids" in msg and "'1' in rows 1, 3; '2' in rows 2, 5" in msg  # each id with both its rows
    assert "--dedupe first" in msg and "Duplicate ids = first" in msg  # the way out, in the CLI and the app
    frame, report = load(p, options=Options(dedupe="first"))
    assert frame["text"].tolist() == ["a", "b", "d"] and report.duplicates_dropped == 2


def test_files_joined_one_after_another_lose_their_later_headers_not_a_text(tmp_path):
    """Three exports joined with ``cat`` hold each later file's header as a row: it was a text "text" with the id
    "id", or an unparseable date "date" that stopped the import, and two of them were a duplicate id "id"."""
    header, rows = "id,text,date,author", [f"{i},text {i},2021-03-0{i} 10:00,a{i}" for i in range(1, 7)]
    p = write(tmp_path, "joined.csv", "\n".join([header, *rows[:2], header, *rows[2:4], header.upper(), *rows[4:]]))
    frame, report = load(p)
    assert frame["id"].tolist() == [str(i) for i in range(1, 7)] and "text" not in frame["text"].tolist()
    assert frame["date"].notna().all()
    assert any("left out 2 rows that repeat the header (rows 3, 6)" in n for n in report.notes), report.notes
    frame, report = load(write(tmp_path, "twice.csv", "\n".join(["id,text", "1,a", "id,text", "2,b"])))
    assert frame["text"].tolist() == ["a", "b"]
    assert any("left out 1 row that repeats the header (row 2)" in n for n in report.notes), report.notes
    # pandas writes its index under a blank heading (,id,text): that heading repeats blank
    frame, report = load(write(tmp_path, "index.csv", ",id,text\n0,1,a\n1,2,b\n,id,text\n0,3,c\n"))
    assert frame["id"].tolist() == ["1", "2", "3"]
    assert any("left out 1 row that repeats the header (row 3)" in n for n in report.notes), report.notes
    # a text that only names its column, beside an id, stays; so does a one-column file's text "text"
    frame, report = load(write(tmp_path, "own.csv", "id,text\n1,text\n2,b\n"))
    assert frame["text"].tolist() == ["text", "b"] and not any("header" in n for n in report.notes)
    frame, _ = load(write(tmp_path, "one.csv", "text\ntext\nb\n"))
    assert frame["text"].tolist() == ["text", "b"]


def test_empty_texts_dropped_and_counted_or_kept(tmp_path):
    p = write(tmp_path, "e.csv", 'id,text\n1,a\n2,"   "\n3,\n4,b\n')
    frame, report = load(p)
    assert frame["id"].tolist() == ["1", "4"] and report.empty_dropped == 2
    frame, report = load(p, options=Options(keep_empty=True))
    assert len(frame) == 4 and report.empty_dropped == 0


def test_bad_dates_error_drop_null(tmp_path):
    p = write(tmp_path, "t.csv", "id,text,date\n1,a,2021-01-02\n2,b,yesterday\n3,c,2021-02-30\n4,d,\n")
    with pytest.raises(InputError) as e:
        load(p)
    assert "'date'" in str(e.value) and "rows 2, 3" in str(e.value) and "yesterday" in str(e.value)
    assert "--bad-dates drop" in str(e.value) and "Bad dates = drop or null" in str(e.value)  # the CLI's, the app's
    frame, report = load(p, options=Options(bad_dates="drop"))
    assert frame["id"].tolist() == ["1", "4"] and report.bad_dates_dropped == 2
    frame, report = load(p, options=Options(bad_dates="null"))
    assert len(frame) == 4 and frame["date"].isna().sum() == 3 and report.bad_dates_nulled == 2
    assert frame["date"][0] == pd.Timestamp("2021-01-02")
    # every row dropped for its date: the message says so (it read "no rows left after validation ()")
    every = write(tmp_path, "w.csv", "id,text,date\n1,a,soon\n2,b,later\n")
    with pytest.raises(InputError, match=r"w\.csv: no rows left after validation: left out 2 rows whose date in "
                                         r"column 'date' could not be read, as bad dates = drop asks"):
        load(every, options=Options(bad_dates="drop"))
    with pytest.raises(InputError, match=r"no rows left after validation: dropped 2 empty texts \(rows 1, 2\)"):
        load(write(tmp_path, "blank.csv", 'id,text\n1,"  "\n2,\n'))


def test_dates_written_day_first_are_not_read_month_first(tmp_path):
    # Czech writes 2.1.2024 for 2 January; pandas alone reads it as 1 February (and 13.1.2024 as 13 January)
    p = write(tmp_path, "cz.csv", "id,text,date\n1,a,2.1.2024 10:30\n2,b,13.1.2024\n3,c,02. 01. 2024\n"
                                  "4,d,2024-01-02T10:00:00+01:00\n")
    frame, report = load(p)
    assert frame["date"].tolist() == [pd.Timestamp("2024-01-02 10:30"), pd.Timestamp("2024-01-13"),
                                      pd.Timestamp("2024-01-02"), pd.Timestamp("2024-01-02 09:00")]
    # slashes: the column tells the order (a first number above 12 is a day) ...
    uk = write(tmp_path, "uk.csv", "id,text,date\n1,a,1/2/2024\n2,b,13/1/2024\n")
    assert load(uk)[0]["date"].tolist() == [pd.Timestamp("2024-02-01"), pd.Timestamp("2024-01-13")]
    us = write(tmp_path, "us.csv", "id,text,date\n1,a,1/2/2024\n2,b,1/13/2024\n")
    assert load(us)[0]["date"].tolist() == [pd.Timestamp("2024-01-02"), pd.Timestamp("2024-01-13")]
    # ... says when it cannot, and refuses a column holding both orders, naming rows of each
    vague = write(tmp_path, "vague.csv", "id,text,date\n1,a,1/2/2024\n2,b,3/4/2024\n")
    frame, report = load(vague)
    assert frame["date"][0] == pd.Timestamp("2024-01-02") and any("month/day/year" in n for n in report.notes)
    both = write(tmp_path, "both.csv", "id,text,date\n1,a,1/2/2024\n2,b,13/1/2024\n3,c,1/13/2024\n")
    with pytest.raises(InputError, match=r"both.csv: column 'date' mixes day/month/year dates \(rows 2, "
                                         r"e.g. '13/1/2024'\) with month/day/year ones \(rows 3"):
        load(both)


def test_non_utf8_file_names_line(tmp_path):
    p = write(tmp_path, "latin.csv", "id,text\n1,ok\n2,".encode() + "žluť".encode("cp1250") + b"\n", mode="wb")
    with pytest.raises(InputError, match=r"latin.csv: not valid UTF-8 .*line 3") as e:
        load(p)
    assert "Windows-1250" in str(e.value) and "iconv -f cp1250" in str(e.value)  # what Czech Excel writes
    q = write(tmp_path, "french.csv", "id,text\n1,".encode() + "café crème".encode("latin-1") + b"\n", mode="wb")
    with pytest.raises(InputError, match=r"french.csv: not valid UTF-8 .*line 2") as e:
        load(q)
    assert "Windows-1250" not in str(e.value)  # no Czech letters: no guess


def test_a_table_excel_saved_as_unicode_text_imports_as_it_is(tmp_path, monkeypatch):
    """Excel's "Unicode Text" is UTF-16 with tabs, saved as .txt: it was refused as an unknown type, and as a .csv
    as "not valid UTF-8". Read by its byte-order mark, either byte order, for the import and for the form's first
    rows (cut at a line's end within UTF-16's two-byte letters); UTF-16 that is broken is named as such."""
    import core.ingest as ingest
    from core.ingest import read_head

    rows = "".join(f"{i}\tŽluťoučký kůň č. {i}, \"úpěl\"\t2021-03-{i % 28 + 1:02d}\tpetr\r\n"
                   for i in range(1, 400))
    table = "id\ttext\tdate\tauthor\r\n" + rows
    txt = write(tmp_path, "export.txt", table.encode("utf-16"), mode="wb")  # little-endian, with its mark
    frame, report = load(txt)
    assert len(frame) == 399 and frame["text"].iloc[0] == 'Žluťoučký kůň č. 1, "úpěl"'
    assert frame["author"].iloc[0] == "petr" and frame["date"].iloc[1] == pd.Timestamp("2021-03-03")
    big_endian = write(tmp_path, "export.csv", b"\xfe\xff" + "id,text\n1,řeřicha\n".encode("utf-16-be"), mode="wb")
    assert load(big_endian)[0]["text"].tolist() == ["řeřicha"]
    monkeypatch.setattr(ingest, "HEAD_BYTES", 4097)  # the form reads the start only: an odd byte count on purpose
    with open(txt, "rb") as fh:
        head = read_head(fh, "export.txt")
    assert 20 < len(head) < 399 and head.equals(read_table(txt).head(len(head)))
    broken = write(tmp_path, "broken.txt", "id\ttext\n1\tok\n".encode("utf-16-le") + b"\x00\xd8\x41\x00", mode="wb")
    with pytest.raises(InputError, match=r"broken.txt: starts as UTF-16 but is not valid UTF-16") as e:
        load(write(tmp_path, "broken.txt", b"\xff\xfe" + broken.read_bytes(), mode="wb"))
    assert "line 3" in str(e.value)


def test_a_quoted_text_left_open_is_named_by_its_row_line_and_words(tmp_path):
    """pandas said "EOF inside string starting at row 3", which names neither the file's line nor the cause."""
    p = write(tmp_path, "open.csv", 'Export 2021\n\nid,text\n1,"two\nlines"\n2,ok\n3,"Přesně tak, a dál\n4,x\n5,y\n')
    with pytest.raises(InputError) as e:
        load(p)
    said = str(e.value)
    assert "open.csv: cannot be read as CSV: a quoted text opens in row 3 (line 7 of the file)" in said
    assert "'3,\"Přesně tak, a dál'" in said and 'doubled ("")' in said


def test_a_row_longer_than_the_header_is_named_and_a_separator_ending_every_line_loses_nothing(tmp_path):
    """A first row with a field more than the header made pandas read the ids as an index and every column one to the
    left: an unquoted "Hello, world" became id 'Hello' and text ' world'; a comma ending every line made every id a
    text and every text empty, dropped. Now such a row is named, and a separator ending every line is read past."""
    with pytest.raises(InputError) as e:
        load(write(tmp_path, "comma.csv", "id,text\n1,Hello, world\n2,Ahoj\n3,a, b, c\n"))
    said = str(e.value)
    assert "comma.csv" in said and "2 rows hold more fields than the header's 2" in said
    assert "row 1 (line 2 of the file, 3 fields, '1,Hello, world')" in said and "row 3 (line 4" in said
    assert 'must be in quotes ("like, this")' in said
    with pytest.raises(InputError, match=r"row 2 \(line 3 of the file, 3 fields"):  # a later row: pandas' own stop
        load(write(tmp_path, "later.csv", "id,text\n1,Ahoj\n2,Hello, world\n"))
    ended = load(write(tmp_path, "ended.csv", "id,text,date\n1,Ahoj,2021-01-01,\n2,Nazdar,2021-01-02,\n"))[0]
    assert ended["id"].tolist() == ["1", "2"] and ended["text"].tolist() == ["Ahoj", "Nazdar"]
    assert ended["date"].tolist() == [pd.Timestamp("2021-01-01"), pd.Timestamp("2021-01-02")]
    later = load(write(tmp_path, "later_end.csv", 'id,text\n1,Ahoj\n2,"Nazdar, světe",\n3,Čau\n'))[0]
    assert later["text"].tolist() == ["Ahoj", "Nazdar, světe", "Čau"], "a later row ending in one separator more"
    short = load(write(tmp_path, "short.csv", "id,text,author\n1,Ahoj\n2,Nazdar,petr\n"))[0]  # a row short is ''
    assert short["text"].tolist() == ["Ahoj", "Nazdar"] and short["author"].tolist() == ["", "petr"]


def test_a_column_named_twice_is_read_by_the_first_and_the_import_says_so(tmp_path):
    frame, report = load(write(tmp_path, "twice.csv", "id,text,date,text\n1,first,2021-01-01,second\n"))
    assert frame["text"].tolist() == ["first"]
    assert any("the header names 'text' more than once" in n and "'text.1'" in n for n in report.notes), report.notes


def test_a_csv_separated_by_semicolons_or_tabs_is_read_by_its_columns(tmp_path):
    # Excel saves "CSV" with semicolons where the comma is the decimal mark (Czech Windows among them)
    p = write(tmp_path, "excel.csv", 'id;text;date;author\n1;"Praha, Brno; Ostrava";2024-01-02;petr\n'
                                     "2;Druhý text, s čárkou;2024-01-03;jana\n")
    frame, report = load(p)
    assert frame["id"].tolist() == ["1", "2"]
    assert frame["text"].tolist() == ["Praha, Brno; Ostrava", "Druhý text, s čárkou"]
    assert frame["author"].tolist() == ["petr", "jana"] and frame["date"][1] == pd.Timestamp("2024-01-03")
    tabs = write(tmp_path, "tabs.csv", "id\ttext\n1\tone, two\n")
    assert load(tabs)[0]["text"].tolist() == ["one, two"]
    commas = write(tmp_path, "commas.csv", 'id,text\n1,"a; b"\n')  # semicolons in a text change nothing
    assert load(commas)[0]["text"].tolist() == ["a; b"]


def test_malformed_csv_and_corrupt_parquet(tmp_path):
    p = write(tmp_path, "bad.csv", 'id,text\n1,"unterminated\n2,b,c,d\n')
    with pytest.raises(InputError, match="bad.csv"):
        load(p)
    q = write(tmp_path, "bad.parquet", b"PAR1 not really parquet", mode="wb")
    with pytest.raises(InputError, match="bad.parquet: cannot be read as PARQUET"):
        load(q)
    with pytest.raises(InputError, match="unknown file type"):
        load(write(tmp_path, "x.docx", "x"))
    with pytest.raises(InputError, match="x.xlsx: cannot be read as WORKBOOK"):
        load(write(tmp_path, "x.xlsx", b"PK\x03\x04", mode="wb"))
    with pytest.raises(InputError, match="unknown file type"):
        load(write(tmp_path, "x.xlsx.gz", b"x", mode="wb"))


def test_quoted_newlines_tsv_jsonl_and_row_number_ids(tmp_path):
    p = write(tmp_path, "q.csv", 'text,author\n"line one\nline two",ann\nsecond,bob\n')
    frame, report = load(p)
    assert frame["text"][0] == "line one\nline two" and frame["id"].tolist() == ["0", "1"]
    assert report.id_source == "row number" and frame["author"].tolist() == ["ann", "bob"]
    t = write(tmp_path, "t.tsv", "id\ttext\textra\nx\thello\t42\n")
    frame, _ = load(t)
    assert frame["extra"][0] == "42"  # extra source columns are kept
    j = write(tmp_path, "j.jsonl", "\n".join(json.dumps({"id": i, "text": f"t{i}"}) for i in range(3)))
    frame, _ = load(j)
    assert frame["id"].tolist() == ["0", "1", "2"] and frame["text"][2] == "t2"


def test_missing_ids_are_reported(tmp_path):
    p = write(tmp_path, "m.csv", "id,text\n1,a\n,b\n")
    with pytest.raises(InputError, match="missing ids in rows 2"):
        load(p)


def test_wrong_parquet_types_are_refused_with_file_column_and_rows(tmp_path):
    """Cells that would silently become something else: named, never imported."""
    def parquet(name, **cols):
        p = tmp_path / name
        pd.DataFrame(cols).to_parquet(p)
        return p

    p = parquet("intdate.parquet", id=["a", "b"], text=["x", "y"], date=[20210201, 20210202])
    with pytest.raises(InputError, match=r"intdate.parquet: column 'date' \(date\) holds numbers"):
        load(p)  # numbers, but no Unix times: they would be read as instants of 1970
    p = parquet("lists.parquet", id=["a", "b", "c"], text=[["a", "b"], ["c"], ["d"]])
    with pytest.raises(InputError, match=r"lists.parquet: column 'text' \(text\) must hold text, but rows 1, 2, 3 hold a list"):
        load(p)
    p = parquet("structs.parquet", id=["a", "b"], text=[{"k": 1}, {"k": 2}])
    with pytest.raises(InputError, match=r"column 'text' \(text\) must hold text, but rows 1, 2 hold a struct"):
        load(p)
    p = parquet("binary.parquet", id=["a", "b"], text=[b"\x00\x01", b"hi"])
    with pytest.raises(InputError, match=r"binary.parquet: column 'text' \(text\) must hold text, .*binary data"):
        load(p)
    p = parquet("numtext.parquet", id=["a", "b"], text=[1, 2])
    with pytest.raises(InputError, match=r"column 'text' \(text\) holds numbers"):
        load(p)
    # what is fine: integer ids, real timestamps
    p = parquet("ok.parquet", id=[1, 2], text=["x", "y"], date=pd.to_datetime(["2021-01-01", "2021-02-01"]))
    frame, _ = load(p)
    assert frame["id"].tolist() == ["1", "2"] and frame["date"][1] == pd.Timestamp("2021-02-01")


def test_html_entities_are_unescaped_and_the_raw_text_kept(tmp_path):
    p = write(tmp_path, "e.csv", 'id,text\n1,Johnson &amp; Johnson &lt;3\n2,plain\n')
    frame, report = load(p)
    assert frame["text"].tolist() == ["Johnson & Johnson <3", "plain"]
    assert frame["text_raw"].tolist() == ["Johnson &amp; Johnson &lt;3", "plain"]
    assert any("unescaped HTML entities" in n for n in report.notes)


def test_ids_a_spreadsheet_rounded_are_not_offered_dedupe_first(tmp_path):
    # Excel shows a tweet id as 1,3449E+18 and saves it so: '--dedupe first' would throw away real texts
    p = write(tmp_path, "excel.csv", "id;text\n1,3449E+18;first\n1,3449E+18;second\n1,345E+18;third\n")
    with pytest.raises(InputError, match=r"excel.csv: column 'id' has 1 duplicate id ") as e:
        load(p)
    assert "spreadsheet rounded" in str(e.value) and "--dedupe first" not in str(e.value)
    q = write(tmp_path, "plain.csv", "id,text\n7,first\n7,second\n")
    with pytest.raises(InputError, match="--dedupe first"):
        load(q)


def test_a_corpus_time_zone_reads_dates_without_an_offset_as_its_wall_times(tmp_path):
    p = write(tmp_path, "tz.csv", "id,text,date\n1,a,2021-01-01T07:04:16Z\n2,b,2.1.2021 00:30\n"
                                  "3,c,2021-07-01 10:00:00+02:00\n4,d,2021-07-01 10:00\n5,e,2021-03-28 02:30\n"
                                  "6,f,Wed Oct 10 20:19:24 +0000 2018\n7,g,2021-01-05 10:00:00-05\n8,h,10-Oct-2021\n")
    utc, _ = load(p)
    assert utc["date"][1] == pd.Timestamp("2021-01-02 00:30") and utc["date"][3] == pd.Timestamp("2021-07-01 10:00")
    prague, _ = load(p, options=Options(timezone="Europe/Prague"))
    assert prague["date"].tolist() == [
        pd.Timestamp("2021-01-01 07:04:16"),  # an offset keeps its instant
        pd.Timestamp("2021-01-01 23:30"),  # 00:30 in Prague's winter is 23:30 UTC the day before
        pd.Timestamp("2021-07-01 08:00"),
        pd.Timestamp("2021-07-01 08:00"),  # summer time: UTC+2
        pd.Timestamp("2021-03-28 01:00"),  # a time the clocks skip moves forward (03:00 CEST)
        pd.Timestamp("2018-10-10 20:19:24"),
        pd.Timestamp("2021-01-05 15:00"),  # an offset of hours only
        pd.Timestamp("2021-10-09 22:00")]  # a date's own dashes are no offset: midnight in Prague
    with pytest.raises(InputError, match=r"tz.csv: unknown time zone 'Prague'.*did you mean Europe/Prague"):
        load(p, options=Options(timezone="Prague"))


def test_a_day_of_the_corpus_time_zone_is_what_the_date_filter_keeps():
    from core import timezones
    from core.search.keyword import _filter

    frame = pd.DataFrame({"date": pd.to_datetime(["2021-01-01 22:59", "2021-01-01 23:30", "2021-01-02 22:59",
                                                  "2021-01-02 23:00"])})
    rows = np.arange(4)
    assert _filter(rows, frame, "2021-01-02", "2021-01-02").tolist() == [2, 3]  # UTC days
    # in Prague (UTC+1) 2 January runs from 23:00 UTC on the 1st to 23:00 UTC on the 2nd
    assert _filter(rows, frame, "2021-01-02", "2021-01-02", zone="Europe/Prague").tolist() == [1, 2]
    shown = timezones.shown(frame, "Europe/Prague")["date"]
    assert shown[1] == pd.Timestamp("2021-01-02 00:30") and frame["date"][1] == pd.Timestamp("2021-01-01 23:30")
    assert timezones.shown(frame, "UTC") is frame
