"""vendors.fields: each route's accepted top-level fields are the installed SDKs' create()
parameters (plus the listed wire-only ones), and an unknown field gets its vendor's refusal."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import pytest
from anthropic.resources.beta.messages import Messages as BetaMessages
from anthropic.resources.messages import Messages
from openai.resources.chat.completions import Completions
from openai.resources.embeddings import Embeddings
from openai.resources.responses import Responses

from vendors.fields import ACCEPTED, WIRE_ONLY, unknown_field

# Arguments the SDKs take for themselves and never put in the body (`betas` is anthropic's
# `anthropic-beta` header).
SDK_ONLY = {"self", "extra_headers", "extra_query", "extra_body", "timeout", "betas"}
SDK_METHODS: dict[str, list[Callable[..., Any]]] = {
    "anthropic.messages": [Messages.create, BetaMessages.create],
    "anthropic.count_tokens": [Messages.count_tokens, BetaMessages.count_tokens],
    "openai.chat": [Completions.create],
    "openai.responses": [Responses.create],
    "openai.embeddings": [Embeddings.create],
}


def sdk_fields(route: str) -> set[str]:
    names: set[str] = set()
    for method in SDK_METHODS[route]:
        names |= set(inspect.signature(method).parameters) - SDK_ONLY
    return names


@pytest.mark.parametrize("route", SDK_METHODS)
def test_every_field_the_sdk_sends_is_accepted(route: str) -> None:
    """An SDK upgrade that adds a parameter fails here, not in an arm's record run."""
    assert sdk_fields(route) - ACCEPTED[route] == set()


@pytest.mark.parametrize("route", SDK_METHODS)
def test_every_accepted_field_is_the_sdks_or_a_listed_wire_field(route: str) -> None:
    """Nothing is accepted on a guess: a field the SDK does not name is listed, with why."""
    assert ACCEPTED[route] - sdk_fields(route) <= WIRE_ONLY.get(route, frozenset())


def test_every_post_route_of_the_stubs_has_a_list() -> None:
    from vendors.fields import IGNORES_UNKNOWN
    from vendors.routes import ROUTES

    posts = {r.name for r in ROUTES if r.method == "POST"}
    assert posts == set(ACCEPTED) | IGNORES_UNKNOWN and not IGNORES_UNKNOWN & set(ACCEPTED)


EXTRA = "bogus_field: Extra inputs are not permitted"
UNRECOGNIZED = "Unrecognized request argument supplied: bogus_field"
COHERE = "unknown field: parameter 'bogus_field' is not a valid field."
VOYAGE = "Argument 'bogus_field' is not supported by our API"


@pytest.mark.parametrize(
    ("route", "status", "message", "param", "code"),
    [
        ("anthropic.messages", 400, EXTRA, "bogus_field", None),
        ("anthropic.count_tokens", 400, EXTRA, "bogus_field", None),
        ("openai.chat", 400, UNRECOGNIZED, None, None),
        ("openai.embeddings", 400, UNRECOGNIZED, None, None),
        ("openai.responses", 400, "Unknown parameter: 'bogus_field'.", "bogus_field",
         "unknown_parameter"),
        ("cohere.rerank", 422, COHERE, None, None),
        ("voyage.rerank", 400, VOYAGE, None, None),
    ],
)  # fmt: skip
def test_an_unknown_field_gets_the_vendors_own_refusal(
    route: str, status: int, message: str, param: str | None, code: str | None
) -> None:
    refusal = unknown_field(route, {"model": "m", "bogus_field": 1})
    assert refusal is not None
    assert (refusal.field, refusal.status, refusal.param, refusal.code) == (
        "bogus_field",
        status,
        param,
        code,
    )
    assert message in refusal.message


def test_the_first_unknown_field_is_named_and_a_known_body_passes() -> None:
    body = {"model": "m", "zz": 1, "aa": 2, "messages": []}
    refusal = unknown_field("openai.chat", body)
    assert refusal is not None and refusal.field == "zz"
    assert unknown_field("openai.chat", {"model": "m", "messages": [], "stream": True}) is None
    # A field one vendor takes is still unknown to another.
    assert unknown_field("openai.chat", {"model": "m", "top_k": 3}) is not None
    assert unknown_field("anthropic.messages", {"model": "m", "top_k": 3}) is None
    assert unknown_field("openai.models", {"anything": 1}) is None  # a GET: no list


def test_a_hostile_field_name_is_not_echoed_whole() -> None:
    refusal = unknown_field("anthropic.messages", {"x" * 100_000: 1})
    assert refusal is not None and len(refusal.message) < 300
