"""Train a Deep Amortized Clustering model (anchored filtering with a Set Transformer) for a corpus.

    python -m precompute.dac train --corpus NAME --stage pretrain|kmeans|labels|groups
        [--model MODEL] [--from MODEL] [--clustering STEM] [--label-column label] [--held-out 0.25]
        [--epochs 10] [--steps 100] [--batch 8] [--lr 3e-4] [--bag 800] [--hidden 128] [--inducing 32]
        [--n1 2] [--n2 2] [--tied] [--anchor-pool pma|row] [--seed 0] [--device auto] [--embedding-set SET]
    python -m precompute.dac train --corpus NAME --stage pooled --pool A B ... [--label-column label]
        [--pseudo-k 10 40 150] [--mixup 0] [--prf 100] [...]
    python -m precompute.dac list --corpus NAME

Stages continue one model: ``--stage pretrain`` then ``--stage kmeans --from MODEL`` (and ``labels`` or
``groups`` where the corpus has them). ``--stage pooled`` trains a new model on many tasks at once: the
label classes of the corpora named by ``--pool`` (embedded by the same model as NAME) and K-Means
pseudo-classes of each and of NAME, which needs no labels (issue 31; bench.dac pooled measures it on
corpora it never saw). The model is written atomically to
data/NAME/dac/MODEL.pt with its card (stages, epochs, losses, validation scores per epoch). A
checkpoint is kept after every epoch under the data root's .work folder: after a kill, the same
command resumes there. Cluster with it: ``python -m precompute.cluster --corpus NAME --method dac
--param model=MODEL``; the DAC page shows what a picked model makes of an anchor or a group. A model records the corpus,
import and embedding set it was trained on (``--embedding-set``: an adapted set of the corpus, e.g. ClusterBERT's);
it is refused for another.
"""

from __future__ import annotations

import argparse
import logging
import sys

from tqdm import tqdm

from core import embedsets, paths
from core.cluster.dac import stages
from core.cluster.dac import store as models
from core.cluster.dac.model import Config
from core.corpus import load_corpus
from core.embed import pick_device
from precompute._cli import number, run_main, whole

log = logging.getLogger(__name__)


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m precompute.dac", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)
    t = sub.add_parser("train", help="train (or go on training) a model for a corpus")
    t.add_argument("--corpus", required=True)
    t.add_argument("--stage", choices=stages.STAGES + ("pooled",), required=True)
    t.add_argument("--pool", nargs="+", default=[], metavar="CORPUS",
                   help="stage pooled: labelled corpora whose classes it learns from (with --label-column)")
    t.add_argument("--pseudo-k", type=whole(2), nargs="+", default=[10, 40, 150],
                   help="stage pooled: the k of each corpus's K-Means pseudo-classes")
    t.add_argument("--mixup", type=whole(0), default=0,
                   help="stage pooled: synthetic classes mixed from pairs of each pooled corpus's training classes")
    t.add_argument("--model", default="dac", help="name of the model to write (default: dac)")
    t.add_argument("--embedding-set", default="import",
                   help="the vectors it learns: the import's or an adapted set of the corpus (a model is used "
                        "only with the set it was trained on)")
    t.add_argument("--from", dest="start", help="go on training this model (the previous stage's)")
    t.add_argument("--clustering", help="stage kmeans: the stored clustering to learn (default: the first K-Means one)")
    t.add_argument("--label-column", default="label", help="stage labels: the column holding the classes")
    t.add_argument("--held-out", type=number(0, 1, hi_open=True), default=0.25, help="share of classes kept for validation (never trained on)")
    t.add_argument("--epochs", type=whole(1), default=10)
    t.add_argument("--steps", type=whole(1), default=100, help="optimiser steps per epoch")
    t.add_argument("--batch", type=whole(1), default=8, help="bags per step")
    t.add_argument("--lr", type=number(0, 10, lo_open=True), default=3e-4)
    t.add_argument("--bag", type=whole(2), default=800, help="rows per bag")
    t.add_argument("--hidden", type=whole(1), default=128)
    t.add_argument("--heads", type=whole(1), default=4)
    t.add_argument("--inducing", type=whole(1), default=32)
    t.add_argument("--n1", type=whole(0), default=2, help="ISAB blocks before the anchor")
    t.add_argument("--n2", type=whole(0), default=2, help="ISAB blocks after the anchor")
    t.add_argument("--tied", action="store_true", help="one ISAB applied n times (the DAC authors' code)")
    t.add_argument("--anchor-pool", choices=["pma", "row"], default="pma")
    t.add_argument("--prf", type=whole(0), help="feedback rows of the PRF-centre input feature (0: off; "
                   "default 100 for stage pooled, else 0)")
    t.add_argument("--episode-share", type=number(0, 1), help="share of DAC episode bags (default 0.5 for labels, else 0)")
    t.add_argument("--seed", type=whole(0), default=0)
    t.add_argument("--device", choices=["auto", "cpu", "cuda"], default="auto")
    ls = sub.add_parser("list", help="the corpus's models with their last validation figures")
    ls.add_argument("--corpus", required=True)
    return p


