"""Per route, the checks a request must pass before anything reads it (the vendor's 400s), run by
proxy.flow.intake in every mode (proxy/app passes `check_body` to it). Record mode then refuses
what the vendor refuses, and live mode never meters (or crashes on) a field of the wrong type or
value. Vendor facts: no mode's code is needed to run them.

Imports are lazy, so a call loads only its own route's checks, and one vendor's module failing
does not take the others down.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

# route name -> "module:function" raising VendorRequestError for a body the vendor refuses.
CHECKS: dict[str, str] = {
    "anthropic.messages": "vendors.requests.anthropic_messages:check_create",
    "anthropic.count_tokens": "vendors.requests.anthropic_messages:check_messages",
    "anthropic.chat": "vendors.requests.anthropic_compat:check_compat",
    "openai.chat": "vendors.requests.openai_chat:check_chat",
    "openai.responses": "vendors.requests.openai_responses:check_responses",
    "openai.embeddings": "vendors.requests.embeddings:check_embeddings",
    "cohere.rerank": "vendors.requests.rerank:check_cohere",
    "voyage.rerank": "vendors.requests.rerank:check_voyage",
}


# route name -> its check, once imported (every call's intake asks: no import lookup each time).
_LOADED: dict[str, Callable[[dict[str, Any]], None]] = {}


def check_body(route: str, body: dict[str, Any]) -> None:
    """Raise VendorRequestError (the vendor's 400) if `route` refuses `body`; a route with no
    checks (a GET) accepts any body."""
    check = _LOADED.get(route)
    if check is None:
        ref = CHECKS.get(route)
        if ref is None:
            return
        module, name = ref.split(":")
        check = _LOADED[route] = getattr(importlib.import_module(module), name)
    check(body)
