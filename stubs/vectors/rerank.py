"""Rerank stubs: Cohere v2 POST /v2/rerank and Voyage POST /v1/rerank.

Documents are ranked by the cosine of their embedding with the query's, by the embedder the
stubs file names (stubs.vectors.embeddings; by default the static MiniLM vectors), so a memory
engine's
reranking step puts the document that answers the query first, as it ranks it at retrieval. The
cosine goes through a logistic curve into [0, 1]: unrelated text scores near 0 and
a close match near 1, as real rerankers' relevance scores read, and the order is unchanged.
"""

from __future__ import annotations

import json
import math
import uuid
from dataclasses import dataclass
from typing import Any

import numpy as np

from stubs.request import StubRequest
from stubs.vectors.embeddings import VectorSettings, embed_texts
from vendors.errors import VendorRequestError
from vendors.reply import Usage, VendorReply
from vendors.requests import cohere_document_text, required_string, rerank_documents, top_limit
from vendors.tokens import estimate_tokens

_DIMS = 1024  # wide enough that hash bucket collisions barely move scores; the others pad
_SCORE_DIGITS = 8
# Logistic curve: cosine 0.3 maps to 0.5, ~1 above 0.7. Static embeddings of unrelated texts
# sit near 0.13 (score ~0.15) and a question and its answer near 0.37 (~0.67), measured on
# bench/paraphrases.py; hash scores texts sharing nothing ~0.05.
_MIDPOINT = 0.3
_STEEPNESS = 10.0


@dataclass(frozen=True)
class Ranked:
    index: int
    score: float


def rank(query: str, documents: list[str], model: str = "static") -> list[Ranked]:
    """All documents, most relevant first; equal scores keep the documents' order."""
    q, *docs = embed_texts([query, *documents], _DIMS, model)
    # Each cosine on its own (not one matrix product, whose kernel may sum in another order),
    # in float64, then rounded: the scores are the same bytes on every machine.
    cosines = [math.fsum(float(x) for x in np.multiply(d, q, dtype=np.float64)) for d in docs]
    scored = [Ranked(i, _relevance(c)) for i, c in enumerate(cosines)]
    return sorted(scored, key=lambda r: (-r.score, r.index))


def _relevance(cosine: float) -> float:
    # Rounded so the bytes do not hang on float noise; ties then fall back to document order.
    return round(1.0 / (1.0 + math.exp(-_STEEPNESS * (cosine - _MIDPOINT))), _SCORE_DIGITS)


def cohere_rerank(req: StubRequest, ctx: VectorSettings) -> VendorReply:
    body = req.body
    model = required_string(body, "model")
    query = required_string(body, "query")
    documents = [cohere_document_text(d, i) for i, d in enumerate(rerank_documents(body))]
    top_n = top_limit(body, "top_n", len(documents))
    ranked = rank(query, documents, ctx.embedding_model)[:top_n]
    payload = {
        # Cohere's ids are UUIDs; this one is derived from the request, never random.
        "id": str(uuid.UUID(bytes=req.digest[:16], version=4)),
        "results": [{"index": r.index, "relevance_score": r.score} for r in ranked],
        "meta": {
            "api_version": {"version": "2"},
            # One search unit per query with up to 100 documents.
            "billed_units": {"search_units": max(1, math.ceil(len(documents) / 100))},
        },
    }
    tokens = estimate_tokens(query) + sum(estimate_tokens(d) for d in documents)
    return _reply(payload, model, tokens)


def voyage_rerank(req: StubRequest, ctx: VectorSettings) -> VendorReply:
    body = req.body
    model = required_string(body, "model")
    query = required_string(body, "query")
    documents = rerank_documents(body)
    for i, doc in enumerate(documents):
        if not isinstance(doc, str):
            raise VendorRequestError(
                400, f"documents.{i}: Input should be a valid string", "documents"
            )
    top_k = top_limit(body, "top_k", len(documents))
    return_documents = body.get("return_documents", False)
    if not isinstance(return_documents, bool):
        raise VendorRequestError(
            400, "return_documents: Input should be a valid boolean", "return_documents"
        )
    data = []
    for r in rank(query, documents, ctx.embedding_model)[:top_k]:
        item: dict[str, Any] = {"index": r.index, "relevance_score": r.score}
        if return_documents:
            item["document"] = documents[r.index]
        data.append(item)
    # Voyage bills each (query, document) pair, so the query counts once per document.
    q_tokens = estimate_tokens(query)
    tokens = sum(q_tokens + estimate_tokens(d) for d in documents)
    payload = {"object": "list", "data": data, "model": model, "usage": {"total_tokens": tokens}}
    return _reply(payload, model, tokens)


def _reply(payload: dict[str, Any], model: str, tokens: int) -> VendorReply:
    raw = json.dumps(payload, separators=(",", ":")).encode()
    return VendorReply(status=200, chunks=[raw], model=model, usage=Usage(input_tokens=tokens))
