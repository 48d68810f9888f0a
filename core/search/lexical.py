"""Word features for the rankers: a tf-idf matrix of the corpus texts, and a logistic model over
embedding and words together.

Sentence embeddings blur the exact words that often define a topic (a library's name, a
disease, a place); tf-idf keeps them. A logistic regression over both ``[alpha * embedding,
tf-idf]`` found more of each topic per text reviewed than either alone in the simulated
annotator (bench/annotator.py, bench/RESULTS.md). The matrix is built once per corpus, lazily,
on the first search that needs it (:class:`WordIndex`), and kept on disk beside the corpus, so a
restarted app loads it instead of re-reading every text.
"""

from __future__ import annotations

import logging
import re
import threading
from pathlib import Path
from typing import Sequence

import numpy as np
import scipy.sparse as sp

from core.search.keyword import fold

log = logging.getLogger(__name__)
# bump when word_matrix changes how it reads texts (a saved matrix of another version is rebuilt) or how
# it is stored (then the versions in SAME_WORDS are read and saved again instead: seconds, not minutes)
WORDS_VERSION = 2  # 2: float16 values from COMPACT_FROM texts
SAME_WORDS = (1,)
# bump when a matrix by lemma reads words otherwise (its file is named by it; one of an older reading is rebuilt,
# but for a large corpus whose matrix was built at import: :func:`words_file`)
LEMMAS_VERSION = 5  # 2: the forms of words the dictionary lacks joined (core.wordforms.unlisted_forms); 3: and a
# form that is its lemma's stem alone (vakcín of vakcína); 4: a lemma takes a form only by a change of ending the
# dictionary makes after the same letter (zdarma is no form of zdar); 5: so do two words it lacks, unless the letter
# is one it seldom changes after or both are forms of a third (well and welt stay apart), and a function word is a
# form only of another (dále is none of daly)
# bump when a corpus's quotes are read otherwise with what they quote (core.quoted.words_read): its file's name has
# it (words-v2-cs-l5-q1.npz); a corpus without quotes keeps its file
QUOTES_VERSION = 1
# from this many texts the matrix's values are kept as float16 (in memory and on disk): at 10M texts
# that halves the 0.6 GB of values Suggest reads at every query (indices stay int32); below, float32
COMPACT_FROM = 1_000_000
# rows of a float16 matrix turned into float32 at a time by :func:`dot` (~15M values, 60 MB, at 10M)
DOT_BLOCK = 1 << 20


def word_matrix(texts, lang: str | None = None, unlisted: bool = True) -> sp.csr_matrix:
    """Rows = texts, columns = words seen in at least two texts; sublinear tf-idf, L2 rows.

    Case and diacritics are folded (``Očkování`` and ``ockovani`` are one word). With ``lang`` (a language with a
    dictionary, core/wordforms.py) a word's forms are one column, its lemma's: ``volby``, ``voleb`` and ``volbách``
    count as one word, as ``query`` and ``queries`` do; and so are the forms of a word the dictionary does not list,
    found among the corpus's words by the dictionary's changes of ending (core.wordforms.unlisted_forms):
    ``Babiš``, ``Babiše``, ``Babišovi`` (``unlisted``). Time at 300,000 tweets: 9.3 s, against 7.9 s by lemma alone
    and 5.4 s as written; at a million 24.2 s against 23.1 s and 18.3 s (bench/RESULTS.md)."""
    from sklearn.feature_extraction.text import CountVectorizer, TfidfTransformer, TfidfVectorizer

    from core import wordforms

    same = dict(min_df=2, sublinear_tf=True, dtype=np.float32)
    if not (lang and wordforms.supported(lang)):
        try:
            return TfidfVectorizer(preprocessor=fold, **same).fit_transform(texts).tocsr()
        except ValueError:  # no word occurs twice (a tiny corpus): no word features
            return sp.csr_matrix((len(texts), 0), dtype=np.float32)
    # the same words (the vectorizer's pattern), each as its lemma; counted, then a word's unlisted forms joined
    words, lemma = re.compile(TfidfVectorizer().token_pattern).findall, wordforms.dictionary(lang).lemma_map().get
    counter = CountVectorizer(analyzer=lambda text: [lemma(w, w) for w in words(fold(text))], dtype=np.float32)
    try:
        counts = counter.fit_transform(texts).tocsr()
    except ValueError:  # no word at all
        return sp.csr_matrix((len(texts), 0), dtype=np.float32)
    names = counter.get_feature_names_out()
    texts_with = np.bincount(counts.indices, minlength=len(names))
    joined = wordforms.unlisted_forms(names, texts_with, lang) if unlisted else {}
    if joined:
        kept = np.array([joined.get(w, w) for w in names], dtype=object)
        columns, to = np.unique(kept, return_inverse=True)  # the words in the vectorizer's (sorted) order
        counts = sp.csr_matrix((counts.data, to[counts.indices], counts.indptr), shape=(len(texts), len(columns)))
        counts.sum_duplicates()
    seen = np.bincount(counts.indices, minlength=counts.shape[1]) >= same["min_df"]
    if not seen.any():
        return sp.csr_matrix((len(texts), 0), dtype=np.float32)
    return TfidfTransformer(sublinear_tf=True).fit_transform(counts[:, np.flatnonzero(seen)]).tocsr()


