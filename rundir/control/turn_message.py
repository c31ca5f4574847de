"""The `/turn` control message: which item and turn an arm runs now (orchestrator -> proxy).

The orchestrator POSTs it to the proxy's control endpoint (proxy/flow/control.py) before each turn
and with `item` null once the arm is between turns; every call the arm sends meanwhile is attributed
to that turn. `phase = "ingest"` marks a memory benchmark's history being ingested (seam v2):
`turn` is then the history session's index, and a call that names no purpose gets `ingest`.
`phase = "guard"` marks the study's output guard checking the arm's turn (harness/guard.py): every
call on the arm's listener meanwhile is purpose `guard` whatever its headers say, booked on that
turn; a guard message with `item` null ends it and leaves the arm's own turn as it was.
A format the harness and the proxy share, so it lives with the run's formats.
"""

from __future__ import annotations

from typing import Literal

from pydantic import ConfigDict, Field, model_validator

from rundir.model import RunDirModel

GUARD_PHASE = "guard"  # also the purpose the proxy books the guard's calls under


class TurnMessage(RunDirModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    schema_: Literal[1] = Field(1, alias="schema")
    arm: str = Field(min_length=1)
    item: str | None = None
    turn: int | None = Field(None, ge=0)
    phase: Literal["answer", "ingest", "guard"] = "answer"

    @model_validator(mode="after")
    def _turn_with_item(self) -> TurnMessage:
        if self.item is not None and self.turn is None:
            raise ValueError("a message naming an item names its turn too")
        return self
