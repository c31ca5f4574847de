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
    # The route whose wire format this one speaks, when it is another's (metering reads bodies,
    # usage and streams by shape); "" means its own.
    shape: str = ""

    @property
    def wire(self) -> str:
        """The route name whose request, reply and usage shapes this route uses."""
        return self.shape or self.name


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
    # Anthropic's OpenAI SDK compatibility layer: OpenAI chat completions in and out, priced as
    # the Anthropic model it names (stubs/anthropic/compat.py says what the layer does).
    Route(
        "anthropic",
        "POST",
        "/v1/chat/completions",
        "anthropic.chat",
        streams=True,
        shape="openai.chat",
    ),
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

_BY_NAME = {r.name: r for r in ROUTES}
_BY_KEY = {(r.vendor, r.method, r.path): r for r in ROUTES}


def wire_shape(route_name: str) -> str:
    """The wire shape of the route named `route_name` (itself for all but aliases like
    anthropic.chat, which speaks openai.chat)."""
    route = _BY_NAME.get(route_name)
    return route.wire if route else route_name


def find_route(vendor: Vendor, method: str, path: str) -> Route | None:
    return _BY_KEY.get((vendor, method.upper(), path.rstrip("/") or "/"))
