"""A pilot's legs file (`harness pilot STUDY --legs FILE`): named subsets of a study's tasks, arms
and items, each run as its own live run under one ledger stage (docs/pilot.md).

    schema = 1
    drop_order = ["leg10", "leg9", ...]  # which legs go first when the projection passes the
                                         # cap: every leg after the fifth, each once, dropped
                                         # from the first named on; default: from the last leg
                                         # (before any table: after [[legs]] it is a leg's key)
    [tasks]                              # optional: a task is a named set of item ids (shell
    recall = ["lme-*"]                   # patterns allowed), so legs can name it
    [[legs]]
    name = "B-recall"                    # unique; the first five legs are never dropped
    arms = ["B"]                         # default: every arm of the study
    tasks = ["recall"]                   # items of these tasks ...
    items = ["i7"]                       # ... and these ids or patterns; neither: every item
    ...

A leg that selects no item, an unknown arm, an unknown task or a drop order naming one of the
first five legs is refused before anything is projected or spent.
"""

from __future__ import annotations

import tomllib
from decimal import Decimal
from fnmatch import fnmatchcase
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from harness.errors import HarnessError

LEGS_SCHEMA = 1
NEVER_DROPPED = 5  # the first five legs are the pilot's core: no projection drops them


class Leg(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, pattern=r"^[A-Za-z0-9._-]+$")
    arms: list[str] = Field(default_factory=list)
    tasks: list[str] = Field(default_factory=list)
    items: list[str] = Field(default_factory=list)


class LegsFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    schema_: int = Field(LEGS_SCHEMA, alias="schema")
    tasks: dict[str, list[str]] = Field(default_factory=dict)
    legs: list[Leg] = Field(min_length=1)
    drop_order: list[str] | None = None

    @model_validator(mode="after")
    def _consistent(self) -> LegsFile:
        if self.schema_ != LEGS_SCHEMA:
            raise ValueError(f"this harness reads legs schema {LEGS_SCHEMA}; got {self.schema_}")
        names = [leg.name for leg in self.legs]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise ValueError(f"leg(s) named twice: {', '.join(twice)}")
        for leg in self.legs:
            unknown = [t for t in leg.tasks if t not in self.tasks]
            if unknown:
                raise ValueError(f"leg {leg.name!r}: unknown task(s) {', '.join(unknown)}")
        if self.drop_order is not None:
            droppable = names[NEVER_DROPPED:]
            core = [n for n in self.drop_order if n in names[:NEVER_DROPPED]]
            if core:
                raise ValueError(
                    f"drop_order names {', '.join(core)}: the first {NEVER_DROPPED} legs are "
                    "never dropped"
                )
            if sorted(self.drop_order) != sorted(droppable):
                raise ValueError(
                    f"drop_order must name every leg after the fifth once: {', '.join(droppable)}"
                )
        return self

    def leg(self, name: str) -> Leg:
        return next(leg for leg in self.legs if leg.name == name)

    def order_of_drops(self) -> list[str]:
        """The legs in the order they are dropped: the declared drop order, else from the last
        leg back to the sixth."""
        if self.drop_order is not None:
            return list(self.drop_order)
        return [leg.name for leg in reversed(self.legs[NEVER_DROPPED:])]


def load_legs(path: Path) -> LegsFile:
    """The legs file, checked; a HarnessError naming the file and the field otherwise."""
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise HarnessError(f"cannot read legs file {path}: {e.strerror or e}") from None
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
        raise HarnessError(f"legs file {path}: not valid TOML: {e}") from None
    try:
        return LegsFile.model_validate(raw)
    except ValidationError as e:
        first = e.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(file)"
        msg = str(first["msg"]).removeprefix("Value error, ")
        raise HarnessError(f"legs file {path}: {where}: {msg}") from None


def leg_items(legs: LegsFile, leg: Leg, item_ids: list[str]) -> list[str]:
    """The study's item ids a leg runs, in the study's order: those its tasks and items name
    (ids or shell patterns), every item when it names neither."""
    patterns = [p for task in leg.tasks for p in legs.tasks[task]] + leg.items
    if not patterns:
        return list(item_ids)
    return [i for i in item_ids if any(fnmatchcase(i, p) for p in patterns)]


def check_against_study(
    legs: LegsFile, arms: list[str], item_ids: list[str], addon_from: str | None = None
) -> None:
    """Every leg names arms of the study and selects at least one of its items; in a coupled
    study whose arms get one arm's turn context (`addon_from`), a leg that runs any other arm
    runs that one too, or its arms would run on the script's context, not the study's."""
    for leg in legs.legs:
        ran = leg.arms or arms
        if addon_from is not None and addon_from not in ran:
            raise HarnessError(
                f"leg {leg.name!r} runs {', '.join(ran)} without {addon_from}, whose turn "
                "context they get in this coupled study",
                hint=f"add {addon_from!r} to the leg's arms",
            )
        unknown = [a for a in leg.arms if a not in arms]
        if unknown:
            raise HarnessError(
                f"leg {leg.name!r}: {', '.join(unknown)} not an arm of the study",
                hint=f"choose among {', '.join(arms)}",
            )
        if not leg_items(legs, leg, item_ids):
            raise HarnessError(f"leg {leg.name!r} selects no item of the study")


def plan_drops(
    legs: LegsFile, projected: dict[str, Decimal], cap: Decimal
) -> tuple[list[str], list[str]]:
    """(kept legs in declared order, dropped legs in the order dropped): legs go in the fixed
    drop order until the projection fits the cap. HarnessError when even the first five alone
    pass it: the pilot refuses before any spend."""
    kept = [leg.name for leg in legs.legs]
    dropped: list[str] = []
    order = legs.order_of_drops()
    while sum((projected[n] for n in kept), Decimal(0)) > cap:
        if not order:
            core = sum((projected[n] for n in kept), Decimal(0))
            raise HarnessError(
                f"the pilot's projection ${core:.4f} passes the cap ${cap} with every "
                f"droppable leg dropped ({', '.join(dropped) or 'none'}); raise --cap or shrink "
                f"the first {NEVER_DROPPED} legs"
            )
        name = order.pop(0)
        kept.remove(name)
        dropped.append(name)
    return kept, dropped
