"""A sentence-transformer fed fast enough for a GPU: texts tokenised in threads ahead of the model.

``SentenceTransformer.encode`` tokenises a batch, runs the model, copies the vectors back to the host,
then tokenises the next: on a GPU the model waits for one Python thread (on the H200, MiniLM ran at
~4,300 texts/s where its matrix products alone would allow ~100x more; bench/RESULTS.md, issue 30).
Here a pool of threads tokenises batches ahead (each with its own copy of the fast tokenizer, whose
Rust ``encode_batch`` releases the interpreter), the model runs batch after batch without waiting for
the host, and the vectors stay on the device until the last batch.

Only models of the common shape are taken: a Hugging Face encoder, mean pooling, optionally
normalised (all-MiniLM-L6-v2 is one); ``wrap`` returns anything else unchanged.
"""

from __future__ import annotations

import os
import threading
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from typing import Sequence

import numpy as np


def default_workers() -> int:
    """Tokenising threads ahead of a GPU: all cores but one (the one feeding the model), at most 8."""
    return max(1, min(8, (os.cpu_count() or 2) - 1))


def ahead(pool, fn, items: Sequence, depth: int):
    """``fn(item)`` for each item, yielded in order, with up to ``depth`` items submitted to ``pool``
    ahead of the one being consumed (so the threads prepare the next batches while the model runs)."""
    pending: deque = deque()
    nxt = 0
    try:
        for _ in range(len(items)):
            while len(pending) < depth and nxt < len(items):
                pending.append(pool.submit(fn, items[nxt]))
                nxt += 1
            yield pending.popleft().result()
    finally:  # a consumer that stops early (an error in the model) leaves nothing queued
        for f in pending:
            f.cancel()


def _mean_pooling(pool) -> bool:
    cfg = pool.get_config_dict() if hasattr(pool, "get_config_dict") else {}
    if "pooling_mode" in cfg:  # sentence-transformers 6
        return cfg["pooling_mode"] == "mean"
    modes = [k for k, v in cfg.items() if k.startswith("pooling_mode_") and v is True]
    return modes == ["pooling_mode_mean_tokens"]


def supported(model) -> bool:
    """True for [Transformer (a fast tokenizer), mean Pooling, optional Normalize]."""
    try:
        mods = list(model)
    except TypeError:
        return False
    names = [type(m).__name__ for m in mods]
    if names not in (["Transformer", "Pooling"], ["Transformer", "Pooling", "Normalize"]):
        return False
    tok = getattr(mods[0], "tokenizer", None)
    return (getattr(tok, "backend_tokenizer", None) is not None and hasattr(mods[0], "auto_model")
            and _mean_pooling(mods[1]) and not getattr(mods[0], "do_lower_case", False))


class PipelinedEncoder:
    """``encode`` as SentenceTransformer's (the same vectors, cosine >= 0.9999: tests/test_pipelined.py),
    with ``workers`` tokenising threads ahead of the model."""

    pipelined = True

    def __init__(self, model, workers: int | None = None):
        if not supported(model):
            raise ValueError("PipelinedEncoder takes a Transformer + mean Pooling (+ Normalize) model")
        import torch

        self.st = model
        self.encoder = model[0].auto_model
        self.max_len = int(model[0].max_seq_length or 512)
        self.normalise = len(list(model)) == 3
        self.device = torch.device(model.device)
        self.workers = workers or default_workers()
        self._json = model[0].tokenizer.backend_tokenizer.to_str()
        tok = model[0].tokenizer
        self._pad = (tok.pad_token_id if tok.pad_token_id is not None else 0, tok.pad_token or "[PAD]")
        self._local = threading.local()
        self._pool = ThreadPoolExecutor(self.workers, thread_name_prefix="tokenise")

    def get_sentence_embedding_dimension(self) -> int:
        get = getattr(self.st, "get_embedding_dimension", None) or self.st.get_sentence_embedding_dimension
        return int(get())

    def _tokenizer(self):
        tok = getattr(self._local, "tok", None)
        if tok is None:  # one per thread: a shared one is mutated by its padding/truncation settings
            from tokenizers import Tokenizer

            tok = Tokenizer.from_str(self._json)
            tok.enable_truncation(max_length=self.max_len)
            tok.enable_padding(pad_id=self._pad[0], pad_token=self._pad[1])
            self._local.tok = tok
        return tok

    def _tokenise(self, texts: list[str]):
        import torch

        tok = self._tokenizer()
        encode = getattr(tok, "encode_batch_fast", tok.encode_batch)  # _fast: no character offsets
        enc = encode([t.strip() for t in texts])
        ids = torch.from_numpy(np.array([e.ids for e in enc], dtype=np.int64))
        mask = torch.from_numpy(np.array([e.attention_mask for e in enc], dtype=np.int64))
        tensors = [ids, mask, torch.zeros_like(ids)]  # one text, not a pair: every token of type 0
        if self.device.type == "cuda":
            tensors = [t.pin_memory() for t in tensors]
        return tensors

    def encode(self, texts: Sequence[str], batch_size: int = 256, convert_to_numpy: bool = True,
               show_progress_bar: bool = False, normalize_embeddings: bool = False) -> np.ndarray:
        import torch

        texts = list(texts)
        dim = self.get_sentence_embedding_dimension()
        if not texts:
            return np.zeros((0, dim), np.float32)
        order = np.argsort([-len(t) for t in texts], kind="stable")  # similar lengths together: little padding
        batches = [order[s:s + batch_size] for s in range(0, len(order), batch_size)]
        out = torch.empty((len(texts), dim), dtype=torch.float32, device=self.device)
        nb = self.device.type == "cuda"
        inputs = ahead(self._pool, lambda rows: self._tokenise([texts[r] for r in rows]), batches, 2 * self.workers)
        with torch.inference_mode():
            for rows, tensors in zip(batches, inputs):
                ids, mask, types = (t.to(self.device, non_blocking=nb) for t in tensors)
                hidden = self.encoder(input_ids=ids, attention_mask=mask, token_type_ids=types).last_hidden_state
                m = mask.unsqueeze(-1).to(torch.float32)
                pooled = (hidden.to(torch.float32) * m).sum(1) / m.sum(1).clamp(min=1e-9)
                if self.normalise or normalize_embeddings:
                    pooled = torch.nn.functional.normalize(pooled, dim=1)
                out[torch.from_numpy(rows).to(self.device, non_blocking=nb)] = pooled
        return out.cpu().numpy()

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)


def wrap(model, workers: int | None = None):
    """The model behind a PipelinedEncoder where it runs on CUDA and has the common shape; else itself."""
    try:
        on_cuda = str(getattr(model, "device", "cpu")).startswith("cuda")
    except Exception:  # noqa: BLE001 - a model without a device is not a SentenceTransformer
        on_cuda = False
    return PipelinedEncoder(model, workers) if on_cuda and supported(model) else model
