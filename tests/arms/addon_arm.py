"""An arm for the turn-context tests: it replies with what it was given and returns a turn
context (a `TurnAddon`) naming it; `twice` yields two turn contexts (refused), `none` none."""

from __future__ import annotations

from collections.abc import AsyncIterator

from arms.arm import Arm, TurnAddon
from arms.seam import OpenSession, Turn
from arms.server import main


class AddonArm(Arm):
    name = "addon"

    async def open_session(self, session: OpenSession) -> None:
        pass

    async def turn(self, session_id: str, turn: Turn) -> AsyncIterator[str | TurnAddon]:
        yield f"user={turn.user_message()!r} system={turn.system_addon()!r}"
        if turn.user == "none":
            return
        yield TurnAddon(f"context of turn {turn.turn}")
        if turn.user == "twice":
            yield TurnAddon("a second one")


if __name__ == "__main__":
    main(AddonArm)
