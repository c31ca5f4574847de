"""What a run's drive counts as it goes: outcomes, infrastructure failures, strays seen, each
arm copy's last turn end. One tally for all workers (harness/run/stages/workers.py)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from harness.run.watch import Key


@dataclass
class RunTally:
    outcomes: Counter[str] = field(default_factory=Counter)
    infra_failures: int = 0
    interrupted: bool = False
    seen_strays: set[Key] = field(default_factory=set)  # egress entries seen while running
    last_turn_end: dict[str, float] = field(default_factory=dict)  # A or A@k -> epoch seconds