def words_file(folder: Path, lang: str | None, built_at_import: bool = False,
               quotes: bool = False) -> tuple[Path, str | None]:
    """(the file of a corpus's word matrix, the language its words are counted by lemma in or None). ``lang``: the
    corpus's main language where it has a dictionary (core.wordforms.language_of); ``quotes``: the corpus has quotes,
    read with what they quote (core.quoted.words_read), a matrix of its own. A large corpus's matrix is
    built at import (``built_at_import``); one imported before its words were read as they are now keeps its matrix
    (by lemma of an earlier reading, else of words as written; its quotes' own words only), rather than a user's
    first Suggest building another for minutes (imported again, it gets one as now)."""
    plain = Path(folder) / f"words-v{WORDS_VERSION}.npz"
    now = plain.with_name(f"words-v{WORDS_VERSION}-{lang}-l{LEMMAS_VERSION}.npz") if lang else plain
    if quotes:
        now = _with_quotes(now)
    if built_at_import and not now.exists():
        for older in ([_without_quotes(now)] if quotes else []) + (_older_files(plain, lang) if lang else []):
            if older.exists():
                return older, (None if older == plain else lang)
    return now, lang


def _with_quotes(file: Path) -> Path:
    return file.with_name(f"{file.stem}-q{QUOTES_VERSION}{file.suffix}")


def _without_quotes(file: Path) -> Path:
    return file.with_name(file.name.replace(f"-q{QUOTES_VERSION}.", "."))


def _older_files(plain: Path, lang: str) -> list[Path]:
    """The files of matrices of ``lang``'s corpus read otherwise than now: by lemma, newest first, then as written."""
    return [plain.with_name(f"{plain.stem}-{lang}{f'-l{v}' if v > 1 else ''}.npz")  # the first had no number
            for v in range(LEMMAS_VERSION - 1, 0, -1)] + [plain]


class WordIndex:
    """Suggest's word matrix of a corpus's texts: read from ``file`` when a valid copy is there,
    otherwise built from the texts on first use (seconds at 300k texts) and saved to ``file``. With ``lang``
    a word's forms are one column (:func:`word_matrix`; ``unlisted``: and those of words the dictionary lacks).

    Its one piece of state is the matrix, filled once under the index's own lock; the texts and
    the file are fixed at construction."""

    def __init__(self, texts: Sequence[str], file: str | Path | None = None, compact_from: int = COMPACT_FROM,
                 lang: str | None = None, unlisted: bool = True):
        self._texts = texts
        self.lang, self.unlisted = lang, unlisted
        self.n = len(texts)
        self.file = Path(file) if file else None
        self.compact = self.n >= compact_from
        self._matrix: sp.csr_matrix | None = None
        self._lock = threading.Lock()

    @property
    def built(self) -> bool:
        return self._matrix is not None

    @property
    def matrix(self) -> sp.csr_matrix:
        with self._lock:
            if self._matrix is None:
                m = _load(self.file, self.n) if self.file else None
                if m is None and self.file:
                    m = self._from_older()
                if m is None:
                    m = word_matrix(self._texts, self.lang, self.unlisted)
                    m = compact(m) if self.compact else m
                    if self.file:
                        _save(self.file, m)
                        if self.file.exists():  # those read otherwise before: not read again
                            olders = _older_files(words_file(self.file.parent, None)[0], self.lang) if self.lang else []
                            for older in olders + [_without_quotes(self.file)]:
                                if older != self.file:
                                    older.unlink(missing_ok=True)
                self._matrix = m
        return self._matrix

    def _from_older(self) -> sp.csr_matrix | None:
        """The matrix of an older file of the same words beside ``file`` (``words-v1.npz`` for
        ``words-v2.npz``), stored as this version stores it; the older file is removed."""
        tag = f"-v{WORDS_VERSION}"
        if tag not in self.file.name:
            return None
        for v in SAME_WORDS:
            older = self.file.with_name(self.file.name.replace(tag, f"-v{v}"))
            m = _load(older, self.n)
            if m is None:
                continue
            m = compact(m) if self.compact else m.copy()  # not the older file's mapped pages
            _save(self.file, m)
            if self.file.exists():
                older.unlink(missing_ok=True)  # a server still mapping it keeps its pages
            log.info("word matrix %s rewritten as %s", older.name, self.file.name)
            return m
        return None


