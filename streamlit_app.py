"""Semantic Annotator: home page. Choose a corpus, see its summary, import a new one (or the demo)."""

from __future__ import annotations

import streamlit as st

from core import languages, paths
from core.embed import display_name
from core.progress import Clock, duration
from core.corpus import CorpusError, ImportSpec, import_corpus, list_corpora, summary
from core.ingest import Columns, InputError, Options
from ui import access, drafts, imports, navigation, picker, resources
from ui.text import md, quoted

st.set_page_config(page_title="Semantic Annotator", page_icon="🔎", layout="wide")
access.gate()
nav = st.sidebar.empty()  # the links first (a stop below keeps them), drawn again at the end in place: they
navigation.navigation(nav.container())  # then carry the corpus and this tab's draft
st.title("Semantic Annotator")
st.caption("Find every text on a topic: keyword searches, then semantic searches that learn from "
           "what you include and exclude.")

name = picker.pick_corpus()
imports.show_result()
upload_limit_mb = st.get_option("server.maxUploadSize")

if name is None:
    st.info("There is no corpus yet. Import a CSV, TSV, Parquet or JSONL file of texts below "
            "(columns `id`, `text`, and optionally `date`, `author`), or from a terminal:\n\n"
            "`python -m precompute.embed tweets.csv --name tweets`")
else:
    try:
        c = resources.corpus(name)
        info = summary(c)
    except CorpusError as exc:
        st.error(md(exc))
    else:
        navigation.database_or_stop(name)
        drafts.keep_draft(name, c)
        st.subheader(f"Corpus: {md(name)}")
        cols = st.columns(5)
        cols[0].metric("Texts", f"{info['rows']:,}")
        cols[1].metric("Dimensions", info["dim"])
        cols[2].metric("Authors", f"{info.get('authors', 0):,}")
        if "date_min" in info:  # two metrics: one date range does not fit a metric's width
            cols[3].metric("First date", f"{info['date_min']:%Y-%m-%d}")
            cols[4].metric("Last date", f"{info['date_max']:%Y-%m-%d}")
        st.text("Models: " + ", ".join(display_name(m) for m in info["models"])
                + (f"; dates shown in {c.timezone} time" if c.has_dates else ""))
        if c.manifest.get("languages"):
            st.text("Languages (share of a sample): " + ", ".join(
                f"{languages.NAMES.get(lang, lang)} {share:.0%}" for lang, share in c.manifest["languages"].items()))
        for warning in c.manifest.get("warnings", []):
            st.warning(md(warning, limit=600))
        if "top_authors" in info:
            with st.expander("Top authors"):
                st.dataframe(info["top_authors"].rename("texts"), width="stretch")
        for page, _, icon, description in navigation.PAGES[1:]:
            st.page_link(page, label=description, icon=icon, query_params=navigation.link_params() or None)



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

    try:
        done = import_corpus(spec, progress=progress, notify=lambda w: st.warning(md(w, limit=600)))
    except (InputError, CorpusError, ValueError) as exc:
        bar.empty()
        st.error(md(exc, limit=1000))
        return
    notes = "; ".join(done.manifest.get("validation", {}).get("notes", []))
    notes = notes[:1].upper() + notes[1:]  # the notes follow a full stop: a sentence of their own
    warned = " ".join(done.manifest.get("warnings", []))
    imports.remember_result("warning" if warned else "success",
                            f"Imported {done.n:,} texts into corpus {quoted(done.name)} in "
                            f"{duration(clocks['all'].elapsed)}."
                            + (f" {md(notes, limit=600)}." if notes else "") + (f" {md(warned, limit=600)}" if warned else ""))
    st.session_state["corpus"] = done.name
    st.query_params["corpus"] = done.name
    st.rerun()


