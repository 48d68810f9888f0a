"""A simulated annotator: how much of a topic does each method find per text reviewed?

    python -m bench.annotator --data ../shared/data/stackoverflow.csv --label-column label
        [--classes A B ...] [--methods cos,lda,nn1,nn2,suggest] [--budget 2.0] [--seed-query auto|TEXT]
        [--seed-hits 100] [--param KEY=VALUE ...] [--out bench/out]

For each class (one class = one topic) the annotator starts with a keyword search (the class's
``label_name`` when the data has one, else its top c-TF-IDF lemma; if that finds no member, the
next lemmas, up to three tries) and reviews its hits (ordered by similarity to the hits' centre, as
the page shows them), labelling each truthfully: by default a page of 10 at a time until a page is
mostly off topic or ``--seed-hits`` are reviewed; then it asks one method for the next 10 and
labels those, going back to the keyword's next page whenever a semantic page found less on topic
than the keyword's last page (``--keyword-policy alternate``, the page's More hits button; ``adaptive``
never goes back; ``fixed``, used for figures before issue 17, reviews the first ``--seed-hits`` at
once), until it has reviewed ``budget x class size`` texts. A method whose
preconditions are not met yet (nothing excluded) is replaced by COS for that step. It calls the
page's own functions (core.annotate.ask, core.session.Session), nothing re-implemented.

Recall at a mark (1x, 1.5x, 2x the class size) is measured text by text, in the order the annotator
reviewed them: the members among the first ``mark x size`` texts reviewed, so a page that crosses
the mark counts up to it, and recall at a mark does not depend on ``--budget`` (issue 33; figures
before it counted whole pages only and undercounted small classes). A mark beyond the budget is
left out of the lines.

Prints one JSON object per dataset, class and method; writes a PNG of macro recall against texts
reviewed (in units of the class size) per method, and a JSON summary, under --out.

The logic lives in testbed/annotator.py (shared with the tests); this is the command line."""

from __future__ import annotations
import sys
import argparse
import json
import os
from pathlib import Path
import numpy as np
from testbed.common import emit, run_folder
from core import wordforms
from core.corpus import load_corpus
from core.search import REGISTRY, SearchContext
from core.threads import threads_of
from core.copies import Copies, codes_of
from core.ingest import QUOTED
from core.quoted import words_read
from core.search.index import VectorIndex
from core.search.keyword import KeywordIndex
from core.search.lexical import WordIndex
from precompute._cli import quiet_logging

