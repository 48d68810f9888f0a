"""One clustering of a corpus, fitted, stored and given its key lemmas: what ``precompute.cluster`` runs
for each k and what the Topics page's "Cluster here" form runs (two front ends, one core function,
as the ``Progress`` callback of core/embed.py)."""

from __future__ import annotations

import logging

from core import embedsets, languages, paths
from core.cluster import REGISTRY, ClusterContext, store
from core.cluster.keyterms import check_options, key_terms
from core.cluster.topics import outcome_note
from core.corpus import Corpus
from core.progress import Progress

log = logging.getLogger(__name__)


def cluster_corpus(corpus: Corpus, method_name: str, k: int | None, *, seed: int = 0, device: str = "cpu",
                   params: dict | None = None, tag: str | None = None, embedding_set: str = embedsets.IMPORT,
                   progress: Progress | None = None, lang: str | None = "auto") -> store.Stored:
    """Fit ``method_name`` on ``corpus`` (already carrying ``embedding_set``'s vectors), store the result
    atomically under the corpus and, unless ``lang`` is None, its key lemmas. An iterative method keeps its
    checkpoint under the data root's .work folder, so the same call after a kill goes on from there."""
    method = REGISTRY[method_name]
    params = method.params(params or {})  # an unknown parameter stops here, before any work
    if lang is not None:
        check_options(lang)  # and a language without a dictionary: not after the fit
    generation = store.generation_of(corpus)
    stem = store.stem_of(method.name, k, tag)
    ctx = ClusterContext(corpus.embeddings, corpus.frame["text"].tolist() if method.needs_texts else None,
                         checkpoint=paths.work_dir(corpus.name) / f"cluster-{stem}", folder=corpus.folder,
                         embedding_set=embedding_set)
    result = method.fit(ctx, k, seed=seed, device=device, progress=progress, **params)
    extra = {"embedding_set": embedding_set}
    if result.embeddings is not None:  # an adapted encoder: its embeddings become a set of the corpus
        made = embedsets.save(corpus, stem, result.embeddings, {
            "method": method.name, "base_model": params.get("model"), "params": result.params, "seed": seed,
            "device": device, "seconds": round(result.seconds, 1), "from_set": embedding_set},
            model_dir=result.model_dir)
        result.embeddings, extra["adapted_set"] = None, made.name
        log.info("adapted embeddings -> embedding set %r (%s)", made.name, made.path)
    saved = store.save(corpus.name, result, generation=generation, tag=tag, extra=extra)
    # a method that finds k itself (DAC) is stored under the k it found (dac-k12), not under ``stem`` (dac-kauto)
    log.info("%s: %.1f s, objective %s, cluster sizes %s -> %s", saved.stem, result.seconds, saved.objective,
             saved.meta["sizes"], store.clustering_file(corpus.name, saved.stem))
    note = outcome_note(saved.meta)
    if note:
        log.info("%s: %s", saved.stem, note)
    if lang is not None:
        terms(corpus, saved.stem, lang, labels=result.labels)
    return saved


def terms(corpus: Corpus, stem: str, lang: str = "auto", labels=None, **options) -> None:
    """Key lemmas of a stored clustering (``labels``: its labels when already in hand)."""
    labels = store.labels_for(corpus, stem) if labels is None else labels
    if lang == "auto":
        lang = languages.of_corpus(corpus)
    kt = key_terms(corpus.frame["text"].tolist(), labels, lang=lang, **options)
    store.save_terms(corpus.name, stem, kt.table)
    log.info("key lemmas of %d clusters (language %s) -> %s", len(kt.table), kt.lang,
             store.terms_file(corpus.name, stem))
