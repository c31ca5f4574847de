"""The record-mode embedders and the OpenAI POST /v1/embeddings stub.

A record-mode embedding must be free and deterministic, yet a memory engine's retrieval must
still behave: a question should land near the fact that answers it. Three embedders, chosen by
the stubs file's `[embeddings] model`:
- "static" (the default): by meaning, from token vectors distilled from all-MiniLM-L6-v2
  (stubs.vectors.static): "my family" finds "my sister", no torch, well under 1 ms a text;
- "hash": by shared spelling only, hashing character 3-grams and whole words into signed
  buckets (the "hashing trick"): the cosine grows with the features two texts share;
- "minilm": the full model (stubs.vectors.minilm), from an optional extra that needs torch.
Rerank (stubs.vectors.rerank) and the tool choice use the same embedder through `embed_texts`; the
vectors this route sends from "static" are lifted (stubs.vectors.static says why).
"""

from __future__ import annotations

import base64
import functools
import hashlib
import json
import re
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from stubs.request import StubRequest
from stubs.vectors.minilm import minilm_embeddings
from stubs.vectors.static import static_embeddings
from vendors.errors import VendorRequestError
from vendors.reply import Usage, VendorReply
from vendors.requests import embedding_inputs, requested_embedding_model

# Native widths of OpenAI's embedding models: a request without `dimensions` gets these, as a
# vector store sized for the real model expects. Other models get ctx.embedding_dims.
NATIVE_DIMS = {
    "text-embedding-3-small": 1536,
    "text-embedding-3-large": 3072,
    "text-embedding-ada-002": 1536,
}
# Only the text-embedding-3 family accepts `dimensions`; ada-002 refuses it.
_FIXED_WIDTH_MODELS = ("text-embedding-ada-002",)
# Widths past any real model's are refused so one request cannot allocate without bound.
MAX_DIMS = 16384
_WORD_RE = re.compile(r"\w+")
# Whole words weigh more than 3-grams: sharing a word says more than sharing a fragment.
_WORD_WEIGHT = 2.0
_GRAM = 3


def hash_embedding(text: str, dims: int) -> npt.NDArray[np.float32]:
    """A unit-length float32 vector of width `dims`; similar texts have a higher cosine."""
    if dims <= 0:
        raise ValueError("dims must be positive")
    lowered = text.lower()
    padded = f" {' '.join(lowered.split())} "
    features: list[tuple[str, float]] = [
        ("g:" + padded[i : i + _GRAM], 1.0) for i in range(max(0, len(padded) - _GRAM + 1))
    ]
    features.extend(("w:" + word, _WORD_WEIGHT) for word in _WORD_RE.findall(lowered))
    if not features:  # only whitespace: still a unit vector, the same for every blank text
        features = [("empty:", 1.0)]
    hashes = [_feature_hash(feature) for feature, _ in features]
    buckets = np.fromiter(((h >> 1) % dims for h in hashes), dtype=np.int64, count=len(hashes))
    # The low bit picks the sign so that colliding features cancel rather than pile up.
    weights = np.fromiter(
        (w if h & 1 else -w for h, (_, w) in zip(hashes, features, strict=True)),
        dtype=np.float64,
        count=len(hashes),
    )
    vector = np.bincount(buckets, weights=weights, minlength=dims)
    norm = float(np.linalg.norm(vector))
    if norm == 0.0:  # every feature cancelled in a tiny width: fall back to one fixed bucket
        vector[0] = 1.0
        norm = 1.0
    return (vector / norm).astype(np.float32)


@functools.lru_cache(maxsize=65536)
def _feature_hash(feature: str) -> int:
    # Common 3-grams recur across texts; caching their hashes halves the cost of a long text.
    return int.from_bytes(hashlib.blake2b(feature.encode(), digest_size=8).digest(), "little")


