"""The turn records of one attempt at an item on an arm, as turns.jsonl holds them.

The run, item, arm and attempt number are the same for every turn of an attempt, so they are
said once; a record is then the turn's number and how it ended.
"""

from __future__ import annotations

from dataclasses import dataclass

from arms.client import TurnResult
from rundir.turns import TurnOutcome, TurnRecord


@dataclass(frozen=True)
class AttemptRecords:
    run: str
    item: str
    arm: str
    attempt: int

    def failed(self, number: int, outcome: TurnOutcome, error: str) -> TurnRecord:
        """A turn that gave no answer: the seam's error, an infrastructure failure, a halt."""
        return self._record(number, outcome, error=error)

    def answered(self, number: int, result: TurnResult) -> TurnRecord:
        """A turn the arm answered: its text and timing; a broken stream is the arm's error."""
        outcome: TurnOutcome = (
            "done" if result.outcome == "done" else "cut" if result.outcome == "cut" else "error"
        )
        return self._record(
            number,
            outcome,
            text=result.text,
            first_token_s=result.timing.first_token_s,
            last_token_s=result.timing.last_token_s,
            error=result.error,
        )

    def given_up(self, done: list[TurnRecord], turns: int, error: str) -> list[TurnRecord]:
        """The retries are spent: turns the last attempt completed keep their outcome, the rest
        failed for want of an arm, which is the harness's failure, not the arm's."""
        return [self.failed(n, "infra_failed", error) for n in range(len(done), turns)]

    def _record(
        self,
        number: int,
        outcome: TurnOutcome,
        *,
        text: str = "",
        first_token_s: float | None = None,
        last_token_s: float | None = None,
        error: str | None = None,
    ) -> TurnRecord:
        return TurnRecord(
            run=self.run,
            item=self.item,
            arm=self.arm,
            turn=number,
            text=text,
            outcome=outcome,
            first_token_s=first_token_s,
            last_token_s=last_token_s,
            attempts=self.attempt,
            error=error,
        )
