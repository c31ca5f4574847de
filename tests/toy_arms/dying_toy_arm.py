"""A toy arm of the coupled example whose process dies in turn 1 the first time (a marker file,
DIE_MARKER, says it already did): an infrastructure failure the harness retries on a fresh arm."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from pathlib import Path

from arms.arm import TurnAddon
from arms.seam import Turn
from arms.server import main
from arms.toy import ToyArm


class DyingToyArm(ToyArm):
    async def turn(self, session_id: str, turn: Turn) -> AsyncIterator[str | TurnAddon]:
        marker = Path(os.environ["DIE_MARKER"])
        if turn.turn == 1 and not marker.exists():
            marker.write_text("died")
            os._exit(1)
        async for part in super().turn(session_id, turn):
            yield part


if __name__ == "__main__":
    main(DyingToyArm)