class VectorSettings(Protocol):
    """What the vector handlers read of their context (stubs.rules.context.StubContext meets it),
    so vectors/ needs nothing of the rules that load the stubs file."""

    @property
    def embedding_model(self) -> str: ...  # the stubs file's `[embeddings] model`

    @property
    def embedding_dims(self) -> int: ...  # the width when a request names no `dimensions`


def openai_embeddings(req: StubRequest, ctx: VectorSettings) -> VendorReply:
    body = req.body
    model = requested_embedding_model(body)
    texts, tokens = embedding_inputs(body.get("input"))
    dims = _dimensions(body, model, ctx)
    encoding = body.get("encoding_format", "float")
    if encoding is None:
        encoding = "float"
    if encoding not in ("float", "base64"):
        raise VendorRequestError(
            400,
            f"Invalid value for 'encoding_format': '{encoding}'. "
            "Supported values are: 'float' and 'base64'.",
            "encoding_format",
        )
    data = []
    for index, vector in enumerate(_vectors(texts, dims, ctx)):
        embedding: Any = (
            base64.b64encode(vector.astype("<f4").tobytes()).decode("ascii")
            if encoding == "base64"
            else _short_floats(vector)
        )
        data.append({"object": "embedding", "index": index, "embedding": embedding})
    prompt_tokens = sum(tokens)
    payload = {
        "object": "list",
        "data": data,
        "model": model,
        "usage": {"prompt_tokens": prompt_tokens, "total_tokens": prompt_tokens},
    }
    raw = json.dumps(payload, separators=(",", ":")).encode()
    return VendorReply(
        status=200, chunks=[raw], model=model, usage=Usage(input_tokens=prompt_tokens)
    )


def embed_texts(texts: list[str], dims: int, model: str) -> list[npt.NDArray[np.float32]]:
    """Unit-length float32 vectors of width `dims` by the named embedder (a stubs file's
    `[embeddings] model`: "static", "hash" or "minilm")."""
    if model == "static":
        return static_embeddings(texts, dims)
    if model == "minilm":
        return minilm_embeddings(texts, dims)
    if model == "hash":
        return [hash_embedding(text, dims) for text in texts]
    raise ValueError(f"unknown embedder {model!r}")


def _vectors(texts: list[str], dims: int, ctx: VectorSettings) -> list[npt.NDArray[np.float32]]:
    model = ctx.embedding_model
    if model == "static":
        # Lifted: an engine's similarity floor, tuned on real models, keeps a question's answer.
        return static_embeddings(texts, dims, lift=True)
    return embed_texts(texts, dims, model)


def _short_floats(vector: npt.NDArray[np.float32]) -> list[float]:
    # The shortest decimal that reads back as the same float32 (what the API prints), instead
    # of float64's 17 digits: a smaller body, and the client's float32 view is unchanged.
    # numpy 2 prints a float32 scalar as its shortest round-tripping decimal.
    return [float(str(v)) for v in vector]


def _dimensions(body: dict[str, Any], model: str, ctx: VectorSettings) -> int:
    native = NATIVE_DIMS.get(model, ctx.embedding_dims)
    dims = body.get("dimensions")
    if dims is None:
        return native
    if model in _FIXED_WIDTH_MODELS:
        raise VendorRequestError(
            400, "This model does not support specifying dimensions.", "dimensions"
        )
    if isinstance(dims, bool) or not isinstance(dims, int):
        raise VendorRequestError(
            400,
            "Invalid type for 'dimensions': expected an integer, but got another type instead.",
            "dimensions",
        )
    if dims < 1:
        raise VendorRequestError(
            400, f"Invalid value for 'dimensions': {dims}. Must be at least 1.", "dimensions"
        )
    if dims > (native if model in NATIVE_DIMS else MAX_DIMS):
        native = native if model in NATIVE_DIMS else MAX_DIMS
        raise VendorRequestError(
            400,
            f"This model's maximum dimensions is {native}, however you requested {dims}.",
            "dimensions",
        )
    return dims
