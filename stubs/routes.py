"""The routes record mode answers: (vendor, method, path) -> route name and stub handler.

Imports are lazy so that one vendor's module can be edited (or broken) without the others
failing to import.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass

from stubs.context import StubContext
from stubs.request import StubReply, StubRequest, Vendor

Handler = Callable[[StubRequest, StubContext], StubReply]


@dataclass(frozen=True)
class Route:
    vendor: Vendor
    method: str
    path: str
    name: str
    handler_ref: str  # "module:function"
    streams: bool = False  # whether the route honours `"stream": true`

    def handler(self) -> Handler:
        module, func = self.handler_ref.split(":")
        handler: Handler = getattr(importlib.import_module(module), func)
        return handler


ROUTES: tuple[Route, ...] = (
    Route(
        "anthropic",
        "POST",
        "/v1/messages",
        "anthropic.messages",
        "stubs.anthropic_messages:messages",
        streams=True,
    ),
    Route(
        "anthropic",
        "POST",
        "/v1/messages/count_tokens",
        "anthropic.count_tokens",
        "stubs.anthropic_messages:count_tokens",
    ),
    Route("anthropic", "GET", "/v1/models", "anthropic.models", "stubs.models:anthropic_models"),
    Route(
        "openai",
        "POST",
        "/v1/chat/completions",
        "openai.chat",
        "stubs.openai_chat:chat_completions",
        streams=True,
    ),
    Route(
        "openai",
        "POST",
        "/v1/responses",
        "openai.responses",
        "stubs.openai_responses:responses",
        streams=True,
    ),
    Route(
        "openai",
        "POST",
        "/v1/embeddings",
        "openai.embeddings",
        "stubs.embeddings:openai_embeddings",
    ),
    Route("openai", "GET", "/v1/models", "openai.models", "stubs.models:openai_models"),
    Route("cohere", "POST", "/v2/rerank", "cohere.rerank", "stubs.rerank:cohere_rerank"),
    Route("voyage", "POST", "/v1/rerank", "voyage.rerank", "stubs.rerank:voyage_rerank"),
)

_BY_KEY = {(r.vendor, r.method, r.path): r for r in ROUTES}


def find_route(vendor: Vendor, method: str, path: str) -> Route | None:
    return _BY_KEY.get((vendor, method.upper(), path.rstrip("/") or "/"))
