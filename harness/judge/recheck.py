"""Re-deriving a judgment set's manifest from its tasks, votes and replies.

`judgments.json` records what the stage made of its votes: the calibration bars, the third pass,
the running watch and its halts, stability, the A/A control, the judgments set aside and each
axis's status. None of it is taken as written: the stage's own flow (flow.py) is run again with
a sender that replays votes.jsonl in its order (the order the running watch saw them in, send.py)
instead of asking anyone, and every derived field must come out the same; a field that differs is
named. What the flow takes as given is what the stage was given: the judges' pins, the rubrics'
names and kinds, the third pass's form, the A/A pairs needed and the bootstrap's resamples (in
the manifest, which the seal binds by its hash) and the bootstrap's seed (the seal's).
"""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from random import Random
from typing import Any

from pydantic import BaseModel

from harness.judge.flow import DERIVED, Flow, judge_flow
from harness.judge.judges import Judge, JudgeEntry
from harness.judge.send import RunningDetection
from harness.judge.third import Asking
from rundir.judgments import (
    MANIFEST_FILE,
    PROMPTS_DIR,
    TASKS_FILE,
    VOTES_FILE,
    JudgmentSet,
    JudgmentTask,
    Seal,
    Vote,
)


@dataclass
class ReplaySender:
    """Answers the flow's sends from votes.jsonl: each task's accepted vote, in the file's
    order (the running watch records them as the stage did)."""

    votes: list[Vote]
    prompts: Path  # a scratch set folder: a re-ask writes its prompt copy there, not in the set
    used: set[str] = field(default_factory=set)

    def send(
        self, tasks: list[JudgmentTask], running: RunningDetection | None = None
    ) -> dict[str, Vote]:
        by_id = {t.id: t for t in tasks}
        got: dict[str, Vote] = {}
        for vote in self.votes:
            task = by_id.get(vote.task)
            if vote.status != "accepted" or task is None or vote.task in got:
                continue
            got[vote.task] = vote
            self.used.add(vote.task)
            if running is not None and vote.verdict is not None:
                running.record(task, vote.verdict)
        return got

    def asking(self) -> Asking:
        # Never asks (send is overridden); its folder takes a re-ask's prompt copy.
        return _ReplayAsking(self.prompts, {}, None, 0, 0, Random(0), self)  # type: ignore[arg-type]


@dataclass(frozen=True)
class _ReplayAsking(Asking):
    replay: ReplaySender | None = None

    def send(self, tasks: list[JudgmentTask]) -> dict[str, Vote]:
        assert self.replay is not None
        return self.replay.send(tasks)


def _aa_first(manifest: JudgmentSet, seal: Seal) -> str | None:
    """The A/A arm's first sample's code (the stage's `aa_codes[0]`): the primary run's code of
    the arm whose second sample the A/A run holds."""
    if manifest.aa_run is None:
        return None
    second = {s.arm for s in seal.codes.values() if s.run == manifest.aa_run.run_id}
    first = [
        code
        for code, s in seal.codes.items()
        if s.run == manifest.runs[0].run_id and s.arm in second
    ]
    return first[0] if len(first) == 1 else None


def replay(
    set_dir: Path, manifest: JudgmentSet, tasks: list[JudgmentTask], votes: list[Vote], seal: Seal
) -> tuple[Flow, ReplaySender]:
    planned = [t for t in tasks if t.reask_of is None]
    pins = {p.name: p for p in manifest.judges}
    names = [p.name for p in manifest.judges if not p.third]
    third_pin = next((p for p in manifest.judges if p.third), None)
    # A judge that is never asked: the flow reads its name.
    third = None
    if third_pin is not None:
        entry = JudgeEntry.model_construct(
            engine=third_pin.engine, model=third_pin.model, effort=third_pin.effort
        )
        third = Judge(third_pin, entry)
    with tempfile.TemporaryDirectory(prefix="recheck-") as scratch:
        (Path(scratch) / PROMPTS_DIR).mkdir()
        for t in planned:
            if t.phase == "calibration" and t.judge in pins:
                source = set_dir / PROMPTS_DIR / f"{t.id}.txt"
                if source.is_file():
                    shutil.copyfile(source, Path(scratch) / PROMPTS_DIR / f"{t.id}.txt")
        sender = ReplaySender(votes, Path(scratch))
        flow = judge_flow(
            list(manifest.rubrics),
            planned,
            names,
            third,
            manifest.third_form,
            sender,
            aa_first=_aa_first(manifest, seal),
            aa_pairs=manifest.aa_pairs,
            resamples=manifest.resamples,
            seed=seal.seed % 2**32,
        )
    return flow, sender


def _first_difference(name: str, recorded: Any, derived: Any) -> str | None:
    """`name[i].attr` where the recorded value first differs from the derived one, with both."""
    if recorded == derived:
        return None
    if not isinstance(recorded, list) or not isinstance(derived, list):
        return f"{name} is {recorded!r}, recomputed {derived!r}"
    for i, (got, want) in enumerate(zip(recorded, derived, strict=False)):
        if got == want:
            continue
        where = f"{name}[{i}]"
        label = getattr(want, "rubric", None)
        if label is not None:
            where += f" ({label}{'/' + want.judge if getattr(want, 'judge', None) else ''})"
        if isinstance(got, BaseModel) and type(got) is type(want):
            for attr in type(got).model_fields:
                if getattr(got, attr) != getattr(want, attr):
                    return f"{where}.{attr} is {getattr(got, attr)!r}, recomputed " + repr(
                        getattr(want, attr)
                    )
        return f"{where} is {got!r}, recomputed {want!r}"
    return f"{name} lists {len(recorded)}, recomputed {len(derived)}"


def recheck(
    set_dir: Path, manifest: JudgmentSet, tasks: list[JudgmentTask], votes: list[Vote], seal: Seal
) -> list[str]:
    """Each derived field of the manifest that the flow, replayed, does not give: named."""
    flow, sender = replay(set_dir, manifest, tasks, votes, seal)
    problems = []
    for name in DERIVED:
        differs = _first_difference(name, getattr(manifest, name), getattr(flow, name))
        if differs:
            problems.append(
                f"{MANIFEST_FILE}: {differs} (from the set's tasks, votes and replies): the "
                "manifest is not what its votes give"
            )
    if [t.id for t in flow.tasks] != [t.id for t in tasks] or flow.tasks != tasks:
        problems.append(
            f"{TASKS_FILE}: its tasks are not the planned ones and the third pass's re-asks"
        )
    seen: set[str] = set()
    for vote in votes:
        if vote.status != "accepted":
            continue
        where = f"{VOTES_FILE}: vote {vote.task}#{vote.attempt}"
        if vote.task in seen:
            problems.append(f"{where}: a second accepted vote for one task")
        elif vote.task not in sender.used:
            problems.append(f"{where}: accepted, but the stage never sent its task")
        seen.add(vote.task)
    return problems
