"""Record mode's answer per vendor route (vendors/routes.py): route name -> stub handler.

Imports are lazy so that one vendor's module can be edited (or broken) without the others
failing to import.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

from stubs.request import StubRequest
from stubs.rules import StubContext
from vendors.reply import VendorReply
from vendors.routes import Route

Handler = Callable[[StubRequest, StubContext], VendorReply]

# route name -> "module:function"
HANDLERS: dict[str, str] = {
    "anthropic.messages": "stubs.anthropic.messages:messages",
    "anthropic.count_tokens": "stubs.anthropic.messages:count_tokens",
    "anthropic.models": "stubs.models:anthropic_models",
    "anthropic.chat": "stubs.anthropic.compat:compat_chat",
    "openai.chat": "stubs.openai.chat:chat_completions",
    "openai.responses": "stubs.openai.responses:responses",
    "openai.embeddings": "stubs.vectors.embeddings:openai_embeddings",
    "openai.models": "stubs.models:openai_models",
    "cohere.rerank": "stubs.vectors.rerank:cohere_rerank",
    "voyage.rerank": "stubs.vectors.rerank:voyage_rerank",
}


def stub_handler(route: Route) -> Handler:
    """The stub that answers `route` in record mode."""
    module, func = HANDLERS[route.name].split(":")
    handler: Handler = getattr(importlib.import_module(module), func)
    return handler
