"""The home page's import widgets: the demo corpus's offer, the form (a file uploaded or on the server, its
columns and options), and the import run with its progress bar (ui.imports holds what is not a widget)."""

from __future__ import annotations

import streamlit as st

from core import paths
from core.corpus import CorpusError, ImportSpec, import_corpus, list_corpora
from core.embed import DEFAULT_MODEL
from core.ingest import ALIASES, Columns, InputError, Options, guess_columns
from core.progress import Clock, duration
from ui import imports
from ui.text import md, quoted


def run_import(spec: ImportSpec) -> None:
    """Import with a progress bar; on success switch to the new corpus and say so after the reload."""
    bar = st.progress(0.0, text="Reading the file…")
    clocks = {"all": Clock()}  # the whole import, and each model's embedding (its pace: the time left)

    def progress(done: int, total: int, info: dict) -> None:
        if not total:  # a step that cannot be counted: its name and the time so far
            bar.progress(0.0, text=f"{md(info.get('stage', 'working').capitalize())}… "
                                   f"({duration(clocks['all'].elapsed)} so far)")
            return
        if "unit" in info:  # a counted step other than embedding (vectors brought, indexes)
            clock = clocks.setdefault(info["stage"], Clock())
            bar.progress(min(1.0, done / total), text=f"{md(info['stage'].capitalize())}: {done:,} / {total:,} "
                                                      f"{info['unit']}; {clock.line(done, total)}")
            return
        clock = clocks.setdefault(info.get("model_index", 0), Clock())
        first = info.get("resumed_from", 0)
        rate = f", {info['texts_per_s']:,.0f} texts/s" if info.get("texts_per_s") else ""
        resumed = f" (resumed: {first:,} were already embedded)" if first else ""
        models = f" [{info['model_index'] + 1}/{info['models']}]" if info.get("models", 1) > 1 else ""
        bar.progress(min(1.0, done / total), text=f"Embedding{models} with {md(info.get('model'))}: {done:,} / "
                     f"{total:,} texts{rate}; {clock.line(done - first, total - first)}{resumed}")

    told: list[str] = []  # what the import said on the way: shown now, and again after the reload

    def notify(message: str) -> None:
        told.append(message)
        st.warning(md(message, limit=600))

    try:
        done = import_corpus(spec, progress=progress, notify=notify)
    except (InputError, CorpusError, ValueError) as exc:
        bar.empty()
        st.error(md(exc, limit=1000))
        return
    notes = "; ".join(done.manifest.get("validation", {}).get("notes", []))
    notes = notes[:1].upper() + notes[1:]  # the notes follow a full stop: a sentence of their own
    warnings = done.manifest.get("warnings", [])
    warned = " ".join(warnings + [w for w in told if w not in warnings])
    imports.remember_result("warning" if warned else "success",
                            f"Imported {done.n:,} texts into corpus {quoted(done.name)} in "
                            f"{duration(clocks['all'].elapsed)}."
                            + (f" {md(notes, limit=600)}." if notes else "")
                            + (f" {md(warned, limit=600)}" if warned else ""))
    st.session_state["corpus"] = done.name
    st.query_params["corpus"] = done.name
    st.rerun()


def demo_offer(name: str | None) -> None:
    """The demo corpus, offered until it is imported (the main button where there is no corpus yet)."""
    if paths.DEMO_NAME in list_corpora() or not paths.DEMO_FILE.exists():
        return
    with st.container(border=True):
        brought = paths.DEMO_VECTORS.exists()  # computed by the packaged model when the demo was made
        st.markdown("**A first look?** Import the demo corpus: 2,400 English tweets about 16 crisis events of "
                    "2012-2013 (CrisisLex T26, MIT licence), "
                    + ("their vectors by the packaged model included (a few seconds)." if brought else
                       "embedded with the packaged model (about a minute)."))
        if st.button("Import the demo corpus", key="demo_go", type="primary" if name is None else "secondary"):
            vectors = {"vectors": paths.DEMO_VECTORS, "vectors_model": DEFAULT_MODEL} if brought else {}
            run_import(ImportSpec(input=paths.DEMO_FILE, name=paths.DEMO_NAME, label=paths.DEMO_FILE.name, **vectors))


PICK = {"id": "(row numbers)", "date": "(none)", "author": "(none)"}  # a role left without a column


def _column_pickers(head, places, file_key: str) -> tuple[str | None, str | None, str | None, str | None]:
    """The id, text, date and author columns picked from the file's own (``head``: its first rows), each offered
    as the import would find it by name (core.ingest.ALIASES); keyed by the file, so another file is guessed
    afresh."""
    guess = guess_columns(head)
    columns = list(head.columns) + [g for g in guess.values() if g and g not in head.columns]  # 'user.screen_name'
    picked = {}
    for role, place in zip(("id", "text", "date", "author"), places):
        options = ([PICK[role]] if role in PICK else []) + columns
        index = options.index(guess[role]) if guess[role] else (0 if role in PICK else None)
        value = place.selectbox(f"{role} column", options, index=index, key=f"imp_{role}_{file_key}",
                                placeholder="pick the texts' column",
                                help=f"One of the file's {len(columns)} columns. Offered first: the one named "
                                     f"{', '.join(ALIASES[role])} (in this order, any case).")
        picked[role] = None if value == PICK.get(role) else value
    return picked["id"], picked["text"], picked["date"], picked["author"]


