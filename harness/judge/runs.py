"""The runs a stage judges: their replies by arm code, the user's messages each reply answered,
and the arm codes, drawn afresh for the stage from its seed.

The runs given together must be one study (a run and the runs that resumed it); an A/A second
sample is a run of the same study whose arm is judged against the first run's.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from random import Random

from harness.errors import HarnessError
from harness.study import Item, load_study
from rundir.judgments import RunRef, SealedArm
from rundir.runs import read_header
from rundir.turns import read_turns

CODE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"  # no 0/O, 1/I: codes are read by people


@dataclass
class Source:
    replies: dict[tuple[str, str, int], str] = field(default_factory=dict)  # (code, item, turn)
    messages: dict[tuple[str, int], list[str]] = field(default_factory=dict)  # (item, turn)
    last_turn: dict[str, int] = field(default_factory=dict)
    items: dict[str, Item] = field(default_factory=dict)  # the study's, by id (gold answers)
    codes: dict[str, SealedArm] = field(default_factory=dict)
    arm_codes: list[str] = field(default_factory=list)  # the primary runs' arms, by code
    aa_codes: tuple[str, str] | None = None  # (first sample, second sample) of the A/A arm
    runs: list[RunRef] = field(default_factory=list)
    aa_run: RunRef | None = None


def _study(ref: RunRef) -> tuple[str, str]:
    # The study file's hash does not cover its items: two studies can share one study.toml.
    return ref.study_sha256, ref.items_sha256


def _draw_code(rng: Random, taken: set[str]) -> str:
    while True:
        code = "".join(rng.choice(CODE_ALPHABET) for _ in range(4))
        if code not in taken:
            taken.add(code)
            return code


def _read(run_dir: Path) -> tuple[RunRef, str, dict[tuple[str, str, int], str]]:
    header = read_header(run_dir)
    if header.study is None:
        raise HarnessError(
            f"{run_dir} is not a study run", hint="judge what `harness record|live` wrote"
        )
    turns_path = run_dir / "turns.jsonl"
    data = turns_path.read_bytes() if turns_path.exists() else b""
    replies = {
        (t.arm, t.item, t.turn): t.text
        for t in read_turns(turns_path)
        if t.outcome != "infra_failed"  # the machinery's failure, not an answer of the arm
    }
    ref = RunRef(
        run_id=header.run_id,
        study_sha256=header.study.study_sha256,
        items_sha256=header.study.items_sha256,
        turns_sha256=hashlib.sha256(data).hexdigest(),
    )
    return ref, header.study.study_path, replies


def load_source(
    run_dirs: list[Path], rng: Random, aa_run: Path | None, aa_arm: str | None
) -> Source:
    if not run_dirs:
        raise HarnessError("give at least one run directory to judge")
    source = Source()
    merged: dict[tuple[str, str, int], str] = {}
    study_path = ""
    for run_dir in run_dirs:
        ref, study_path, replies = _read(run_dir)
        if source.runs and _study(ref) != _study(source.runs[0]):
            raise HarnessError(
                f"{run_dir} ran another study than {source.runs[0].run_id}",
                hint="judge one study's runs together (a run and the runs that resumed it)",
            )
        source.runs.append(ref)
        merged.update(replies)
    study = load_study(Path(study_path))
    if (study.study_sha256, study.items_sha256) != _study(source.runs[0]):
        raise HarnessError(
            f"{study_path} or its items changed since {source.runs[0].run_id} ran",
            hint="judge with the study file the run used",
        )
    for scripted in study.items:
        source.items[scripted.id] = scripted
        said = [f"{t.user} {t.addon}".strip() for t in scripted.turns]
        source.last_turn[scripted.id] = len(said) - 1
        for turn in range(len(said)):
            source.messages[(scripted.id, turn)] = said[: turn + 1]
    taken: set[str] = set()
    for arm in sorted({arm for arm, _, _ in merged}):
        code = _draw_code(rng, taken)
        source.codes[code] = SealedArm(run=source.runs[0].run_id, arm=arm)
        source.arm_codes.append(code)
        for (a, item, turn), text in merged.items():
            if a == arm:
                source.replies[(code, item, turn)] = text
    if aa_run is not None:
        if aa_arm is None:
            raise HarnessError("--aa-run needs --aa-arm, the arm judged against itself")
        ref, _, replies = _read(aa_run)
        if _study(ref) != _study(source.runs[0]):
            raise HarnessError(
                f"the A/A run {aa_run} ran another study", hint="rerun the same study"
            )
        first = next((c for c in source.arm_codes if source.codes[c].arm == aa_arm), None)
        if first is None or not any(a == aa_arm for a, _, _ in replies):
            raise HarnessError(f"--aa-arm {aa_arm!r} is not an arm of both runs")
        second = _draw_code(rng, taken)
        source.codes[second] = SealedArm(run=ref.run_id, arm=aa_arm)
        for (a, item, turn), text in replies.items():
            if a == aa_arm:
                source.replies[(second, item, turn)] = text
        source.aa_codes, source.aa_run = (first, second), ref
    for _code, item, turn in source.replies:
        if (item, turn) not in source.messages:
            raise HarnessError(
                f"the runs hold a reply to {item} turn {turn}, which the study lacks"
            )
    # The order of arm codes must not follow the arms' names.
    rng.shuffle(source.arm_codes)
    return source
