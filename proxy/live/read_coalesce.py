"""One read of an upstream's reply body is one body event, however many HTTP chunks it held.

mitmproxy's HTTP/1 client layer turns every chunk of a chunked body into its own `ResponseData`
event, and a streamed reply pays for each one: the layers' dispatch, the live tap, the chunk
framing towards the arm and a socket write. An SSE vendor writes an event per chunk; when the
proxy reads after several have arrived (a fast upstream, a busy proxy, 32 streams at once), all
of them are in one read, and relaying them one by one is the whole of a stream's added time.

`install` wraps `Http1Client.read_body` so the data events that one read yields are joined into
one, handed on before whatever came next (the end of the message, an error, a close). Nothing
waits: the bytes were all received already, and they go out together at once. The tap and the
arm see the same bytes in the same order; only the split into pieces differs, which HTTP/1
chunking never promised to keep (the proxy re-chunks a stream anyway).
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from typing import Any

from mitmproxy.proxy import events
from mitmproxy.proxy.layers.http import _http1
from mitmproxy.proxy.layers.http._base import ReceiveHttp
from mitmproxy.proxy.layers.http._events import ResponseData

_INSTALLED = "_harness_read_coalesce"


def install() -> None:
    """Idempotent: the wrapper goes on once per process."""
    client: Any = _http1.Http1Client
    if getattr(client.read_body, _INSTALLED, False):
        return
    client.read_body = _coalesced(client.read_body)


def _coalesced(read_body: Callable[[Any, events.Event], Generator]) -> Callable[..., Any]:
    def read_body_coalesced(self: Any, event: events.Event) -> Generator:
        held: list[ResponseData] = []
        for command in read_body(self, event):
            if isinstance(command, ReceiveHttp) and type(command.event) is ResponseData:
                held.append(command.event)
                continue
            if held:
                yield _joined(held)
                held = []
            yield command
        if held:
            yield _joined(held)

    setattr(read_body_coalesced, _INSTALLED, True)
    return read_body_coalesced


def _joined(held: list[ResponseData]) -> ReceiveHttp:
    if len(held) == 1:
        return ReceiveHttp(held[0])
    return ReceiveHttp(ResponseData(held[0].stream_id, b"".join(e.data for e in held)))
