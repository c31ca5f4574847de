"""A live call pointed at its vendor: the upstream URL in place of the proxy's, the study's key in
place of whatever credentials the arm sent, and the pinned body written back as mitmproxy's own
`content` setter would write it."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlsplit

from mitmproxy import http

from proxy.flow import CallState, rewrite

# `json.dumps(..., separators=(",", ":"))` builds an encoder per call; this one is made once.
_COMPACT = json.JSONEncoder(separators=(",", ":"))
# Whatever credential an arm sends is dropped; the study's key is set in the vendor's header.
CREDENTIAL_HEADERS = (
    "authorization",
    "x-api-key",
    "api-key",
    "anthropic-api-key",
    "x-goog-api-key",
)


class Upstream:
    """A vendor's upstream URL, read once into what `point_upstream` sets."""

    def __init__(self, url: str) -> None:
        parts = urlsplit(url)
        self.scheme = parts.scheme
        self.netloc = parts.netloc
        self.host = parts.hostname or ""
        self.port = parts.port or (443 if parts.scheme == "https" else 80)
        self.path = parts.path.rstrip("/")


def point_upstream(
    flow: http.HTTPFlow, state: CallState, upstream: Upstream, body: dict[str, Any], key: str
) -> None:
    """The request rewritten for `upstream` with `key`; `body` (the call as pinned) replaces the
    arm's when the proxy rewrote it."""
    req = flow.request
    query = req.path.partition("?")[2]
    req.scheme = upstream.scheme
    # Through `data`: the `host` and `port` setters would each rebuild the Host header and
    # the authority; the Host header is set below, the authority (HTTP/2) here, once.
    req.data.host = upstream.host
    req.data.port = upstream.port
    if req.data.authority:
        req.authority = upstream.netloc
    req.path = upstream.path + state.path + (f"?{query}" if query else "")
    # The arm's credentials out, the study's key in; chunks must arrive as the vendor sent
    # them, not compressed, for the usage tap.
    put = {"host": upstream.netloc, "accept-encoding": "identity"}
    if state.vendor == "anthropic":
        put["x-api-key"] = key
    else:
        put["authorization"] = f"Bearer {key}"
    drop: tuple[str, ...] = CREDENTIAL_HEADERS
    if state.rewrites:
        # What mitmproxy's `content` setter does, in the one pass over the headers below:
        # the body as is (intake let only identity through), its length unless the request
        # is framed by transfer-encoding, and an encoding it cannot apply dropped.
        content = _COMPACT.encode(body).encode()
        req.raw_content = content
        framed, odd_encoding = body_framing(req.headers)
        if not framed:
            put["content-length"] = str(len(content))
        if odd_encoding:
            drop = (*CREDENTIAL_HEADERS, "content-encoding")
    rewrite(req.headers, drop, put)


def body_framing(headers: http.Headers) -> tuple[bool, bool]:
    """(a transfer-encoding is set, a content-encoding other than identity is set), as
    `Message.set_content` reads them."""
    framed = False
    encodings = []
    for name, value in headers.fields:
        lowered = name.lower()
        if lowered == b"transfer-encoding":
            framed = True
        elif lowered == b"content-encoding":
            encodings.append(value)
    # Repeated fields fold with ", " (`Headers.get`); mitmproxy encodes with the folded value.
    encoding = b", ".join(encodings).lower()
    return framed, encoding not in (b"", b"identity")
