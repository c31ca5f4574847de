"""Each arm's outcomes, and whether they let the run pass.

A run whose every turn failed must not say "passed". Per arm, from turns.jsonl: how many turns
ended in each outcome (done, cut, error, infra_failed, stray_connection, resource_limit, and any
outcome a later harness adds), how many missed their memory control, and the arm's first failed
turn. An arm fails the run when it completed no turn, or when more of its turns than the study's
`[verdict] max_failure_rate` (a fraction, default `DEFAULT_MAX_FAILURE_RATE`) ended in one of the
arm's own failures (`ARM_FAILURES`); failures within the ceiling stay outcomes, counted and
reported. Infrastructure failures and refused connections are not the arm's and fail the run by
their own rules (harness/run/stages/finish.py), as do memory-control misses (unless --allow-misses).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from harness.study import DEFAULT_MAX_FAILURE_RATE
from rundir.turns import TurnRecord

# The arm's own failures (rundir/turns/turns.py): above the ceiling, they fail the run.
ARM_FAILURES = ("cut", "error", "resource_limit", "wrong_model")
# The order outcomes are shown in; an outcome not listed here (a newer harness's) follows them.
KNOWN_OUTCOMES = (
    "done",
    "cut",
    "error",
    "infra_failed",
    "stray_connection",
    "resource_limit",
    "wrong_model",
)
# How much of an arm's error text a one-line summary quotes.
QUOTE_LIMIT = 160


@dataclass
class ArmOutcomes:
    arm: str
    outcomes: Counter[str] = field(default_factory=Counter)
    memory_miss: int = 0
    first: TurnRecord | None = None  # its first turn that was not done

    @property
    def first_failure(self) -> str | None:
        """`item i1 turn 0: error: <the arm's error, on one line>`."""
        if self.first is None:
            return None
        return f"item {self.first.item} turn {self.first.turn}: {failure_text(self.first)}"

    @property
    def turns(self) -> int:
        return sum(self.outcomes.values())

    @property
    def failures(self) -> int:
        return sum(self.outcomes[o] for o in ARM_FAILURES)

    def summary(self) -> str:
        return outcome_summary(self.outcomes, self.memory_miss)


def outcome_summary(outcomes: dict[str, int], memory_miss: int = 0) -> str:
    """`done 3, error 2, memory miss 1`: every outcome with its count, the known ones first."""
    parts = [f"{o} {outcomes[o]}" for o in ordered(outcomes)]
    if memory_miss:
        parts.append(f"memory miss {memory_miss}")
    return ", ".join(parts) or "no turns"


def ordered(outcomes: Iterable[str]) -> list[str]:
    present = set(outcomes)
    return [o for o in KNOWN_OUTCOMES if o in present] + sorted(present - set(KNOWN_OUTCOMES))


def per_arm(turns: Iterable[TurnRecord]) -> dict[str, ArmOutcomes]:
    arms: dict[str, ArmOutcomes] = {}
    for t in turns:
        arm = arms.setdefault(t.arm, ArmOutcomes(t.arm))
        arm.outcomes[t.outcome] += 1
        if t.memory_miss:
            arm.memory_miss += 1
        if arm.first is None and t.outcome != "done":
            arm.first = t
    return dict(sorted(arms.items()))


def arm_failures(
    arms: dict[str, ArmOutcomes], max_failure_rate: float = DEFAULT_MAX_FAILURE_RATE
) -> dict[str, str]:
    """arm -> why it fails the run, for every arm that does."""
    failed: dict[str, str] = {}
    for name, arm in arms.items():
        if not arm.turns:
            continue
        if not arm.outcomes["done"]:
            why = f"completed no turn of {arm.turns} ({arm.summary()})"
        elif arm.failures / arm.turns > max_failure_rate:
            why = (
                f"{arm.failures} of {arm.turns} turns failed ({arm.summary()}), above the "
                f"study's max_failure_rate {max_failure_rate:g}"
            )
        else:
            continue
        failed[name] = f"{why}; first: {arm.first_failure}" if arm.first_failure else why
    return failed


def failure_text(turn: TurnRecord) -> str:
    """`error: <the arm's error>` (or the text it sent, for a cut turn), on one line."""
    return f"{turn.outcome}: {one_line(turn.error or turn.text or 'no error text')}"


def one_line(text: str, limit: int = QUOTE_LIMIT) -> str:
    """An arm's text fit for one terminal line: control characters (an escape sequence could
    rewrite the terminal) shown escaped, cut to `limit` characters."""
    shown = "".join(c if c.isprintable() else c.encode("unicode_escape").decode() for c in text)
    return shown if len(shown) <= limit else shown[: limit - 3] + "..."
