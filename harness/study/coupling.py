"""A coupled study's rules: which arms lead every turn, which arm's turn context the later arms
get, and the arm pairs the cross-arm gate checks (docs/coupled.md).

    [coupling]
    order = ["B", "C0", "C1"]     # these lead every turn, in this order; the rest follow in a
                                  # seeded order per item (arm_order_seed)
    addon_from = "B"              # the arm whose turn context (its final seam message's
                                  # `addon`) goes to the arms after it in the same turn
    reuse = [["C0", "C1"]]        # [leader, follower]: a follower's main request equal
                                  # (masked) to its leader's of the same item and turn gets
                                  # the leader's reply, booked once (proxy/flow/reuse.py)
    [[gate.pairs]]
    arms = ["C0", "C1"]           # leader, follower
    differ_by = "elements.txt"    # the elements file (harness/checks/elements.py)

Only a study with a `[coupling]` table runs its items turn by turn across arms; every other study
runs each item arm by arm as before (harness/run/orchestrator.py). A memory benchmark's items are
coupled too: every arm takes in the item's history first, then its question runs turn by turn
across them (harness/run/coupled_item.py).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, field_validator


class Coupling(BaseModel):
    model_config = ConfigDict(extra="forbid")

    order: list[str] = Field(min_length=1)
    addon_from: str | None = None
    reuse: list[tuple[str, str]] = Field(default_factory=list)  # (leader, follower)

    @field_validator("order")
    @classmethod
    def _once(cls, value: list[str]) -> list[str]:
        if len(set(value)) != len(value):
            raise ValueError("an arm is named twice; name each leading arm once")
        return value


class GatePair(BaseModel):
    model_config = ConfigDict(extra="forbid")

    arms: tuple[str, str]  # (leader, follower)
    differ_by: str  # the elements file, relative to the study

    @property
    def leader(self) -> str:
        return self.arms[0]

    @property
    def follower(self) -> str:
        return self.arms[1]


class GateSection(BaseModel):
    model_config = ConfigDict(extra="forbid")

    pairs: list[GatePair] = Field(default_factory=list)


def coupling_problems(
    coupling: Coupling | None,
    gate: GateSection,
    arms: Sequence[str],
    study_dir: Path,
) -> list[str]:
    """What is wrong with a study's coupling and pairs, in words ([] when nothing is)."""
    problems: list[str] = []
    if coupling is not None:
        unknown = [arm for arm in coupling.order if arm not in arms]
        if unknown:
            problems.append(f"coupling.order: {', '.join(unknown)} not an arm of the study")
        if coupling.addon_from is not None and coupling.addon_from != coupling.order[0]:
            # The reference leads: an arm before it would run its turn without the context.
            problems.append(
                f"coupling.addon_from: {coupling.addon_from!r} must lead coupling.order (set "
                f'order = ["{coupling.addon_from}", ...]): every other arm of the turn gets its '
                "turn context, so none may run before it"
            )
        followers = [follower for _, follower in coupling.reuse]
        for n, (leader, follower) in enumerate(coupling.reuse):
            order = coupling.order
            if (
                leader not in order
                or follower not in order
                or (order.index(leader) >= order.index(follower))
            ):
                problems.append(
                    f"coupling.reuse.{n}: {leader!r} must come before {follower!r} in "
                    "coupling.order (the leader's reply must exist when the follower asks)"
                )
            if followers.count(follower) > 1:
                problems.append(f"coupling.reuse.{n}: {follower!r} follows two leaders")
    for n, pair in enumerate(gate.pairs):
        where = f"gate.pairs.{n}"
        unknown = [arm for arm in pair.arms if arm not in arms]
        if unknown:
            problems.append(f"{where}.arms: {', '.join(unknown)} not an arm of the study")
        if pair.leader == pair.follower:
            problems.append(f"{where}.arms: a pair is two different arms")
        if not (study_dir / pair.differ_by).is_file():
            problems.append(f"{where}.differ_by: {study_dir / pair.differ_by} does not exist")
        if coupling is None or pair.follower not in coupling.order:
            problems.append(
                f"{where}: the follower {pair.follower!r} must lead in coupling.order (its "
                "request is compared with its leader's of the same turn)"
            )
        elif pair.leader not in coupling.order or coupling.order.index(
            pair.leader
        ) >= coupling.order.index(pair.follower):
            problems.append(
                f"{where}: the leader {pair.leader!r} must come before {pair.follower!r} in "
                "coupling.order (the follower's request is the leader's plus the element)"
            )
    return problems


def turn_order(seed: int, item_id: str, arms: Sequence[str], leaders: Sequence[str]) -> list[str]:
    """The order the arms run each turn of an item in: the leaders first, in the study's order
    (those of them that run), then the others in an order seeded per item, reproducible
    (random.Random seeded with a str hashes it with SHA-512: no PYTHONHASHSEED dependence)."""
    first = [arm for arm in leaders if arm in arms]
    rest = [arm for arm in arms if arm not in first]
    random.Random(f"{seed}:{item_id}").shuffle(rest)
    return first + rest
