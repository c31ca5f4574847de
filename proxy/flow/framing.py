"""Requests whose HTTP/1 framing the proxy refuses get the vendor's error JSON, not an HTML page.

mitmproxy's HTTP/1 server layer refuses a request it cannot frame safely (Content-Length with
Transfer-Encoding, duplicate or malformed Content-Length, an unknown Transfer-Encoding, a bad
header line, a broken chunked body) by writing its own `400 Bad Request` HTML page and closing
the connection, before any addon hook runs: the arm's SDK then sees a page no vendor sends, and the
call never reaches the call log. Nothing is forwarded either way.

`install` wraps the layer's two reading states (`Http1Server.read_headers`, `read_body`) so that
every such refusal is the vendor's own 400 JSON (the vendor read from the request line, as the
addon reads it), and is handed on to the addon's `error` hook with a message that starts with
`REFUSAL_MARK`; the addon logs it as a `bad_request` call (proxy.app.addon). The wrapper is stricter
than mitmproxy where mitmproxy lets through what a vendor's front end would refuse or a
downstream server could read differently (request smuggling): a Transfer-Encoding other than
exactly `chunked`, and a request head larger than `HEAD_LIMIT` (mitmproxy buffers it unbounded).
"""

from __future__ import annotations

import html
import json
import re
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from mitmproxy import http
from mitmproxy.proxy import commands, events
from mitmproxy.proxy.layers.http import _http1
from mitmproxy.proxy.layers.http._base import ReceiveHttp
from mitmproxy.proxy.layers.http._events import (
    ErrorCode,
    RequestHeaders,
    RequestProtocolError,
    ResponseProtocolError,
)

from vendors.errors import error_reply
from vendors.hosts import split_vendor

# The start of the error message a refused request's flow carries to the addon's `error` hook;
# then its status and the reason sent to the arm (`parse_refusal`).
REFUSAL_MARK = "harness refused the request's framing: "
# A request head (request line and headers) larger than this is refused: the SDKs send a few KiB.
HEAD_LIMIT = 64 * 1024
_MARKED = re.compile(re.escape(REFUSAL_MARK) + r"(\d{3}) (.*)", re.DOTALL)
_LENGTH = re.compile(rb"0|[1-9][0-9]{0,17}")
# RFC 9110's token: what a header name may be (mitmproxy's own check, net.http.validate).
_TOKEN = re.compile(rb"[!#$%&'*+\-.^_`|~0-9a-zA-Z]+")
# At most this much of an arm's header value is quoted back in an error message.
_QUOTE = 60


@dataclass(frozen=True)
class Refusal:
    status: int
    reason: str


def parse_refusal(message: str) -> Refusal | None:
    """The refusal a flow's error message carries, or None for any other error."""
    found = _MARKED.fullmatch(message)
    return Refusal(int(found.group(1)), found.group(2)) if found else None


def head_refusal(buffered: bytes) -> Refusal | None:
    """What is wrong with the framing of the request head at the start of `buffered` (the
    layer's receive buffer), or None if mitmproxy may read it (it still refuses what it cannot
    parse; that refusal is turned into the vendor's too)."""
    end = buffered.find(b"\r\n\r\n")
    if end < 0:
        end = buffered.find(b"\n\n")
    if end < 0:
        if len(buffered) > HEAD_LIMIT:
            return Refusal(400, f"The request head is larger than {HEAD_LIMIT} bytes.")
        return None
    if end > HEAD_LIMIT:
        return Refusal(400, f"The request head is larger than {HEAD_LIMIT} bytes.")
    lengths: list[bytes] = []
    encodings: list[bytes] = []
    lines = buffered[:end].splitlines()
    for line in lines[1:]:
        if line[:1] in (b" ", b"\t"):
            # Obsolete line folding: servers join or split it differently (RFC 9112 5.2).
            return Refusal(400, "The request folds a header over two lines.")
        name, sep, value = line.partition(b":")
        if not sep:
            continue  # mitmproxy refuses it (turned into the vendor's refusal by the wrapper)
        if not _TOKEN.fullmatch(name):
            # A name with a space before its colon is read as another header by some servers.
            return Refusal(400, f"Header name {_quoted(name)} is not a valid token.")
        key = name.lower()
        if key == b"content-length":
            lengths.append(value.strip())
        elif key == b"transfer-encoding":
            encodings.append(value.strip())
    if encodings and lengths:
        return Refusal(400, "The request has both Content-Length and Transfer-Encoding.")
    http11 = lines[0].rstrip().endswith(b" HTTP/1.1")
    if len(encodings) > 1 or (encodings and (encodings[0].lower() != b"chunked" or not http11)):
        return Refusal(
            400, f"Transfer-Encoding {_quoted(b', '.join(encodings))} is not accepted; use chunked."
        )
    if len(lengths) > 1:
        return Refusal(400, "The request has more than one Content-Length.")
    if lengths and not _LENGTH.fullmatch(lengths[0]):
        return Refusal(400, f"Content-Length {_quoted(lengths[0])} is not a length.")
    return None