def _sheet_picker(head, file_key: str) -> str | None:
    """The sheet of a workbook picked (None: the file is no workbook): where it has several, a select box of them,
    first the one the import would read (the first with a column of texts; core.ingest.read_workbook)."""
    sheets = head.attrs.get("sheets", []) if head is not None else []
    if len(sheets) > 1:
        st.selectbox("Sheet", sheets, index=sheets.index(head.attrs["sheet"]), key=f"imp_sheet_{file_key}",
                     help=f"The workbook's {len(sheets)} sheets. Offered first: the first whose columns hold the "
                          "texts (a column named like text, full_text, content, obsah, …).")
    return head.attrs.get("sheet") if head is not None else None


# Long (~60 lines): one form's widgets, each with its help, then the import they describe.
def draw(name: str | None) -> None:
    """The import form, open where there is no corpus yet."""
    upload_limit_mb = st.get_option("server.maxUploadSize")
    with st.expander("Import a corpus", expanded=name is None):
        source = st.radio("Source", ["Upload a file", "A file on the server"], horizontal=True, key="imp_src")
        upload = path_text = None
        if source == "Upload a file":
            upload = st.file_uploader("File", type=imports.UPLOAD_TYPES, key="imp_upload",
                                      help=f"At most {upload_limit_mb} MB (the server's maxUploadSize). Larger "
                                           "files: ask the operator to place them in an import folder.")
        else:
            path_text = st.text_input("Path on the server", key="imp_path",
                                      help="Relative to, or inside, the folders the operator allows "
                                           "(SEMANNO_IMPORT_ROOTS; by default the data folder).")
        picked = upload.name if upload else (path_text or "")
        new_name = st.text_input("Corpus name", key="imp_name",
                                 placeholder=paths.name_from_file(picked) if picked else "from the file's name")
        file_key = upload.file_id if upload else path_text
        head, unread = imports.file_head(upload, path_text, st.session_state.get(f"imp_sheet_{file_key}"))
        if unread and st.session_state.pop(f"imp_sheet_{file_key}", None) is not None:  # that sheet is gone
            head, unread = imports.file_head(upload, path_text)
        sheet = _sheet_picker(head, file_key)
        if unread:
            st.warning(f"{md(unread, limit=600)}  \nThe import will say the same unless the file is changed.")
        c1, c2, c3, c4, c5 = st.columns(5)
        if head is None:  # nothing picked yet, or unreadable: the names typed
            id_col = c1.text_input("id column ('' = row numbers)", "id", key="imp_id")
            text_col = c2.text_input("text column", "text", key="imp_text")
            date_col = c3.text_input("date column ('' = none)", "date", key="imp_date")
            author_col = c5.text_input("author column ('' = none)", "author", key="imp_author")
        else:
            id_col, text_col, date_col, author_col = _column_pickers(
                head, (c1, c2, c3, c5), f"{file_key}_{sheet}" if sheet else file_key)
        zone = c4.text_input("Time zone", "UTC", key="imp_tz",
                             help="The corpus's time zone, an IANA name such as Europe/Prague: dates written without "
                                  "an offset are its wall times, and every page shows and bins dates in it. Dates "
                                  "with an offset (2021-01-01T07:04:16Z) keep their instant.")
        models = st.text_input("Models (comma-separated)", "auto", key="imp_models",
                               help="'auto' picks by the corpus's language: 'default' (the packaged English "
                                    "all-MiniLM-L6-v2) for English, 'multilingual-e5-small' (packaged, Czech and ~100 "
                                    "languages, about half the speed) otherwise. Other sentence-transformers models: "
                                    "a folder inside the operator's model folders (SEMANNO_MODEL_ROOTS).")
        o = st.container(horizontal=True, vertical_alignment="bottom", gap="medium")  # wraps where narrow
        dim = o.number_input("PCA dimension", 2, 4096, 512, key="imp_dim", width=160)
        dedupe = o.selectbox("Duplicate ids", ["error", "first"], key="imp_dedupe", width=160)
        bad_dates = o.selectbox("Bad dates", ["error", "drop", "null"], key="imp_baddates", width=160)
        keep_empty = o.checkbox("Keep empty texts", key="imp_keep_empty")
        quotes_set = o.checkbox("Read quotes with what they quote", key="imp_quotes",
                                help="Where the file holds quotes (an API's quoted tweets), also embed the tweets "
                                     "they quote and make the embedding set quotes, which the semantic searches read "
                                     "each quote with (pick it in the Annotate page's sidebar). More time: one more "
                                     "text to embed per quote. The Annotate page offers the same later.")
        overwrite = st.checkbox("Replace an existing corpus of this name (its groups, saved or being built, are kept)",
                                key="imp_overwrite",
                                help="To add new texts, import the whole file with them: the texts the corpus already "
                                     "has keep their vectors, and only the new ones are embedded (with the same "
                                     "models).")
        if not st.button("Import", type="primary", key="imp_go", disabled=not ((upload or path_text) and text_col)):
            return
        src = None
        try:
            src = imports.save_upload(upload) if upload is not None else imports.server_file(path_text)
            run_import(ImportSpec(
                input=src, name=(new_name.strip() or paths.name_from_file(picked)), dim=int(dim),
                overwrite=overwrite, models=imports.models_from(models),
                label=picked,  # named as given, not by its server path
                sheet=sheet,  # the workbook's sheet whose columns were offered
                columns=Columns(id=id_col or None, text=text_col, date=date_col or None, author=author_col or None),
                options=Options(dedupe=dedupe, keep_empty=keep_empty, bad_dates=bad_dates, timezone=zone),
                quotes_set=quotes_set))
        except ValueError as exc:  # a path or model outside the allowed folders
            st.error(md(exc, limit=1000))
        finally:
            if upload is not None and src is not None:
                src.unlink(missing_ok=True)  # the corpus has its own copy now
