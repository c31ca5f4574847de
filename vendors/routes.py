"""The vendor routes the proxy speaks: (vendor, method, path) -> route name, and whether the route
streams. Facts about the vendors' APIs, shared by every mode: record mode's handler per route is in
stubs/routes.py, so live metering reads this table without loading any stub.
"""

from __future__ import annotations

from dataclasses import dataclass

from vendors.hosts import Vendor


@dataclass(frozen=True)
class Route:
    vendor: Vendor
    method: str
    path: str
    name: str
    streams: bool = False  # whether the route honours `"stream": true`


ROUTES: tuple[Route, ...] = (
    Route(
        "anthropic",
        "POST",
        "/v1/messages",
        "anthropic.messages",
        streams=True,
    ),
    Route(
        "anthropic",
        "POST",
        "/v1/messages/count_tokens",
        "anthropic.count_tokens",
    ),
    Route("anthropic", "GET", "/v1/models", "anthropic.models"),
    Route(
        "openai",
        "POST",
        "/v1/chat/completions",
        "openai.chat",
        streams=True,
    ),
    Route(
        "openai",
        "POST",
        "/v1/responses",
        "openai.responses",
        streams=True,
    ),
    Route(
        "openai",
        "POST",
        "/v1/embeddings",
        "openai.embeddings",
    ),
    Route("openai", "GET", "/v1/models", "openai.models"),
    Route("cohere", "POST", "/v2/rerank", "cohere.rerank"),
    Route("voyage", "POST", "/v1/rerank", "voyage.rerank"),
)

_BY_KEY = {(r.vendor, r.method, r.path): r for r in ROUTES}


def find_route(vendor: Vendor, method: str, path: str) -> Route | None:
    return _BY_KEY.get((vendor, method.upper(), path.rstrip("/") or "/"))
