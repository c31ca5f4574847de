"""The seam, version 1: the small HTTP API every arm serves and the orchestrator drives.

- `GET /health` -> `Health`
- `POST /sessions` with `OpenSession` -> 201 `{"session_id": ...}`
- `POST /sessions/{id}/turns` with `Turn` -> 200, an NDJSON stream of `Delta` lines and one final
  `Done` or `Error` line
- `DELETE /sessions/{id}` -> 200 `{"session_id": ...}`
- a refused request -> 404 / 409 / 422 with a `Problem` body

These models are the one definition both sides use (arms/server.py serves them, arms/client.py
parses them), so the two cannot drift apart.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

SEAM_VERSION: Final = 1

# The content type of a turn's stream: one JSON object per line.
NDJSON: Final = "application/x-ndjson"


class _Request(BaseModel):
    # Unknown fields are refused rather than ignored: a misspelt field (`deadline` for
    # `deadline_ms`) would otherwise silently fall back to a default and skew a study.
    model_config = ConfigDict(extra="forbid")


class Health(BaseModel):
    seam: int = SEAM_VERSION
    arm: str


class OpenSession(_Request):
    session_id: str = Field(min_length=1, max_length=200, pattern=r"^[A-Za-z0-9._:-]+$")
    item_id: str = Field(min_length=1)
    # The item's pinned wall time. Arms must take "now" from here, not from their own clock, so
    # that two runs of the same script send the same requests (the determinism gate).
    clock: datetime
    # Optional background the study gives the arm for this item (a persona, earlier history).
    context: str | None = None


class Turn(_Request):
    turn: int = Field(ge=0)
    user: str
    # Text the study adds to this turn (e.g. an answer-format instruction); arms append it to
    # the user's message so every arm sees the same instruction in the same place.
    addon: str = ""
    # The orchestrator enforces the deadline itself; arms get it so they can budget their work.
    deadline_ms: int = Field(gt=0)
    clock: datetime

    def user_message(self) -> str:
        return f"{self.user}\n\n{self.addon}" if self.addon else self.user


class Delta(BaseModel):
    type: Literal["delta"] = "delta"
    text: str


class Done(BaseModel):
    type: Literal["done"] = "done"
    text: str  # the whole reply: the concatenation of every delta


class Error(BaseModel):
    type: Literal["error"] = "error"
    message: str


StreamLine = Annotated[Delta | Done | Error, Field(discriminator="type")]
STREAM_LINE: Final[TypeAdapter[Delta | Done | Error]] = TypeAdapter(StreamLine)


class Problem(BaseModel):
    """The body of every refused request, so a client can show what to fix."""

    error: Literal[
        "unknown_session",
        "duplicate_session",
        "bad_request",
        "not_found",
        "bad_method",
        "arm_failed",
    ]
    message: str


class SessionRef(BaseModel):
    session_id: str


def stream_line(line: Delta | Done | Error) -> bytes:
    return line.model_dump_json().encode() + b"\n"
