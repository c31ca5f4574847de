"""Run directories for judging tests: a real study folder (StudyBuilder), its run.json written by
rundir's own writer, and turns.jsonl holding the replies record mode's stubs give (an
acknowledgement, then the user's words), or replies a test chooses."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path

import tomli_w

from harness.study import load_study
from rundir.runs.header import RunHeader, StudyRun, write_header
from rundir.turns.turns import TurnLog, TurnRecord
from tests.study_builder import StudyBuilder

ROOT = Path(__file__).resolve().parents[2]
STUB = str(ROOT / "harness" / "judge" / "stub_judge.py")

FACTS = [
    ("My sister lives in Lisbon.", "I play the cello on Sundays."),
    ("I planted tomatoes and basil.", "The basil is wilting in the heat."),
    ("I am flying to Osaka on Friday.", "I want to see the aquarium there."),
    ("My dog Biscuit is nine years old.", "He loves long walks by the river."),
    ("I work as a nurse in Toronto.", "My shifts start at seven."),
    ("My brother collects vintage stamps.", "He keeps them in green albums."),
    ("I am learning Portuguese this year.", "My teacher comes from Recife."),
    ("We painted the kitchen yellow.", "The old colour was a dull grey."),
    ("I run every morning before work.", "My best time is twenty minutes."),
    ("My grandmother bakes rye bread.", "She uses a recipe from Gdansk."),
]
QUESTION = "What do you remember about me?"
ADDON = "Answer in one sentence."

Replier = Callable[[str, str, int, str], str]  # (arm, item, turn, user message) -> reply


def stub_reply(arm: str, item: str, turn: int, said: str) -> str:
    return f"Noted: {said}" if turn < 2 else f"You told me: {said}"


def write_study(folder: Path, items: int = 10) -> Path:
    records = [
        {
            "id": f"item{i}",
            "clock": "2024-05-01T10:00:00",
            "turns": [{"user": a}, {"user": b}, {"user": QUESTION, "addon": ADDON}],
        }
        for i, (a, b) in enumerate(FACTS[:items])
    ]
    builder = StudyBuilder(name="judged", items=records)
    builder.arm("bare", "python -m arms.bare").arm("retrieval", "python -m arms.retrieval")
    return builder.set(deadline_ms=20000, ledger="ledger.jsonl").write(folder)


def write_run(
    root: Path,
    study_path: Path,
    run_id: str,
    replier: Replier = stub_reply,
    arms: tuple[str, ...] = ("bare", "retrieval"),
) -> Path:
    study = load_study(study_path)
    run_dir = root / run_id
    run_dir.mkdir(parents=True)
    header = RunHeader(
        run_id=run_id,
        mode="record",
        kind="study",
        started="2026-12-05T09:00:00.000+00:00",
        study=StudyRun(
            name=study.name,
            study_path=str(study_path),
            study_sha256=study.study_sha256,
            items_sha256=study.items_sha256,
            isolation="local",
            clock_pinning="seam-only",
            arms=list(arms),
            items=len(study.items),
            deadline_ms=study.deadline_ms,
        ),
    )
    write_header(run_dir, header)
    log = TurnLog(run_dir / "turns.jsonl")
    for item in study.items:
        for arm in arms:
            for turn, script in enumerate(item.turns):
                said = f"{script.user} {script.addon}".strip()
                log.append(
                    TurnRecord(
                        run=run_id,
                        item=item.id,
                        arm=arm,
                        turn=turn,
                        text=replier(arm, item.id, turn, said),
                        outcome="done",
                    )
                )
    log.close()
    return run_dir


def judge_entry(
    model: str, effort: str = "low", *extra: str, script: str = STUB
) -> dict[str, object]:
    # -S: the stub imports only the standard library, and skipping site's start-up work makes a
    # stage of a thousand prompts several times faster on a busy machine.
    return {
        "engine": "stub",
        "model": model,
        "effort": effort,
        "command": [
            sys.executable,
            "-S",
            script,
            "--engine",
            "{engine}",
            "--model",
            "{model}",
            "--effort",
            "{effort}",
            *extra,
            "{prompt}",
        ],
    }


def write_judges(path: Path, **judges: dict[str, object]) -> Path:
    path.write_text(tomli_w.dumps({"judges": judges}))
    return path


FLAG_RUBRIC = {
    "schema": 1,
    "name": "grounded",
    "version": "1",
    "kind": "flag",
    "question": "Flag the reply if it states anything the user did not say, contradicts the "
    "user, or does not acknowledge the user's message.",
    "clean": "grounded.clean.jsonl",
}
PAIRWISE_RUBRIC = {
    "schema": 1,
    "name": "better_reply",
    "version": "1",
    "kind": "pairwise",
    "question": "Which reply serves the user better: faithful to what the user said, complete, "
    "without repetition or unrelated text?",
}


def clean_entries() -> list[dict[str, object]]:
    """Replies to the FACTS conversations, each grounded and acknowledging (two readers: the
    stub judge's rules and this file's author), on conversations of their own."""
    out: list[dict[str, object]] = []
    readers = ["stub judge rules", "tests/judge/runs.py"]
    for a, b in FACTS:
        recall = f"{QUESTION} {ADDON}"
        for messages, reply in (
            ([a], f"Noted: {a}"),
            ([a, b], f"Thanks for telling me: {b}"),
            ([a, b, recall], f"You told me: {a} {b}"),
        ):
            out.append({"messages": messages, "reply": reply, "readers": readers})
    return out


def write_clean_set(folder: Path, name: str = "grounded.clean.jsonl") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text("".join(json.dumps(e) + "\n" for e in clean_entries()))
    return path


def write_rubrics(folder: Path, flag: bool = True, pairwise: bool = True) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    if flag:
        (folder / "grounded.toml").write_text(tomli_w.dumps(FLAG_RUBRIC))
        write_clean_set(folder)
    if pairwise:
        (folder / "better_reply.toml").write_text(tomli_w.dumps(PAIRWISE_RUBRIC))
    return folder
