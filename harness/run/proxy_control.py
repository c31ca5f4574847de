"""The orchestrator's end of the proxy's control channel: which item and turn an arm runs now.

Before each turn the proxy is told the arm, item and turn, and with `item` None once the arm is
between turns, so every call the arm sends is charged to the turn that ran when it was sent. The
message is a `TurnMessage` (rundir/turn_message.py), the model proxy/control.py validates with.
"""

from __future__ import annotations

from typing import Literal

import httpx

from harness.isolation.base import InfraError
from rundir.proxy_file import instance_name
from rundir.turn_message import TurnMessage


class ProxyControl:
    def __init__(self, control_url: str, worker: int = 0) -> None:
        # --workers N: worker k tells the proxy about its own instance of each arm (`A@k`), the
        # name its listener carries, so two workers running one arm never share a turn.
        self.worker = worker
        self.client = httpx.AsyncClient(base_url=control_url, trust_env=False, timeout=10)

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

    async def aclose(self) -> None:
        await self.client.aclose()