if paths.DEMO_NAME not in list_corpora() and paths.DEMO_FILE.exists():
    with st.container(border=True):
        st.markdown("**A first look?** Import the demo corpus: 2,400 English tweets about 16 crisis events of "
                    "2012-2013 (CrisisLex T26, MIT licence), embedded with the packaged model (about a minute).")
        if st.button("Import the demo corpus", key="demo_go", type="primary" if name is None else "secondary"):
            run_import(ImportSpec(input=paths.DEMO_FILE, name=paths.DEMO_NAME, label=paths.DEMO_FILE.name))

st.divider()
with st.expander("Import a corpus", expanded=name is None):
    source = st.radio("Source", ["Upload a file", "A file on the server"], horizontal=True, key="imp_src")
    upload = path_text = None
    if source == "Upload a file":
        upload = st.file_uploader("File", type=imports.UPLOAD_TYPES, key="imp_upload",
                                  help=f"At most {upload_limit_mb} MB (the server's maxUploadSize). Larger files: "
                                       "ask the operator to place them in an import folder.")
    else:
        path_text = st.text_input("Path on the server", key="imp_path",
                                  help="Relative to, or inside, the folders the operator allows "
                                       "(SEMANNO_IMPORT_ROOTS; by default the data folder).")
    picked = upload.name if upload else (path_text or "")
    new_name = st.text_input("Corpus name", key="imp_name",
                             placeholder=paths.name_from_file(picked) if picked else "from the file's name")
    c1, c2, c3, c4, c5 = st.columns(5)
    id_col = c1.text_input("id column ('' = row numbers)", "id", key="imp_id")
    text_col = c2.text_input("text column", "text", key="imp_text")
    date_col = c3.text_input("date column ('' = none)", "date", key="imp_date")
    zone = c4.text_input("Time zone", "UTC", key="imp_tz",
                         help="The corpus's time zone, an IANA name such as Europe/Prague: dates written without an "
                              "offset are its wall times, and every page shows and bins dates in it. Dates with an "
                              "offset (2021-01-01T07:04:16Z) keep their instant.")
    author_col = c5.text_input("author column ('' = none)", "author", key="imp_author")
    models = st.text_input("Models (comma-separated)", "auto", key="imp_models",
                           help="'auto' picks by the corpus's language: 'default' (the packaged English "
                                "all-MiniLM-L6-v2) for English, 'multilingual-e5-small' (packaged, Czech and ~100 "
                                "languages, about half the speed) otherwise. Other sentence-transformers models: "
                                "a folder inside the operator's model folders (SEMANNO_MODEL_ROOTS).")
    o1, o2, o3, o4 = st.columns(4)
    dim = o1.number_input("PCA dimension", 2, 4096, 512, key="imp_dim")
    dedupe = o2.selectbox("Duplicate ids", ["error", "first"], key="imp_dedupe")
    bad_dates = o3.selectbox("Bad dates", ["error", "drop", "null"], key="imp_baddates")
    keep_empty = o4.checkbox("Keep empty texts", key="imp_keep_empty")
    overwrite = st.checkbox("Replace an existing corpus of this name (its saved groups are kept)", key="imp_overwrite")
    if st.button("Import", type="primary", key="imp_go", disabled=not (upload or path_text)):
        src = None
        try:
            src = imports.save_upload(upload) if upload is not None else imports.server_file(path_text)
            run_import(ImportSpec(
                input=src, name=(new_name.strip() or paths.name_from_file(picked)), dim=int(dim),
                overwrite=overwrite, models=imports.models_from(models), label=picked,  # named as given, not by server path
                columns=Columns(id=id_col or None, text=text_col, date=date_col or None, author=author_col or None),
                options=Options(dedupe=dedupe, keep_empty=keep_empty, bad_dates=bad_dates, timezone=zone)))
        except ValueError as exc:  # a path or model outside the allowed folders
            st.error(md(exc, limit=1000))
        finally:
            if upload is not None and src is not None:
                src.unlink(missing_ok=True)  # the corpus has its own copy now

navigation.navigation(nav.container())
