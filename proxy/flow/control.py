"""The orchestrator's control channel into the proxy: which item and turn each arm is running.

A separate mitmproxy addon serving a tiny HTTP endpoint on 127.0.0.1 (option
`harness_control_port`, 0 = off). The orchestrator POSTs a `TurnMessage`
(rundir/control/turn_message.py) before each turn into a `TurnBoard` that this addon and
`HarnessAddon` share; the addon reads the arm's turn when a call arrives, so a call is charged to
the turn running when it was sent (a cut turn's leftover work lands on the turn that runs then).

It is not served through mitmproxy's listeners on purpose: every flow there is an arm's vendor
call (logged, metered); control requests must never look like one. Arms cannot reach it: the
docker backend does not publish it, and the local backend's socket guard allows only the arm's
own proxy listener.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
from dataclasses import dataclass

import structlog
from mitmproxy import ctx
from mitmproxy.addonmanager import Loader
from pydantic import ValidationError

from proxy.flow.safe_json import HostileJSON, parse_body
from rundir.control import GUARD_PHASE, TurnMessage

log = structlog.get_logger("harness.proxy.control")

MAX_BODY = 64 * 1024
REASONS = {200: "OK", 400: "Bad Request", 413: "Content Too Large"}


# A refused body is read and dropped, up to this much, before the connection closes: closing on
# unread bytes resets it, and a reset can discard the answer before the sender reads it.
DRAIN_LIMIT = 1024 * 1024
DRAIN_TIMEOUT_S = 2.0

SHUTDOWN_TIMEOUT_S = 5.0  # for the control server's connections to end at shutdown


class RefusedFraming(ValueError):
    """A control request whose head cannot be trusted (a body too large, a length that is no
    number): answered with `status`, then the connection is closed, its body never parsed."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class TurnRef:
    item: str
    turn: int
    # "ingest": the arm's memory takes in a history session (seam v2), not an answer's turn.
    phase: str = "answer"


class TurnBoard:
    """The item and turn each arm runs now, as the orchestrator last said. One per control
    addon (HarnessAddon finds it with `addons.get`), so two proxies in one process (the
    in-process tests) never see each other's turns."""

    def __init__(self) -> None:
        self._turns: dict[str, TurnRef] = {}
        # The output guard checking an arm's turn (phase "guard"): it holds the arm's listener
        # over the arm's own turn until it ends, which leaves that turn as it was.
        self._guards: dict[str, TurnRef] = {}

    def current(self, arm: str) -> TurnRef | None:
        return self._guards.get(arm) or self._turns.get(arm)

    def set_guard(self, arm: str, ref: TurnRef | None) -> None:
        if ref is None:
            self._guards.pop(arm, None)
        else:
            self._guards[arm] = ref

    def set(self, arm: str, ref: TurnRef | None) -> None:
        if ref is None:
            self._turns.pop(arm, None)
        else:
            self._turns[arm] = ref

    def snapshot(self) -> dict[str, dict[str, object]]:
        # An answer's turn shows as it always did; an ingestion says so.
        return {
            arm: {"item": ref.item, "turn": ref.turn}
            | ({"phase": ref.phase} if ref.phase != "answer" else {})
            for arm, ref in self._turns.items()
        }


class HarnessControl:
    def __init__(self) -> None:
        self.turns = TurnBoard()
        self.server: asyncio.Server | None = None
        self._clients: set[asyncio.StreamWriter] = set()

    def load(self, loader: Loader) -> None:
        loader.add_option(
            "harness_control_port", int, 0, "127.0.0.1 port of the control endpoint (0: off)."
        )

    async def running(self) -> None:
        port = ctx.options.harness_control_port
        if port:
            self.server = await asyncio.start_server(self._serve, "127.0.0.1", port)

    async def done(self) -> None:
        if self.server is not None:
            self.server.close()
            # Since Python 3.12 `wait_closed` also waits for every connection to end, and the
            # orchestrator's keep-alive client may still hold one: the proxy would never stop.
            # Close them first (nothing is in flight: a message is answered before it returns).
            for writer in list(self._clients):
                writer.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.server.wait_closed(), SHUTDOWN_TIMEOUT_S)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._clients.add(writer)
        try:
            while True:
                try:
                    request = await _read_request(reader)
                except RefusedFraming as e:
                    await _answer(writer, e.status, {"error": str(e)}, close=True)
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(_drain(reader), DRAIN_TIMEOUT_S)
                    break
                if request is None:
                    break
                await _answer(writer, *self._handle(*request))
        except (ConnectionError, asyncio.IncompleteReadError, ValueError):
            pass
        finally:
            self._clients.discard(writer)
            writer.close()

    def _handle(self, method: str, path: str, body: bytes) -> tuple[int, object]:
        if path != "/turn":
            return 400, {"error": f"unknown path {path}; use /turn"}
        if method == "GET":
            return 200, self.turns.snapshot()
        try:
            # Strict: a turn of `true`, "3" or 3.0 is a sender's bug, not turn 1 or 3; a key given
            # twice, a huge number or a deep body is refused as the vendor routes refuse them.
            message = TurnMessage.model_validate(parse_body(body), strict=True)
        except HostileJSON as e:
            return 400, {"error": f"body must be one JSON object: {e}"}
        except ValidationError as e:
            first = e.errors(include_url=False)[0]
            where = ".".join(str(p) for p in first["loc"]) or "body"
            return 400, {
                "error": f'body must be {{"arm", "item", "turn"}}: {where}: {first["msg"]}'
            }
        arm = message.arm
        ref = None
        if message.item is not None and message.turn is not None:
            ref = TurnRef(message.item, message.turn, message.phase)
        if message.phase == GUARD_PHASE:
            self.turns.set_guard(arm, ref)
        else:
            self.turns.set(arm, ref)
        log.debug("turn", arm=arm, item=message.item, turn=message.turn)
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
            if not re.fullmatch(r"[0-9]{1,20}", value.strip()):
                raise RefusedFraming(400, f"content-length {value.strip()[:40]!r} is no length")
            length = int(value.strip())
    if length > MAX_BODY:
        raise RefusedFraming(413, f"a control request body is at most {MAX_BODY} bytes")
    body = await reader.readexactly(length) if length else b""
    return method, path, body


async def _answer(
    writer: asyncio.StreamWriter, status: int, body: object, close: bool = False
) -> None:
    payload = json.dumps(body).encode()
    # A refused request's connection closes after the answer: the sender must not reuse it.
    closing = "connection: close\r\n" if close else ""
    head = (
        f"HTTP/1.1 {status} {REASONS[status]}\r\ncontent-type: application/json\r\n"
        f"content-length: {len(payload)}\r\n{closing}\r\n"
    )
    writer.write(head.encode() + payload)
    await writer.drain()


async def _drain(reader: asyncio.StreamReader) -> None:
    left = DRAIN_LIMIT
    while left > 0 and (chunk := await reader.read(min(left, 64 * 1024))):
        left -= len(chunk)