def vendor_page(buffered: bytes, status: int, reason: str) -> bytes:
    """The full HTTP/1 response (closing the connection) the vendor would send, for the request
    whose head starts `buffered`."""
    target, host = _target(buffered)
    vendor, _ = split_vendor(target, host, {})
    reply = error_reply(vendor, status, reason)
    return http1_response(status, b"".join(reply.chunks))


def http1_response(status: int, body: bytes) -> bytes:
    response = http.Response.make(
        status, body, {"content-type": "application/json", "connection": "close"}
    )
    return _http1.http1.assemble_response(response)


def install() -> None:
    """Wrap mitmproxy's HTTP/1 server reading states, once per process."""
    server: Any = _http1.Http1Server
    if getattr(server, "_harness_framing", False):
        return
    server.read_headers = _guard_headers(server.read_headers)
    server.read_body = _guard_body(server.read_body)
    server.send = _guard_send(server.send)
    server._harness_framing = True


Generator = Iterator[Any]


def _guard_headers(read_headers: Callable[[Any, events.Event], Generator]) -> Callable[..., Any]:
    def read_headers_guarded(self: Any, event: events.Event) -> Generator:
        if not isinstance(event, events.DataReceived):
            yield from read_headers(self, event)
            return
        buffered = bytes(self.buf)
        refusal = head_refusal(buffered)
        if refusal is not None:
            yield from _refuse(self, buffered, refusal)
            return
        refused = False
        for command in read_headers(self, event):
            if (
                isinstance(command, commands.SendData)
                and command.connection is self.conn
                and _is_mitmproxy_page(command.data)
            ):
                # mitmproxy's own 400 page: the only data this state ever sends. Its reason
                # (str of the ValueError) quotes the arm's bytes; it is bounded.
                refused = True
                reason = f"The request head is malformed: {_reason_of(command.data)}"
                yield commands.SendData(self.conn, vendor_page(buffered, 400, reason))
            elif (
                refused
                and isinstance(command, ReceiveHttp)
                and isinstance(command.event, RequestProtocolError)
            ):
                # The refusal's hand-over to the addon (mitmproxy sends it after the page).
                yield ReceiveHttp(_marked(self.stream_id, 400, command.event.message))
            else:
                yield command
        if refused and self.request is None:
            # mitmproxy could not read even the head, so it hands nothing on: the addon gets
            # the request line, to log the call.
            self.request = _request_of(buffered)
            yield ReceiveHttp(RequestHeaders(self.stream_id, self.request, False))
            yield ReceiveHttp(_marked(self.stream_id, 400, "The request head is malformed."))

    return read_headers_guarded


def _guard_body(read_body: Callable[[Any, events.Event], Generator]) -> Callable[..., Any]:
    def read_body_guarded(self: Any, event: events.Event) -> Generator:
        if not isinstance(event, events.DataReceived):
            # The arm hung up mid-body: nothing to answer (a disconnect, not a framing error).
            yield from read_body(self, event)
            return
        # read_body refuses a body h11 cannot read (a broken chunked body) with a close and then
        # its protocol error, and nothing else. A close is held until the next command shows
        # which it is: a close of another kind (the exchange done, or a pipelined request's own
        # refusal, read within this state) is passed on as it came.
        held: commands.CloseConnection | None = None
        for command in read_body(self, event):
            if held is not None:
                if (
                    isinstance(command, ReceiveHttp)
                    and isinstance(command.event, RequestProtocolError)
                    and self.response is None
                    and not command.event.message.startswith(REFUSAL_MARK)
                ):
                    reason = "The request body's chunked encoding is malformed."
                    yield commands.SendData(self.conn, vendor_page(_head_of(self), 400, reason))
                    yield held
                    yield ReceiveHttp(_marked(self.stream_id, 400, command.event.message))
                    held = None
                    continue
                yield held
                held = None
            if isinstance(command, commands.CloseConnection) and command.connection is self.conn:
                held = command
            else:
                yield command
        if held is not None:
            yield held

    return read_body_guarded