def compact(m: sp.csr_matrix) -> sp.csr_matrix:
    """The matrix with float16 values (tf-idf of unit rows, in (0, 1]: relative error under 5e-4).
    scipy keeps such a matrix but computes nothing with it: read it through :func:`take_rows` and :func:`dot`."""
    return sp.csr_matrix((m.data.astype(np.float16), m.indices, m.indptr), shape=m.shape, copy=False)


def take_rows(words: sp.csr_matrix, r: np.ndarray) -> sp.csr_matrix:
    """Rows ``r`` of the matrix, float32."""
    if words.dtype != np.float16:
        return words[r]
    r = np.asarray(r, dtype=np.int64)
    starts, ends = words.indptr[r].astype(np.int64), words.indptr[r + 1].astype(np.int64)
    lens = ends - starts
    ptr = np.r_[0, np.cumsum(lens)]
    take = np.repeat(starts - ptr[:-1], lens) + np.arange(ptr[-1])  # every value of those rows, in order
    return sp.csr_matrix((words.data[take].astype(np.float32), words.indices[take], ptr),
                         shape=(len(r), words.shape[1]))


def dot(words: sp.csr_matrix, w: np.ndarray, block: int = DOT_BLOCK) -> np.ndarray:
    """``words @ w`` (float32) for every row; a float16 matrix is turned into float32 ``block`` rows at a
    time, never whole."""
    w = np.asarray(w, dtype=np.float32)
    if words.dtype != np.float16:
        return np.asarray(words @ w, dtype=np.float32)
    n = words.shape[0]
    out = np.empty(n, dtype=np.float32)
    for s in range(0, n, block):
        e = min(n, s + block)
        a, b = int(words.indptr[s]), int(words.indptr[e])
        part = sp.csr_matrix((words.data[a:b].astype(np.float32), words.indices[a:b],
                              np.asarray(words.indptr[s:e + 1]) - a), shape=(e - s, words.shape[1]))
        out[s:e] = part @ w
    return out


def _load(path: Path, rows: int) -> sp.csr_matrix | None:
    """The saved matrix, or None (absent, unreadable, or not of this corpus): then it is rebuilt."""
    if not path.exists():
        return None
    try:
        m = _mapped(path)
        m = m if m is not None else sp.load_npz(path).tocsr()
    except Exception as exc:  # a corrupt cache is rebuilt, never fatal
        log.warning("%s is unreadable (%s); rebuilding the word matrix", path, exc)
        return None
    if m.shape[0] != rows:
        log.warning("%s has %d rows, the corpus %d; rebuilding the word matrix", path, m.shape[0], rows)
        return None
    return m


