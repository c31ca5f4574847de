"""Drive the official SDKs in-process against the real stub handlers.

`stub_transport(vendor)` is an httpx2 transport that turns each SDK request into a StubRequest,
runs the route's handler, and returns its VendorReply, chunk by chunk, so the SDK's own parsing
(streams, `.parse()`, typed errors) runs against the stubs with no socket and no proxy.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx2

from stubs.request import StubRequest
from stubs.routes import stub_handler
from stubs.rules.context import StubContext
from vendors.errors import VendorRequestError, error_reply
from vendors.hosts import Vendor
from vendors.reply import VendorReply
from vendors.routes import find_route

# Fields the tests treat as not changing the masked request, so a streamed and a plain call of
# the same request share a digest (the proxy's own masking decides this in real runs).
DIGEST_IGNORED = ("stream", "stream_options")


def body_digest(body: dict[str, Any]) -> bytes:
    kept = {k: v for k, v in body.items() if k not in DIGEST_IGNORED}
    return hashlib.sha256(json.dumps(kept, sort_keys=True).encode()).digest()


def stub_reply_for(
    vendor: Vendor, request: httpx2.Request, ctx: StubContext, purpose: str = "main"
) -> VendorReply:
    route = find_route(vendor, request.method, request.url.path)
    if route is None:
        return error_reply(vendor, 404, f"no stub route for {request.method} {request.url.path}")
    raw = request.content
    body: dict[str, Any] = json.loads(raw) if raw else {}
    req = StubRequest(
        vendor=vendor,
        route=route.name,
        body=body,
        digest=body_digest(body),
        purpose=request.headers.get("x-harness-purpose", purpose),
    )
    try:
        return stub_handler(route)(req, ctx)
    except VendorRequestError as e:
        return error_reply(vendor, e.status, e.message, e.param, e.code)


class _SyncChunks(httpx2.SyncByteStream):
    def __init__(self, chunks: list[bytes]) -> None:
        self._chunks = chunks

    def __iter__(self) -> Iterator[bytes]:
        yield from self._chunks


class _AsyncChunks(httpx2.AsyncByteStream):
    def __init__(self, chunks: list[bytes]) -> None:
        self._chunks = chunks

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for chunk in self._chunks:
            yield chunk


class StubTransport(httpx2.BaseTransport, httpx2.AsyncBaseTransport):
    """Answers every request from the stubs; `requests` keeps what the SDK sent, `replies` what
    the stubs answered, for assertions."""

    def __init__(self, vendor: Vendor, ctx: StubContext | None = None) -> None:
        self.vendor: Vendor = vendor
        self.ctx = ctx or StubContext()
        self.requests: list[httpx2.Request] = []
        self.replies: list[VendorReply] = []

    def _answer(self, request: httpx2.Request) -> tuple[VendorReply, dict[str, str]]:
        self.requests.append(request)
        reply = stub_reply_for(self.vendor, request, self.ctx)
        self.replies.append(reply)
        headers = {"content-type": reply.content_type, **reply.headers}
        return reply, headers

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        request.read()
        reply, headers = self._answer(request)
        return httpx2.Response(
            reply.status, headers=headers, stream=_SyncChunks(reply.chunks), request=request
        )

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        await request.aread()
        reply, headers = self._answer(request)
        return httpx2.Response(
            reply.status, headers=headers, stream=_AsyncChunks(reply.chunks), request=request
        )
