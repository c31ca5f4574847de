"""The orchestrator's end of the proxy's control channel: which item and turn an arm runs now.

Before each turn the proxy is told the arm, item and turn, and with `item` None once the arm is
between turns, so every call the arm sends is charged to the turn that ran when it was sent. The
message is a `TurnMessage` (rundir/control/turn_message.py), the model proxy/flow/control.py
validates with.
"""

from __future__ import annotations

import ssl
from typing import Literal

import httpx

from harness.isolation import InfraError
from rundir.control import GUARD_PHASE, TurnMessage, instance_name

# The control channel is plain HTTP on 127.0.0.1 (or the run's network): a bare client context,
# never used for a handshake, spares httpx building one with certifi's store for every client
# (~25 ms of CPU each; the guard's client is one per guarded turn), as the seam's clients do
# (harness/isolation/seam_http.py).
_NO_TLS = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)


class ProxyControl:
    def __init__(self, control_url: str, worker: int = 0) -> None:
        # --workers N: worker k tells the proxy about its own instance of each arm (`A@k`), the
        # name its listener carries, so two workers running one arm never share a turn.
        self.worker = worker
        self.client = httpx.AsyncClient(
            base_url=control_url, trust_env=False, timeout=10, verify=_NO_TLS
        )
        self.control_url = control_url

    async def tell(
        self, arm: str, item: str | None, turn: int, phase: Literal["answer", "ingest"] = "answer"
    ) -> None:
        message = TurnMessage(
            arm=instance_name(arm, self.worker), item=item, turn=turn, phase=phase
        )
        try:
            response = await self.client.post(
                "/turn",
                content=message.model_dump_json(by_alias=True),
                headers={"content-type": "application/json"},
            )
            response.raise_for_status()
        except httpx.HTTPError as e:
            # Calls would be logged without their turn: that breaks attribution, so stop.
            raise InfraError(f"the proxy's control endpoint failed: {e}") from e

    def guard(self, arm: str, item: str | None, turn: int) -> None:
        """The study's output guard checks `arm`'s turn (item None: it is done): the proxy books
        every call on the arm's listener meanwhile as purpose guard. Blocking, as the guard is
        (harness/guard.py runs it to its end where the turn's record is written)."""
        message = TurnMessage(
            arm=instance_name(arm, self.worker), item=item, turn=turn, phase=GUARD_PHASE
        )
        try:
            with httpx.Client(
                base_url=self.control_url, trust_env=False, timeout=10, verify=_NO_TLS
            ) as client:
                response = client.post(
                    "/turn",
                    content=message.model_dump_json(by_alias=True),
                    headers={"content-type": "application/json"},
                )
                response.raise_for_status()
        except httpx.HTTPError as e:
            raise InfraError(f"the proxy's control endpoint failed: {e}") from e

    async def aclose(self) -> None:
        await self.client.aclose()
