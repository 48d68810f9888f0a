"""Cluster a corpus's embeddings with any registered method and store the result (+ key lemmas).

    python -m precompute.cluster --corpus NAME --method kmeans|dec|idec|dac|clusterbert|dec-mlm|dec-crl|sccl --k K [--k K2 ...]
        [--seed S] [--device auto] [--tag T] [--param name=value ...] [--force] [--no-terms]

Resumable: a finished clustering is skipped (``--force`` recomputes it); an iterative method keeps
a checkpoint under the data root's .work folder (K-Means every iteration, DEC/IDEC every target
refresh), so after a kill the same command goes on from there. Outputs are written atomically
to data/NAME/clusterings/<method>-k<K>[-<tag>].npz (+ .json, + .terms.parquet). DAC finds its own
number of clusters (no --k; ``--param model=MODEL`` names a model from ``precompute.dac``).
"""

from __future__ import annotations

import argparse
import ast
import logging
import sys

from tqdm import tqdm

from core import embedsets
from core.cluster import REGISTRY, store
from core.cluster.base import check_k
from core.cluster.jobs import cluster_corpus
from core.cluster.keyterms import check_options
from core.corpus import load_corpus
from core.embed import pick_device
from precompute._cli import run_main, whole

log = logging.getLogger(__name__)


def parse_param(text: str) -> tuple[str, object]:
    """``name=value``; the value is read as a Python literal (3, 0.1, (256, 64), 'k-means++')
    and kept as text when it is not one."""
    name, sep, value = text.partition("=")
    if not sep or not name.strip():
        raise argparse.ArgumentTypeError(f"{text!r}: write name=value, e.g. --param n_init=5")
    try:
        return name.strip(), ast.literal_eval(value)
    except (ValueError, SyntaxError):
        return name.strip(), value


def parser(prog: str = "python -m precompute.cluster") -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=prog, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--corpus", required=True)
    p.add_argument("--method", choices=sorted(REGISTRY), default="kmeans", type=lambda s: s.replace("-", "_"),
                   help="a registered method (dec-mlm and dec_mlm are the same)")
    p.add_argument("--k", type=int, action="append", help="number of clusters; repeat for several")
    p.add_argument("--seed", type=whole(0), default=0)
    p.add_argument("--device", choices=["auto", "cpu", "cuda"], default="auto")
    p.add_argument("--tag", help="kept in the file name, to store several runs with the same method and k")
    p.add_argument("--param", action="append", default=[], type=parse_param, metavar="NAME=VALUE",
                   help="a method parameter (see core/cluster/<method>.py DEFAULTS); repeatable")
    p.add_argument("--force", action="store_true", help="recompute clusterings that are already stored")
    p.add_argument("--no-terms", action="store_true", help="skip the key lemmas (python -m precompute.keyterms later)")
    p.add_argument("--lang", default="auto", help="language of the key lemmas (cs, en, de, ... or auto)")
    p.add_argument("--embedding-set", default="import",
                   help="the corpus's embedding set to cluster (default: the import's; see core/embedsets.py)")
    return p


def run(a: argparse.Namespace) -> int:
    method = REGISTRY[a.method]
    params = method.params(dict(a.param))  # an unknown parameter stops here, before any work
    if not a.no_terms:
        check_options(a.lang)  # a language without a dictionary, before the clustering rather than after it
    ks = a.k or ([None] if not method.needs_k else None)
    if ks is None:
        raise ValueError(f"{method.label} needs --k")
    corpus = embedsets.with_set(load_corpus(a.corpus), a.embedding_set)
    if a.tag is None:
        a.tag = store.set_tag(a.embedding_set)
    for k in [k for k in ks if k is not None]:  # all checked before any work: a bad third --k came after two fits
        try:
            check_k(k, corpus.n, method.label)
        except ValueError as exc:
            raise ValueError(f"--k {k} for corpus {a.corpus!r}: {exc}; nothing was clustered") from None
    device = pick_device(a.device)
    generation = store.generation_of(corpus)
    store.migrate_legacy(a.corpus)
    for k in ks:
        stem = store.stem_of(method.name, k, a.tag)
        if k is not None and not a.force and store.current(a.corpus, stem, generation):
            log.info("%s already done (%s); --force recomputes it", stem, store.clustering_file(a.corpus, stem))
            continue
        bar = tqdm(desc=f"{method.label} k={k}", unit="step", file=sys.stderr)

        def progress(step: int, total: int, info: dict) -> None:
            bar.total = total
            bar.set_postfix({key: (f"{v:.4g}" if isinstance(v, float) else v) for key, v in info.items()})
            bar.update(step - bar.n)

        try:
            cluster_corpus(corpus, method.name, k, seed=a.seed, device=device, params=params, tag=a.tag,
                           embedding_set=a.embedding_set, progress=progress, lang=None if a.no_terms else a.lang)
            # stopped before its planned steps (converged, or DEC keeping its k): the bar ends at 100% all the same
            if bar.total and bar.n < bar.total:
                bar.total = bar.n
                bar.set_postfix_str("stopped early", refresh=False)
        finally:
            bar.close()  # an error's message on a line of its own, not after the bar
    return 0


def main(argv: list[str] | None = None) -> int:
    return run(parser().parse_args(argv))


if __name__ == "__main__":
    sys.exit(run_main(main))
