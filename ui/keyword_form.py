"""The Annotate page's keyword form: the query, regular expression, case and diacritics, dates, how many
hits come in, authors; and the request it makes of the keyword search."""

from __future__ import annotations

import streamlit as st

from core import annotate, languages, wordforms
from core.corpus import Corpus
from core.ingest import QUOTED
from ui import picker, resources


def request(corpus: Corpus) -> tuple[int | None, dict]:
    """(how many hits to add: None for all, the keyword search's parameters) from the form's widgets."""
    g = st.session_state.get
    dates = g("kw_dates") or ()
    lang = wordforms.language_of(corpus)
    return int(g("kw_limit") or 0) or None, dict(
        query=g("kw_query", ""), is_regex=g("kw_regex", False), case_insensitive=not g("kw_case", False),
        diacritics_insensitive=not g("kw_diacritics", False), date_from=dates[0] if len(dates) > 0 else None,
        date_to=dates[1] if len(dates) > 1 else None, authors=g("kw_authors") or None,
        word_forms=lang if lang and g("kw_forms", True) else None,
        **({"quotes": bool(g("kw_quotes", True))} if has_quotes(corpus) else {}))


QUOTES_HELP = ("A quote is also a hit where the tweet it quotes matches: its own words are often only ‘Přesně tak.’ "
               "or ‘This.’, and it is about what it quotes (shown under it on the Annotate page, ❝).")


def has_quotes(corpus: Corpus) -> bool:
    """Whether the corpus holds what its quotes quote (core.ingest.QUOTED): then the form offers to search it."""
    return QUOTED in corpus.frame.columns


def forms_help(lang: str) -> str:
    """What the Every form box does, for the corpus language ``lang``."""
    example = " (Czech: ‘volby’ finds ‘voleb’, ‘volbách’ and ‘volbám’ too)" if lang == "cs" else ""
    return (f"Each word typed is also found in its other forms, as whole words{example}: the forms of its lemma in "
            f"the {languages.NAMES.get(lang, lang)} dictionary (simplemma's, from Wiktionary) that begin with the "
            "same three letters, and for a word it lists with few forms those its like words lend. The word as typed "
            "is still found anywhere in a text, so a stem finds every word that holds it"
            + (" (‘vakcín’: vakcína, vakcínu, vakcínami, vakcínový)" if lang == "cs" else "")
            + ". In a phrase each word takes its forms that the corpus holds"
            + (" (‘státní rozpočet’ finds ‘státního rozpočtu’, and ‘Andrej Babiš’ ‘Andreje Babiše’: a name takes the "
               "forms its endings make)" if lang == "cs" else "") + ". Not for regular expressions.")


REGEX_HELP = ("The `regex` package's syntax, tried on each text: `vacc\\w+`, `\\b(babiš|fiala)\\b`, `^RT` (a text's "
              "start). Words in any order: `(?=.*babiš)(?=.*očkování)`; one left out: `(?=.*babiš)(?!.*očkování)`. "
              "Spelling slips: `(?:hillary){e<=1}` finds a word with one letter added, dropped or changed (hilary, "
              "hillery); `{s<=1}` changed only, `{e<=2}` two.")


def draw(name: str, corpus: Corpus, on_submit) -> None:
    """The form; ``on_submit`` runs the search (Enter in the box, or the button)."""
    with st.form("kw_form", border=True):
        q = st.container(horizontal=True, vertical_alignment="bottom")
        example = resources.keyword_example(name)  # from this corpus's own words (a Czech example misled on English)
        # the example is an alternation: say it is one (typed as it stands, without the box ticked, it found nothing)
        hint = (f"e.g. {example.split('|')[0]}, or {example} as a regular expression" if "|" in example else
                f"e.g. {example}") if example else None
        # every box of the form comes back as it was left after a visit to another page (picker.kept): a search
        # limited to some authors or dates went on unlimited after a look at the Timeline
        picker.kept(q.text_input, "Keyword or regular expression", key="kw_query", placeholder=hint,
                    label_visibility="collapsed")
        q.form_submit_button("Search (KW)", on_click=on_submit, type="primary", width="content")
        # a row that wraps in a narrow window (in columns the options' names were cut to "Regu…", "M…")
        with st.container(horizontal=True, vertical_alignment="bottom", gap="medium"):
            picker.kept(st.checkbox, "Regular expression", key="kw_regex", help=REGEX_HELP)
            picker.kept(st.checkbox, "Match case", key="kw_case")
            picker.kept(st.checkbox, "Match diacritics", key="kw_diacritics")
            if lang := wordforms.language_of(corpus):
                resources.warm_word_forms(lang)
                picker.kept(st.checkbox, "Every form", value=True, key="kw_forms",
                            help=forms_help(lang) + " The search's message names the forms that found texts.")
            if has_quotes(corpus):
                picker.kept(st.checkbox, "Quoted tweets too", value=True, key="kw_quotes",
                            help=QUOTES_HELP + " The search's message says how many only the quoted tweet found.")
            if corpus.has_dates:
                lo, hi = resources.date_range(name)
                picker.kept(st.date_input, "Dates", value=(lo, hi), min_value=lo, max_value=hi, key="kw_dates",
                            width=240, valid=lambda v: all(lo <= d <= hi for d in v))
        row = st.container(horizontal=True, vertical_alignment="bottom", horizontal_alignment="right")
        if corpus.has_authors:
            with row:
                _authors(name)
        picker.kept(
            row.number_input, "Add at most (0 = all)", 0, None, annotate.KEYWORD_PAGE, step=10, key="kw_limit",
            width=170,
            help="Hits are added a page at a time, the most typical first (closest to the centre of all hits): review "
                 "them, then take More hits while most are on topic, or Suggest once most are not. Measured: this "
                 "finds more per text reviewed than adding every hit (bench/RESULTS.md, issue 17). 0 adds all hits at "
                 "once.")


AUTHOR_OPTIONS = 2_000  # more options than this: the most prolific listed, any other typed (see _authors)


def _authors(name: str) -> None:
    """The author filter. A list of every author broke the browser's multiselect at 10M tweets (500,000
    authors: "Maximum call stack size exceeded" in place of the form); above ``AUTHOR_OPTIONS`` it lists
    the most prolific and takes any other author typed in, checked against the corpus's authors."""
    every = resources.authors(name)
    if len(every) <= AUTHOR_OPTIONS:
        picker.kept(st.multiselect, "Authors (none = all)", every, key="kw_authors",
                    valid=lambda v: all(_is_in(every, a) for a in v))
        return
    picker.kept(
        st.multiselect, "Authors (none = all)", resources.top_authors(name, AUTHOR_OPTIONS), key="kw_authors",
        accept_new_options=True,
        help=f"This corpus has {len(every):,} authors: the {AUTHOR_OPTIONS:,} with the most texts are listed; type "
             "any other author's name and press Enter.")
    unknown = [a for a in st.session_state.get("kw_authors") or [] if not _is_in(every, a)]
    if unknown:
        st.warning("Not an author of this corpus (no text will match): "
                   + ", ".join("`" + str(a).replace("`", "'") + "`" for a in unknown[:5]))


def _is_in(sorted_names: list[str], name: str) -> bool:
    from bisect import bisect_left

    i = bisect_left(sorted_names, name)
    return i < len(sorted_names) and sorted_names[i] == name
