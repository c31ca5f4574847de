"""The orchestrator's control channel into the proxy: which item and turn each arm is running.

A separate mitmproxy addon serving a tiny HTTP endpoint on 127.0.0.1 (option
`harness_control_port`, 0 = off). The orchestrator POSTs `{"arm", "item", "turn"}` before each
turn; `HarnessAddon` reads `current(arm)` when a call arrives, so a call is charged to the turn
running when it was sent (a cut turn's leftover work lands on the turn that runs then).

It is not served through mitmproxy's listeners on purpose: every flow there is an arm's vendor
call (logged, metered); control requests must never look like one. Arms cannot reach it: the
docker backend does not publish it, and the local backend's socket guard allows only the arm's
own proxy listener.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from dataclasses import dataclass

import structlog
from mitmproxy import ctx

log = structlog.get_logger("harness.proxy.control")

MAX_BODY = 64 * 1024


@dataclass(frozen=True)
class TurnRef:
    item: str
    turn: int


_current: dict[str, TurnRef] = {}


def current(arm: str) -> TurnRef | None:
    """The item and turn `arm` is running now, if the orchestrator said so."""
    return _current.get(arm)


def set_current(arm: str, ref: TurnRef | None) -> None:
    if ref is None:
        _current.pop(arm, None)
    else:
        _current[arm] = ref


class HarnessControl:
    def __init__(self) -> None:
        self.server: asyncio.Server | None = None

    def load(self, loader: object) -> None:
        loader.add_option(  # type: ignore[attr-defined]
            "harness_control_port", int, 0, "127.0.0.1 port of the control endpoint (0: off)."
        )

    async def running(self) -> None:
        port = ctx.options.harness_control_port
        if port:
            self.server = await asyncio.start_server(self._serve, "127.0.0.1", port)

    async def done(self) -> None:
        if self.server is not None:
            self.server.close()
            with contextlib.suppress(Exception):
                await self.server.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                request = await _read_request(reader)
                if request is None:
                    break
                status, body = self._handle(*request)
                payload = json.dumps(body).encode()
                reason = "OK" if status == 200 else "Bad Request"
                head = (
                    f"HTTP/1.1 {status} {reason}\r\ncontent-type: application/json\r\n"
                    f"content-length: {len(payload)}\r\n\r\n"
                )
                writer.write(head.encode() + payload)
                await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError, ValueError):
            pass
        finally:
            writer.close()

    def _handle(self, method: str, path: str, body: bytes) -> tuple[int, object]:
        if path != "/turn":
            return 400, {"error": f"unknown path {path}; use /turn"}
        if method == "GET":
            return 200, {arm: vars(ref) for arm, ref in _current.items()}
        try:
            data = json.loads(body)
            arm = str(data["arm"])
            ref = (
                None if data.get("item") is None else TurnRef(str(data["item"]), int(data["turn"]))
            )
        except (ValueError, KeyError, TypeError) as e:
            return 400, {"error": f'body must be {{"arm", "item", "turn"}}: {e}'}
        set_current(arm, ref)
        log.debug("turn", arm=arm, item=ref and ref.item, turn=ref and ref.turn)
        return 200, {"arm": arm, "item": ref and ref.item, "turn": ref and ref.turn}


async def _read_request(reader: asyncio.StreamReader) -> tuple[str, str, bytes] | None:
    head = await reader.readuntil(b"\r\n\r\n") if not reader.at_eof() else b""
    if not head:
        return None
    lines = head.decode("latin-1").split("\r\n")
    method, path, _ = lines[0].split(" ", 2)
    length = 0
    for line in lines[1:]:
        name, _, value = line.partition(":")
        if name.strip().lower() == "content-length":
            length = int(value.strip())
    if length > MAX_BODY:
        raise ValueError("control request too large")
    body = await reader.readexactly(length) if length else b""
    return method, path, body
