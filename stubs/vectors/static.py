"""The default record-mode embedder: static token vectors distilled from all-MiniLM-L6-v2.

Hash embeddings retrieve only by shared spelling ("family" never finds "sister"); the MiniLM
model finds meaning but needs torch and ~55 ms a text. This sits between them, as model2vec
does: every WordPiece token of MiniLM's vocabulary was run through the model once, offline
(scripts/distill_static_vectors.py), its output reduced by PCA and weighted down the more
common the token; a text's vector is the weighted sum of its tokens' vectors. No model runs at
request time: a tokenizer (stubs.vectors.wordpiece), a table lookup and a sum, well under a
millisecond.

The same bytes on every machine: the table (stubs/data/minilm_static.npz, shipped with the
package) holds each token's direction as int8 and its weight as uint16, so a text's sum is exact
integer arithmetic (no float summation whose order a SIMD kernel or BLAS could change); the
squared norm is an exact Python integer, and the division by its square root is one correctly
rounded IEEE operation per element. Then the width the request asks for: the leading PCA
components kept (they carry the most variance) and renormalised, or zeros padded after them.

The vectors /v1/embeddings sends are lifted (`lift=True`) so that cosines read (1 + cos) / 2:
each carries one shared component, first, as long as the rest of it. Engines filter by absolute
similarity tuned on real models: graphiti-core keeps only edges of cosine >= 0.6, where raw
static cosines of a question and its answer are 0.2-0.5 and would all be cut. Lifted, "related"
(raw >= 0.2) is kept and unrelated text (raw about 0.13) is not; no ranking changes. The stub's
own similarities (rerank, the tool choice) use the raw vectors and their own calibrations.
"""

from __future__ import annotations

import functools
import math
from importlib import resources

import numpy as np
import numpy.typing as npt

from stubs.vectors.wordpiece import WordPiece

DATA_FILE = "minilm_static.npz"
_SHARED = math.sqrt(0.5)  # the shared component: as long as the rest, so cos' = (1 + cos) / 2
_FLOAT_EXACT_TOKENS = 2**29  # below it a float64 sum of the weighted tokens is exact
# Texts embedded again (an engine re-embedding its memories, a gate's second run, a question
# asked of every arm) are served from here: (text, width, lifted) -> the vector, read-only.
_CACHED_TEXTS = 2048


class StaticTable:
    """The distilled table: tokenizer, int8 directions [vocab, width] and uint16 weights."""

    def __init__(
        self, vocab: list[str], vectors: npt.NDArray[np.int8], weights: npt.NDArray[np.uint16]
    ) -> None:
        if vectors.shape[0] != len(vocab) or weights.shape != (len(vocab),):
            raise ValueError("static table: vocabulary, vectors and weights disagree in length")
        self.vocab = vocab
        self.tokenizer = WordPiece(vocab)
        self.width = int(vectors.shape[1])
        self._vectors = vectors
        self._weights = weights

    def integer_vector(self, text: str) -> npt.NDArray[np.int64]:
        ids = self.tokenizer.ids(text)
        if not ids:
            return np.zeros(self.width, dtype=np.int64)
        # Each distinct token once, weighted by its count; the product in float64 (BLAS: 2.6x
        # faster than numpy's integer matmul, issue 37) is still exact integer arithmetic:
        # every term is an integer below 2**23 times its count, so every partial sum, in
        # whatever order BLAS adds (fused or not), is an integer below 2**53, which float64
        # holds exactly. Past 2**29 tokens that could fail: the int64 product, as before.
        if len(ids) >= _FLOAT_EXACT_TOKENS:
            weights = self._weights[ids].astype(np.int64)
            return weights @ self._vectors[ids].astype(np.int64)
        tokens, counts = np.unique(np.asarray(ids, dtype=np.intp), return_counts=True)
        weights = (counts * self._weights[tokens]).astype(np.float64)
        return (weights @ self._vectors[tokens].astype(np.float64)).astype(np.int64)


@functools.lru_cache(maxsize=1)
def table() -> StaticTable:
    with resources.files("stubs").joinpath("data", DATA_FILE).open("rb") as f:
        data = np.load(f, allow_pickle=False)
        vocab = bytes(data["vocab"]).decode("utf-8").split("\n")
        return StaticTable(vocab, data["vectors"], data["weights"])


def static_embedding(text: str, dims: int, lift: bool = False) -> npt.NDArray[np.float32]:
    """A unit-length float32 vector of width `dims`; texts of like meaning have a higher cosine
    (with `lift`, cosines read (1 + cos) / 2: the vectors /v1/embeddings sends)."""
    if dims <= 0:
        raise ValueError("dims must be positive")
    return _cached_embedding(text, dims, lift).copy()


@functools.lru_cache(maxsize=_CACHED_TEXTS)
def _cached_embedding(text: str, dims: int, lift: bool) -> npt.NDArray[np.float32]:
    vector = _embedding(text, dims, lift)
    vector.flags.writeable = False
    return vector


def _embedding(text: str, dims: int, lift: bool) -> npt.NDArray[np.float32]:
    first = 1 if lift else 0  # where the token components start: after the shared one
    summed = table().integer_vector(text)[: dims - first]
    squared = _squared_norm(summed)
    out = np.zeros(dims, dtype=np.float64)
    if squared == 0:
        # No token (blank text), every kept component cancelled, or no room for any: one fixed
        # unit vector, the same for every such text (the shared component when lifted).
        out[0] = 1.0
        return out.astype(np.float32)
    # The norm (times sqrt(2) when lifted) in one correctly rounded step: 2 * squared is exact,
    # int to float and sqrt round once each. The division is elementwise: no summation order.
    norm = math.sqrt(2 * squared if lift else squared)
    out[first : first + summed.shape[0]] = summed.astype(np.float64) / norm
    if lift:
        out[0] = _SHARED
    return out.astype(np.float32)


def _squared_norm(vector: npt.NDArray[np.int64]) -> int:
    """The exact sum of squares: in int64 while it cannot overflow, else in Python integers."""
    if vector.shape[0] <= 256 and int(np.abs(vector).max(initial=0)) < 2**26:
        return int(vector @ vector)  # each square < 2**52, their sum < 2**60: exact in int64
    return sum(x * x for x in vector.tolist())


def static_embeddings(
    texts: list[str], dims: int, lift: bool = False
) -> list[npt.NDArray[np.float32]]:
    return [static_embedding(text, dims, lift) for text in texts]