from testbed.annotator import MARKS, REVIEWED_FOR, band, class_queries, corpus_for, plot, recalls, simulate


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data", type=Path, required=True)
    p.add_argument("--corpus", help="a corpus already imported from --data (e.g. with another model); "
                                    "default: the one imported from it, importing it with the model the app picks "
                                    "for its language ('auto': MiniLM for English, multilingual-e5-small for Czech)")
    p.add_argument("--label-column", default="label")
    p.add_argument("--classes", nargs="*", default=None)
    p.add_argument("--methods", default="cos,lda,nn1,nn2,suggest")
    p.add_argument("--budget", type=float, default=2.0)
    p.add_argument("--seed-query", default="auto")
    p.add_argument("--seed-hits", type=int, default=100, help="keyword hits the annotator reviews first")
    p.add_argument("--param", action="append", default=[], metavar="KEY=VALUE",
                   help="a parameter of the method under test, e.g. --param alpha=1 --param c=4 (suggest)")
    p.add_argument("--out", type=Path, default=Path("bench/out"))
    p.add_argument("--keyword-policy", choices=["fixed", "adaptive", "alternate"], default="alternate",
                   help="alternate (the default since issue 17's second session): a page of 10 keyword hits at a time "
                        "until a page is mostly excluded (core.annotate.KeywordReview), then semantic steps, going back "
                        "to the keyword's next page whenever a semantic page found less than the keyword's last page; "
                        "adaptive: the same without going back; fixed (figures before issue 17): the first --seed-hits "
                        "at once")
    p.add_argument("--keyword-stop-share", type=float, default=0.5,
                   help="adaptive: stop reviewing keyword hits at the first page with more than this share excluded")
    p.add_argument("--shrink", type=int, nargs="*", default=[],
                   help="small topics: each class in turn cut to these many members (random, --shrink-seed) "
                        "inside the full background of the other classes")
    p.add_argument("--shrink-seed", type=int, default=0)
    p.add_argument("--embedding-set", default="import",
                   help="the corpus's embedding set to search (an adapted one, core/embedsets.py)")
    p.add_argument("--context-seed", type=int, default=0,
                   help="the search context's seed (Suggest's background sample; 0 as the app): other values "
                        "show how much a figure moves with the protocol's one random choice")
    p.add_argument("--dac-model", help="for the dac method: a model trained for the corpus (its name under "
                                       "data/NAME/dac/, or a .pt file)")
    p.add_argument("--copies", choices=["on", "off"], default="on",
                   help="on (as the Annotate page, core/copies.py): a text's copies (the same words with other links) "
                        "take its label and a search's places go to distinct texts; off: every text stands alone "
                        "(the figures before copies were known)")
    p.add_argument("--trace", action="store_true",
                   help="also write traces.jsonl into the run folder: each run's texts in review order (1 = on topic) "
                        "and its steps' ends, for bench/stopping.py")
    p.add_argument("--stop", type=int, default=None, metavar="N",
                   help="stop at the Annotate page's stopping signal (core.annotate.recent_yield), after trying up "
                        "to N keywords that testbed.annotator.keyword_ideas proposes (0: at the first signal); each "
                        "line then gives recall and texts reviewed at every signal")
    p.add_argument("--bring-clustering", metavar="NAME",
                   help="with --stop N: at each of the first N signals, bring in the rest of the clusters of this "
                        "stored clustering of the corpus (e.g. kmeans-k100) that the group holds at least "
                        "--bring-share of, instead of a keyword idea (the Topics page's Bring)")
    p.add_argument("--bring-share", type=float, default=0.5)
    p.add_argument("--word-lemmas", metavar="LANG", default="auto",
                   help="Suggest's word features count a word's forms as one word, its lemma's, in that language's "
                        "dictionary; 'auto' (default, as the app): the corpus's main language where it has one; "
                        "'none': every form a word of its own (figures before 2026-11-30)")
    p.add_argument("--no-unlisted", dest="unlisted", action="store_false",
                   help="with word lemmas: the forms of a word the dictionary does not list stay words of their own "
                        "(figures before 2026-12-01); by default, as the app, they are joined "
                        "(core.wordforms.unlisted_forms)")
    p.add_argument("--quoted-words", choices=["on", "off"], default="on",
                   help="Suggest's words of a quote: its own with what it quotes (default, as the app: "
                        "core.quoted.words_read) or its own only ('off': figures before 2026-12-03's second session)")
    p.add_argument("--word-forms", metavar="LANG", default=None,
                   help="keywords find every form of their words in LANG's dictionary, as the Annotate page's Every "
                        "form (ticked there by default); without it, the word as typed")
    a = p.parse_args(argv)
    if a.bring_clustering and not a.stop:
        p.error("--bring-clustering needs --stop N (N >= 1): it acts at the stopping signal")
    if a.bring_clustering and a.shrink:
        p.error("--bring-clustering labels the whole corpus's rows: it cannot be used with --shrink")
    folder = run_folder("annotator", sys.argv if argv is None else ["bench/annotator.py", *argv])
    quiet_logging()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    corpus = load_corpus(a.corpus) if a.corpus else corpus_for(a.data, a.label_column)
    if a.embedding_set != "import":
        from core import embedsets

        corpus = embedsets.with_set(corpus, a.embedding_set)
    if a.label_column not in corpus.frame.columns:
        raise SystemExit(f"{a.data}: no column {a.label_column!r}")
    texts = corpus.frame["text"].tolist()
    dac_model = None
    if a.dac_model:  # a model name under the corpus's dac/ folder, or a .pt path
        from core.cluster.dac import train as dac_train

        from core.cluster.dac.store import existing_file

        path = Path(a.dac_model) if a.dac_model.endswith(".pt") else existing_file(corpus.name, a.dac_model,
                                                                                        corpus.folder.parent)
        dac_model = dac_train.load(path)
    quoted = corpus.frame.get(QUOTED)  # a quote is a copy only of a text quoting the same (core/copies.py)
    def copies_of(texts, quotes=quoted):
        return Copies(codes_of(texts, quotes)) if a.copies == "on" else None
    if a.word_lemmas == "auto":
        a.word_lemmas = wordforms.language_of(corpus)
    elif a.word_lemmas == "none":
        a.word_lemmas = None
    elif not wordforms.supported(a.word_lemmas):
        p.error(f"--word-lemmas {a.word_lemmas}: no dictionary of that language (simplemma's); 'none' or 'auto'")
    def word_index(texts, quotes=quoted):
        read = words_read(texts, quotes) if a.quoted_words == "on" else texts
        return WordIndex(read, lang=a.word_lemmas, unlisted=a.unlisted)
    words = word_index(texts)
    ctx = SearchContext(VectorIndex(corpus.embeddings), KeywordIndex(texts), corpus.frame, timezone=corpus.timezone,
                        word_index=words, dac=dac_model, seed=a.context_seed, copies=copies_of(texts),
                        threads=threads_of(corpus.frame))
    labels = corpus.frame[a.label_column].astype(str).to_numpy()
    classes = a.classes or sorted(set(labels) - {""})  # an empty label: background, not a topic
    queries = class_queries(corpus, a.label_column, classes, a.seed_query)
    methods = [m.strip() for m in a.methods.split(",") if m.strip()]
    from precompute.cluster import parse_param

    try:
        params = dict(parse_param(kv) for kv in a.param)  # 3 stays a whole number, 0.5 a number
        for name in methods:
            REGISTRY[name].params({k: v for k, v in params.items() if k in REGISTRY[name].defaults})
    except ValueError as exc:
        raise SystemExit(f"--param: {exc}")
    ideas = bring = None
    if a.bring_clustering:
        from core.cluster import store as cluster_store

        bring = (np.asarray(cluster_store.labels_for(corpus, a.bring_clustering)), a.bring_share)
    elif a.stop:  # keyword ideas from the corpus's words, less function words (English's and the corpus language's)
        from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

        from core.cluster.keyterms import function_words
        from core.languages import main_language
        from core.search.keyword import fold
        from testbed.annotator import WordStats, keyword_ideas

        lang = main_language(corpus.manifest.get("languages") or {})
        stop_words = {fold(w) for w in ENGLISH_STOP_WORDS | function_words(lang, lambda w: w)}
        stats = WordStats(texts, stop_words=stop_words)

        def ideas(session, searched):
            return keyword_ideas(texts, session.included, stats, searched)
    runs = []
    rng = np.random.default_rng(a.shrink_seed)
    for cls in classes:
        all_members = np.flatnonzero(labels == cls)
        for size in a.shrink or [None]:
            if size is None or size >= len(all_members):
                sub_ctx, members = ctx, all_members
            else:  # the class cut to `size` members; every other row stays
                keep = np.sort(np.concatenate([np.flatnonzero(labels != cls),
                                               rng.choice(all_members, size, replace=False)]))
                sub_texts = [texts[i] for i in keep]
                sub_frame = corpus.frame.iloc[keep].reset_index(drop=True)
                sub_ctx = SearchContext(VectorIndex(np.asarray(corpus.embeddings)[keep]), KeywordIndex(sub_texts),
                                        sub_frame, timezone=corpus.timezone, threads=threads_of(sub_frame),
                                        word_index=word_index(sub_texts, None if quoted is None else quoted.iloc[keep]),
                                        dac=dac_model,
                                        seed=a.context_seed,
                                        copies=copies_of(sub_texts, None if quoted is None else quoted.iloc[keep]))
                members = np.flatnonzero(labels[keep] == cls)
            for method in methods:
                r = simulate(sub_ctx, members, method, queries[cls], a.budget, a.seed_hits, cls, params,
                             a.keyword_policy, a.keyword_stop_share, stop=a.stop, ideas=ideas, bring=bring,
                             word_forms=a.word_forms)
                runs.append(r)
                if a.trace:
                    with open(Path(folder) / "traces.jsonl", "a") as f:
                        f.write(json.dumps({"dataset": a.data.stem, "cls": cls, "method": method, "size": r.size,
                                            "shrunk": size is not None and size < len(all_members),
                                            "texts": "".join("1" if t else "0" for t in r.texts),
                                            "steps": [n for n, _ in r.curve], "stops": r.stops,
                                            "queries": r.seed_query}) + "\n")
                emit(dataset=a.data.stem, cls=cls, method=method, size=r.size, seed_query=r.seed_query,
                     keyword_policy=a.keyword_policy, word_forms=a.word_forms, word_lemmas=a.word_lemmas,
                     unlisted=a.unlisted,
                     band=band(r.size),
                     **{f"recall@{m}x": round(r.recall_at(m), 4) for m in MARKS if m <= a.budget},
                     **{f"reviewed_for_{v:g}": r.reviewed_for(v) for v in REVIEWED_FOR},
                     reviewed=r.reviewed, recall_measured="per_text",
                     precision=round(r.true_included / max(r.included, 1), 4),
                     mean_step_s=round(float(np.mean(r.step_seconds)) if r.step_seconds else 0.0, 4),
                     **({"stops": [[n, round(f / r.size, 4)] for n, f in r.stops],
                         "final": [r.reviewed, round(sum(r.texts) / r.size, 4)]} if a.stop is not None else {}))
    summary = {"dataset": a.data.stem, "classes": len(classes), "budget": a.budget,
               "keyword_policy": a.keyword_policy, "keyword_stop_share": a.keyword_stop_share, "shrink": a.shrink,
               "copies": a.copies, "word_forms": a.word_forms, "word_lemmas": a.word_lemmas, "unlisted": a.unlisted,
               "methods": {}, "bands": {}}
    for method in methods:
        mr = [r for r in runs if r.method == method]
        summary["methods"][method] = {
            **recalls(mr, a.budget),
            "mean_step_s": round(float(np.mean([s for r in mr for s in r.step_seconds] or [0])), 4)}
        for b in sorted({band(r.size) for r in mr}):
            br = [r for r in mr if band(r.size) == b]
            summary["bands"].setdefault(b, {})[method] = {"runs": len(br), **recalls(br, a.budget)}
    a.out.mkdir(parents=True, exist_ok=True)
    stem = corpus.name if a.corpus else a.data.stem
    (a.out / f"annotator_{stem}.json").write_text(json.dumps(summary, indent=2))
    plot(runs, f"{stem}: simulated annotator", a.out / f"annotator_{stem}.png", a.budget)
    emit(summary=summary)


if __name__ == "__main__":
    main()
