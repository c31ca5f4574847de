"""The seam, version 2: the small HTTP API every arm serves and the orchestrator drives.

- `GET /health` -> `Health` (v2: `state_dir`, the folder the arm's memory lives in, if any)
- `POST /sessions` with `OpenSession` -> 201 `{"session_id": ...}`
- `POST /sessions/{id}/ingest` with `Ingest` (v2) -> 200 `Ingested`: the arm's memory takes in
  one history session of a memory benchmark, at that session's date; not an answer
- `POST /sessions/{id}/turns` with `Turn` -> 200, an NDJSON stream of `Delta` lines and one final
  `Done` or `Error` line
- `DELETE /sessions/{id}` -> 200 `{"session_id": ...}`
- a refused request -> 404 / 409 / 422 (501: an arm that does not ingest) with a `Problem` body

Version 1 is version 2 without ingestion and `state_dir`: a v1 arm still runs scripted studies.
docs/seam.md is the protocol's description for arm authors in other languages.

These models are the one definition both sides use (arms/server.py serves them, arms/client.py
parses them), so the two cannot drift apart.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Final, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    TypeAdapter,
    model_serializer,
)

SEAM_VERSION: Final = 2
# The versions this harness drives: a v1 arm runs everything but a memory benchmark.
SEAM_VERSIONS: Final = (1, 2)
INGEST_VERSION: Final = 2  # the first version with ingestion

# The content type of a turn's stream: one JSON object per line, each ended by "\n" and only by
# it (a reply may hold U+2028 and the like raw, which str.splitlines() takes for line ends).
NDJSON: Final = "application/x-ndjson"


class LineSplitter:
    """Frames the stream, arriving in pieces, into lines at "\n" only (the framing of
    rundir/jsonlines.py, here because an arm imports nothing of the harness)."""

    def __init__(self) -> None:
        self._pending = ""

    def feed(self, piece: str) -> list[str]:
        """The lines `piece` completes; the rest waits for the next piece."""
        self._pending += piece
        if "\n" not in piece:
            return []
        *lines, self._pending = self._pending.split("\n")
        return lines

    def end(self) -> list[str]:
        """A last line without its "\n", once the stream has ended."""
        rest, self._pending = self._pending, ""
        return [rest] if rest else []


class _Request(BaseModel):
    # Unknown fields are refused rather than ignored: a misspelt field (`deadline` for
    # `deadline_ms`) would otherwise silently fall back to a default and skew a study.
    model_config = ConfigDict(extra="forbid")


class Health(BaseModel):
    seam: int = SEAM_VERSION
    arm: str
    # v2: the folder every bit of the arm's memory lives in ($ARM_STATE_DIR as the arm sees it),
    # or None. With it the harness snapshots the folder once a history is ingested and starts
    # the arm afresh on a copy for each question; without it the history is ingested again
    # for each question, into a new session.
    state_dir: str | None = None


class EngineParity(_Request):
    """A study's engine parity (`[parity]`, the design's V9): what every memory arm under it
    uses, handed over the seam so no arm's own setting can differ. A field not set is the
    arm's own choice."""

    top_k: int | None = Field(None, ge=1)  # memories recalled per turn
    answer_model: str | None = None  # the model the answer (main) call names
    answer_prompt: str | None = None  # the answer's system text, before recalled memories
    answer_max_tokens: int | None = Field(None, ge=1)  # the answer call's output limit
    embed_model: str | None = None  # the embedding model of the arm's own recall


class OpenSession(_Request):
    session_id: str = Field(min_length=1, max_length=200, pattern=r"^[A-Za-z0-9._:-]+$")
    item_id: str = Field(min_length=1)
    # The item's pinned wall time. Arms must take "now" from here, not from their own clock, so
    # that two runs of the same script send the same requests (the determinism gate).
    clock: datetime
    # Optional background the study gives the arm for this item (a persona, earlier history).
    context: str | None = None
    # The study's engine parity for this arm (docs/studies.md, parity), or None. Sent only when
    # set, so arms of other studies (and strict helpers in other languages) see the session as
    # before.
    parity: EngineParity | None = None

    @model_serializer(mode="wrap")
    def _parity_only_when_set(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        if data.get("parity") is None:
            data.pop("parity", None)
        return data


class Turn(_Request):
    turn: int = Field(ge=0)
    user: str
    # Text the study adds to this turn (e.g. an answer-format instruction); arms append it to
    # the user's message so every arm sees the same instruction in the same place.
    addon: str = ""
    # A coupled study (docs/coupled.md): the arm whose turn returned `addon` (its turn context,
    # handed to the arms after it in the same turn). Then the addon is not the user's: arms place
    # it as a system prompt of this turn (`system_addon()`), never in the user message. Sent only
    # when set, so arms of other studies see the turn as before.
    addon_from: str | None = None
    # The orchestrator enforces the deadline itself; arms get it so they can budget their work.
    deadline_ms: int = Field(gt=0)
    clock: datetime

    def user_message(self) -> str:
        """The user's message, with the study's addon appended (not another arm's turn context)."""
        return (
            f"{self.user}\n\n{self.addon}" if self.addon and self.addon_from is None else self.user
        )

    def system_addon(self) -> str:
        """Another arm's turn context for this turn, to send as a system prompt ('' if none)."""
        return self.addon if self.addon_from is not None else ""


class IngestMessage(_Request):
    role: Literal["user", "assistant"]
    content: str
    speaker: str | None = None  # LoCoMo's speakers are two people: the name said it


class Ingest(_Request):
    """One history session for the arm's memory, as it happened at `date`."""

    session_id: str = Field(min_length=1)  # the history session's own id (the dataset's)
    date: datetime  # the session's date: the arm's clock is pinned to it meanwhile
    messages: list[IngestMessage]
    deadline_ms: int = Field(gt=0)


class Ingested(BaseModel):
    session_id: str
    # How many memories the arm says it kept (informational: bare keeps none).
    stored: int = Field(0, ge=0)


class Delta(BaseModel):
    type: Literal["delta"] = "delta"
    text: str


class Done(BaseModel):
    type: Literal["done"] = "done"
    text: str  # the whole reply: the concatenation of every delta
    # The turn context this turn used (e.g. the system text for this turn without its static
    # base and its retrieved memories), returned by a source arm of a coupled study: the harness
    # hands it to the later arms of the same turn (docs/coupled.md). Left out when None.
    addon: str | None = None


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
        "not_implemented",
    ]
    message: str


class SessionRef(BaseModel):
    session_id: str


def stream_line(line: Delta | Done | Error) -> bytes:
    # exclude_none: a done line without a turn context stays as version 2 wrote it.
    return line.model_dump_json(exclude_none=True).encode() + b"\n"