def train(a: argparse.Namespace) -> int:
    models.check_model_name(a.model)
    corpus = embedsets.with_set(load_corpus(a.corpus), a.embedding_set)
    if a.stage == "pooled" and a.embedding_set != embedsets.IMPORT:
        raise SystemExit("stage pooled learns from other corpora's import vectors: give no --embedding-set")
    device = pick_device(a.device)
    start = models.load(a.corpus, a.start, device) if a.start else None
    if start is not None and (why := models.other_vectors(start, a.embedding_set)):
        raise SystemExit(f"--from {a.start}: {why}")
    prf = a.prf if a.prf is not None else (100 if a.stage == "pooled" else 0)
    config = None if start else Config(dim=corpus.dim, hidden=a.hidden, heads=a.heads, inducing=a.inducing,
                                       n1=a.n1, n2=a.n2, tied=a.tied, anchor_pool=a.anchor_pool, prf=prf)
    bar = tqdm(total=a.epochs * a.steps, desc=f"DAC {a.stage}", unit="step", file=sys.stderr)

    def progress(step: int, total: int, info: dict) -> None:
        bar.set_postfix({k: f"{v:.3f}" for k, v in info.items() if k in ("loss", "val_loss", "val_accuracy")})
        bar.update(step - bar.n)

    checkpoint = paths.work_dir(a.corpus) / f"dac-{a.model}-{a.stage}"
    try:
        if a.stage == "pooled":
            if start is not None:
                raise SystemExit("stage pooled trains a new model: give no --from")
            if not a.pool:
                raise SystemExit("stage pooled needs --pool: one or more labelled corpora to learn classes from")
            trained = stages.fit_pooled(stages.pooled_corpora(corpus, a.pool, a.label_column), config=config,
                                        seed=a.seed, bag=a.bag, pseudo_k=a.pseudo_k, mixup=a.mixup, device=device,
                                        progress=progress, checkpoint=checkpoint, epochs=a.epochs, steps=a.steps,
                                        batch=a.batch, lr=a.lr)
            trained.stages[-1].update({"corpus": corpus.name, "embedding_model": corpus.manifest.get("models"),
                                       "pool": list(a.pool), "label_column": a.label_column})
        else:
            trained = stages.train_for_corpus(
                corpus, a.stage, label_column=a.label_column, clustering=a.clustering, start=start, config=config,
                held_out=a.held_out, bag=a.bag, episode_share=a.episode_share, seed=a.seed, device=device,
                progress=progress, checkpoint=checkpoint, epochs=a.epochs, steps=a.steps, batch=a.batch, lr=a.lr)
    finally:
        bar.close()  # an error's message on a line of its own, not after the bar
    path = models.save(corpus, a.model, trained, embedding_set=a.embedding_set)
    last = trained.history[-1] if trained.history else {}
    log.info("stage %s: %d epochs in %.0f s on %s; last loss %.4f, validation accuracy %s -> %s", a.stage, a.epochs,
             trained.stages[-1]["seconds"], device, last.get("loss", float("nan")),
             f"{last['val_accuracy']:.3f}" if "val_accuracy" in last else "n/a", path)
    cal = trained.calibration
    if "cut" in cal:
        log.info("membership cut %.3f, calibrated on %d held-out classes: accuracy %.3f there (%.3f at 0.5), "
                 "average precision %.3f", cal["cut"], cal["classes"], cal["accuracy"], cal["accuracy_at_0.5"],
                 cal["average_precision"])
    else:
        log.info("no calibrated membership cut (%s): 0.5 is used", cal.get("note", "no classes held out"))
    return 0


def listing(a: argparse.Namespace) -> int:
    for m in models.listing(a.corpus):
        t = models.load(a.corpus, m.name)
        last = t.history[-1] if t.history else {}
        print(f"{m.name}\t{m.modified}\tstages {'+'.join(s['stage'] for s in t.stages)}\t"
              f"val accuracy {last.get('val_accuracy', float('nan')):.3f}")
    return 0


def main(argv: list[str] | None = None) -> int:
    a = parser().parse_args(argv)
    return train(a) if a.command == "train" else listing(a)


if __name__ == "__main__":
    sys.exit(run_main(main))