def _guard_send(send: Callable[[Any, Any], Generator]) -> Callable[..., Any]:
    def send_guarded(self: Any, event: Any) -> Generator:
        """mitmproxy's page for a request it refused after reading it (its header validation,
        an unknown destination) becomes the vendor's JSON with the same status."""
        if not isinstance(event, ResponseProtocolError) or self.response is not None:
            yield from send(self, event)
            return
        for command in send(self, event):
            if isinstance(command, commands.SendData) and _is_mitmproxy_page(command.data):
                status = int(command.data.split(b" ", 2)[1])
                reason = f"The request was refused: {_reason_of(command.data)}"
                yield commands.SendData(self.conn, vendor_page(_head_of(self), status, reason))
            else:
                yield command

    return send_guarded


def _refuse(self: Any, buffered: bytes, refusal: Refusal) -> Generator:
    """Answer, close, and hand the refused request to the addon (as mitmproxy hands on the
    requests it refuses: its headers, then the protocol error)."""
    yield commands.SendData(self.conn, vendor_page(buffered, refusal.status, refusal.reason))
    yield commands.CloseConnection(self.conn)
    self.request = _request_of(buffered)
    yield ReceiveHttp(RequestHeaders(self.stream_id, self.request, False))
    yield ReceiveHttp(_marked(self.stream_id, refusal.status, refusal.reason))
    self.state = self.done


def _marked(stream_id: int, status: int, reason: str) -> RequestProtocolError:
    return RequestProtocolError(
        stream_id, f"{REFUSAL_MARK}{status} {reason}", ErrorCode.GENERIC_CLIENT_ERROR
    )


def _target(buffered: bytes) -> tuple[str, str]:
    """(request target, Host header) of the head at the start of `buffered`, as text."""
    lines = buffered[: min(len(buffered), HEAD_LIMIT)].split(b"\r\n\r\n", 1)[0].splitlines()
    parts = lines[0].split() if lines else []
    target = parts[1] if len(parts) >= 2 else b"/"
    host = b""
    for line in lines[1:]:
        name, sep, value = line.partition(b":")
        if sep and name.strip().lower() == b"host":
            host = value.strip()
            break
    if target.startswith((b"http://", b"https://")):  # absolute form, through the forward proxy
        rest = target.split(b"://", 1)[1]
        authority, slash, path = rest.partition(b"/")
        host, target = authority, slash + path or b"/"
    return _text(target), _text(host)


def _request_of(buffered: bytes) -> http.Request:
    """The refused request as far as its request line and Host header go (its headers are not
    read: they are what was refused)."""
    target, host = _target(buffered)
    first = buffered.split(b"\r\n", 1)[0].split()
    method = first[0][:16] if first else b"POST"
    headers = http.Headers(host=host) if host else http.Headers()
    return http.Request(
        host="",
        port=0,
        method=method,
        scheme=b"http",
        authority=b"",
        path=target.encode("utf-8", "surrogateescape"),
        http_version=b"HTTP/1.1",
        headers=headers,
        content=None,
        trailers=None,
        timestamp_start=time.time(),
        timestamp_end=None,
    )


def _head_of(self: Any) -> bytes:
    """The head of the request being read (for its vendor), rebuilt from the parsed request."""
    request = getattr(self, "request", None)
    if request is None:
        return b""
    host = request.headers.get("host", "")
    return b"%s %s HTTP/1.1\r\nhost: %s\r\n\r\n" % (
        request.data.method,
        request.data.path,
        host.encode("utf-8", "surrogateescape"),
    )


def _is_mitmproxy_page(data: bytes) -> bool:
    head = data.split(b"\r\n\r\n", 1)[0].lower()
    return b"\r\ncontent-type: text/html" in head


def _reason_of(page: bytes) -> str:
    """mitmproxy's reason from its error page (`<p>...</p>`), bounded; else a plain one."""
    found = re.search(rb"<p>(.*?)</p>", page, re.DOTALL)
    if not found:
        return "mitmproxy could not parse it"
    return html.unescape(found.group(1).decode("utf-8", "replace"))[:200]


def _quoted(value: bytes) -> str:
    return json.dumps(value[:_QUOTE].decode("utf-8", "backslashreplace"))


def _text(value: bytes) -> str:
    return value.decode("utf-8", "surrogateescape")
