"""Cohere v2 and Voyage rerank stubs: ranking, limits, shapes, determinism, refusals."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest

from stubs.request import StubRequest
from stubs.routes import stub_handler
from stubs.rules.context import StubContext
from stubs.rules.replies import ReplyBook
from stubs.vectors.rerank import cohere_rerank, rank, voyage_rerank
from tests.stubs.sdk_transport import body_digest
from vendors.errors import VendorRequestError
from vendors.routes import find_route

QUERY = "Which city does the user live in?"
DOCUMENTS = [
    "Quarterly tax filings are due at the end of March.",
    "A recipe for sourdough bread with a long cold proof.",
    "The user lives in the city of Lisbon and walks to work.",
    "Jazz quintets often feature a trumpet and a saxophone.",
]
RELEVANT = 2


def cohere(body: dict[str, Any]) -> dict[str, Any]:
    reply = cohere_rerank(
        StubRequest("cohere", "cohere.rerank", body, body_digest(body)), StubContext()
    )
    assert reply.status == 200 and reply.content_type == "application/json"
    parsed: dict[str, Any] = json.loads(reply.body)
    return parsed


def voyage(body: dict[str, Any]) -> dict[str, Any]:
    reply = voyage_rerank(
        StubRequest("voyage", "voyage.rerank", body, body_digest(body)), StubContext()
    )
    assert reply.status == 200
    parsed: dict[str, Any] = json.loads(reply.body)
    return parsed


def test_routes_name_these_handlers() -> None:
    cohere_route = find_route("cohere", "POST", "/v2/rerank")
    voyage_route = find_route("voyage", "POST", "/v1/rerank")
    assert cohere_route is not None and stub_handler(cohere_route) is cohere_rerank
    assert voyage_route is not None and stub_handler(voyage_route) is voyage_rerank


def test_document_sharing_words_with_query_ranks_first() -> None:
    ranked = rank(QUERY, DOCUMENTS)
    assert ranked[0].index == RELEVANT
    assert [r.score for r in ranked] == sorted((r.score for r in ranked), reverse=True)
    assert all(0.0 <= r.score <= 1.0 for r in ranked)
    assert ranked[0].score > 0.5 > ranked[-1].score


@pytest.mark.parametrize("model", ["static", "hash"])
def test_ties_keep_document_order(model: str) -> None:
    ranked = rank("alpha", ["zzz", "same text", "same text", "yyy", "zzz"], model)
    for pair in ((1, 2), (0, 4)):  # identical texts score alike
        tied = [r for r in ranked if r.index in pair]
        assert tied[0].score == tied[1].score
        assert [r.index for r in tied] == list(pair)


def test_hash_ties_texts_sharing_nothing_with_the_query() -> None:
    ranked = rank("alpha", ["zzz", "yyy"], "hash")
    assert ranked[0].score == ranked[1].score and [r.index for r in ranked] == [0, 1]


MEMORIES = [
    "The invoice is due on Friday.",
    "My sister Ana lives in Lisbon.",
    "My Tesla is parked outside.",
    "The printer on the second floor is out of toner.",
]


@pytest.mark.parametrize(
    ("query", "best"), [("Tell me about my family.", 1), ("What car do I drive?", 2)]
)
def test_the_default_ranks_by_meaning_as_the_stubs_embed(query: str, best: int) -> None:
    # Rerank uses the record-mode embedder: the fact that answers ranks first with no word shared.
    ranked = rank(query, MEMORIES)
    assert ranked[0].index == best
    assert ranked[0].score > 0.5 > ranked[-1].score


def test_a_stubs_file_choosing_hash_reranks_by_hash(tmp_path: Path) -> None:
    path = tmp_path / "stubs.toml"
    path.write_text('schema = 1\n[embeddings]\nmodel = "hash"\n')
    body = {"model": "rerank-v3.5", "query": "Tell me about my family.", "documents": MEMORIES}
    req = StubRequest("cohere", "cohere.rerank", body, body_digest(body))
    hashed = json.loads(cohere_rerank(req, StubContext(book=ReplyBook.load(path))).body)
    by_meaning = json.loads(cohere_rerank(req, StubContext()).body)
    expected = rank("Tell me about my family.", MEMORIES, "hash")
    assert hashed["results"] == [{"index": r.index, "relevance_score": r.score} for r in expected]
    assert hashed["results"] != by_meaning["results"]


def test_cohere_shape_and_top_n() -> None:
    full = cohere({"model": "rerank-v3.5", "query": QUERY, "documents": DOCUMENTS})
    assert full["results"][0]["index"] == RELEVANT
    assert sorted(r["index"] for r in full["results"]) == [0, 1, 2, 3]
    assert full["meta"] == {"api_version": {"version": "2"}, "billed_units": {"search_units": 1}}
    assert uuid.UUID(full["id"]).version == 4
    top = cohere({"model": "rerank-v3.5", "query": QUERY, "documents": DOCUMENTS, "top_n": 2})
    assert top["results"] == full["results"][:2]
    # More than there are documents is not an error: every document comes back.
    many = cohere({"model": "rerank-v3.5", "query": QUERY, "documents": DOCUMENTS, "top_n": 50})
    assert len(many["results"]) == 4


def test_voyage_shape_top_k_and_documents() -> None:
    body = {"model": "rerank-2.5", "query": QUERY, "documents": DOCUMENTS, "top_k": 3}
    plain = voyage(body)
    assert plain["object"] == "list" and plain["model"] == "rerank-2.5"
    assert len(plain["data"]) == 3 and plain["data"][0]["index"] == RELEVANT
    assert all("document" not in d for d in plain["data"])
    assert plain["usage"]["total_tokens"] > 0
    with_docs = voyage({**body, "return_documents": True})
    expected = [DOCUMENTS[d["index"]] for d in plain["data"]]
    assert [d["document"] for d in with_docs["data"]] == expected


def test_deterministic_bytes_and_usage() -> None:
    body = {"model": "rerank-v3.5", "query": QUERY, "documents": DOCUMENTS}
    req = StubRequest("cohere", "cohere.rerank", body, body_digest(body))
    first, second = cohere_rerank(req, StubContext()), cohere_rerank(req, StubContext())
    assert first.body == second.body
    assert first.usage.input_tokens > 0 and first.model == "rerank-v3.5"
    vreq = StubRequest("voyage", "voyage.rerank", body, body_digest(body))
    assert voyage_rerank(vreq, StubContext()).body == voyage_rerank(vreq, StubContext()).body


def test_cohere_accepts_legacy_text_objects() -> None:
    docs: list[Any] = [{"text": d} for d in DOCUMENTS]
    result = cohere({"model": "rerank-v3.5", "query": QUERY, "documents": docs})
    assert result["results"][0]["index"] == RELEVANT


GOOD = {"model": "m", "query": QUERY, "documents": DOCUMENTS}


@pytest.mark.parametrize("handler,limit", [(cohere_rerank, "top_n"), (voyage_rerank, "top_k")])
@pytest.mark.parametrize(
    "change",
    [
        {"model": None},
        {"query": None},
        {"query": 5},
        {"query": "  "},
        {"documents": None},
        {"documents": "one doc"},
        {"documents": []},
        {"documents": ["ok", 3]},
        {"documents": ["d"] * 1001},
        {"LIMIT": 0},
        {"LIMIT": -1},
        {"LIMIT": "3"},
        {"LIMIT": True},
    ],
)
def test_bad_input_is_a_400(handler: Any, limit: str, change: dict[str, Any]) -> None:
    body = {**GOOD, **{limit if k == "LIMIT" else k: v for k, v in change.items()}}
    body = {k: v for k, v in body.items() if v is not None}
    vendor = "cohere" if handler is cohere_rerank else "voyage"
    with pytest.raises(VendorRequestError) as err:
        handler(StubRequest(vendor, f"{vendor}.rerank", body, b"d"), StubContext())
    assert err.value.status == 400


def test_voyage_rejects_non_boolean_return_documents() -> None:
    with pytest.raises(VendorRequestError):
        voyage_rerank(
            StubRequest("voyage", "voyage.rerank", {**GOOD, "return_documents": "yes"}, b"d"),
            StubContext(),
        )
