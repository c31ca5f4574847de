"""A toy B arm of the coupled example that returns, on turn 1, a turn context over the harness's
cap (harness/run/coupled_item.py MAX_ADDON_BYTES): that turn must fail and hand nothing."""

from __future__ import annotations

from collections.abc import AsyncIterator

from arms.arm import TurnAddon
from arms.seam import Turn
from arms.server import main
from arms.toy import ToyArm

OVER_THE_CAP = "x" * (64 * 1024 + 1)


class BulkyToyArm(ToyArm):
    async def turn(self, session_id: str, turn: Turn) -> AsyncIterator[str | TurnAddon]:
        async for part in super().turn(session_id, turn):
            if isinstance(part, TurnAddon) and turn.turn == 1:
                part = TurnAddon(OVER_THE_CAP)
            yield part


if __name__ == "__main__":
    main(BulkyToyArm)