def _mapped(path: Path) -> sp.csr_matrix | None:
    """The saved matrix with its arrays memory-mapped from the file, not read into the heap: the file is
    an uncompressed .npz (a zip whose members are stored .npy files), so each array lies at a fixed
    offset. At 10M texts that keeps 1.2 GB of the server's private memory as file pages the kernel can
    drop and read again (and several server processes share). None where the file is not of that form
    (then it is read whole)."""
    import struct
    import zipfile

    arrays = {}
    with zipfile.ZipFile(path) as z, open(path, "rb") as fh:
        for info in z.infolist():
            key = info.filename.removesuffix(".npy")
            if info.compress_type != zipfile.ZIP_STORED:
                return None
            if key in ("format", "shape"):  # a few bytes: read as they are
                arrays[key] = np.load(z.open(info), allow_pickle=False)
                continue
            fh.seek(info.header_offset)
            local = fh.read(30)
            if local[:4] != b"PK\x03\x04":
                return None
            name_len, extra_len = struct.unpack("<HH", local[26:30])
            fh.seek(info.header_offset + 30 + name_len + extra_len)
            version = np.lib.format.read_magic(fh)
            read_header = np.lib.format.read_array_header_1_0 if version == (1, 0) \
                else np.lib.format.read_array_header_2_0
            shape, fortran, dtype = read_header(fh)
            if fortran or dtype.hasobject or len(shape) != 1:
                return None
            arrays[key] = np.memmap(path, dtype=dtype, mode="r", offset=fh.tell(), shape=shape)
    if set(arrays) != {"data", "indices", "indptr", "format", "shape"}:
        return None
    fmt = arrays["format"].item()
    if (fmt.decode() if isinstance(fmt, bytes) else str(fmt)) != "csr":
        return None
    return sp.csr_matrix((arrays["data"], arrays["indices"], arrays["indptr"]),
                         shape=tuple(int(v) for v in arrays["shape"]), copy=False)


def _save(path: Path, m: sp.csr_matrix) -> None:
    from core.atomic import atomic_path

    try:
        with atomic_path(path, cache=True) as tmp:
            with open(tmp, "wb") as fh:
                sp.save_npz(fh, m, compressed=False)
    except OSError as exc:  # a read-only data root: keep it in memory only
        log.warning("could not save the word matrix to %s (%s)", path, exc)


def fit_scores(x: np.ndarray, words: sp.csr_matrix | None, pos: np.ndarray, neg: np.ndarray,
               alpha: float = 0.5, c: float = 1.0, scan=None, extra: Sequence = ()) -> np.ndarray:
    """Class-balanced, L2-regularised logistic regression of pos vs neg rows over
    ``[alpha * x, words, extra]``; returns the decision score of every row. ``scan(w)`` gives ``x @ w`` for
    every row (a VectorIndex's ``scores``: one pass over a memory-mapped store); default numpy. ``extra``: blocks of a
    few more features of every row (rows x m: a matrix, dense or sparse, or any block that gives its rows' values by
    ``block[rows]`` and every row's weighted sum by ``block @ weights``), such as Suggest's counts of labelled texts
    in a conversation and the share kept of a day's labelled texts."""
    from sklearn.linear_model import LogisticRegression

    rows = np.concatenate([pos, neg])
    y = np.r_[np.ones(len(pos)), np.zeros(len(neg))]
    dense = alpha * np.asarray(x[rows], dtype=np.float32)
    parts = [sp.csr_matrix(dense)] + ([take_rows(words, rows)] if words is not None else [])
    parts += [sp.csr_matrix(block[rows], dtype=np.float32) for block in extra]
    feats = sp.hstack(parts).tocsr() if len(parts) > 1 else dense
    # random_state fixed: liblinear shuffles with numpy's global generator otherwise (shared by every
    # user of a server, and a second answer for the same labels)
    from core.search.base import one_thread

    with one_thread():
        model = LogisticRegression(C=c, class_weight="balanced", solver="liblinear", max_iter=300,
                                   random_state=0).fit(feats, y)
    w = model.coef_[0].astype(np.float32)
    d = x.shape[1]
    direction = alpha * w[:d]
    scores = np.asarray(scan(direction) if scan is not None else x @ direction, dtype=np.float32)
    if words is not None and words.shape[1]:
        scores += dot(words, w[d:d + words.shape[1]])
    at = d + (words.shape[1] if words is not None else 0)
    for block in extra:
        scores += np.asarray(block @ w[at:at + block.shape[1]], np.float32).ravel()
        at += block.shape[1]
    return scores + np.float32(model.intercept_[0])
