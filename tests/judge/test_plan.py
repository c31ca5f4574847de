"""The stage's plan, before anything is sent: what is asked, of whom, how often, in what words."""

from __future__ import annotations

import math
from collections import Counter
from pathlib import Path
from random import Random

import tomli_w

from harness.judge.judges import load_judges
from harness.judge.plan import Planned, Planner, Settings
from harness.judge.rubrics import load_rubrics
from harness.judge.runs import load_source
from rundir.judgments.files import sha256_bytes
from tests.judge.runs import (
    FLAG_RUBRIC,
    judge_entry,
    write_clean_set,
    write_judges,
    write_rubrics,
    write_run,
    write_study,
)


def _plan(tmp_path: Path, rubrics: Path, replier=None, seed: int = 1) -> list[Planned]:  # type: ignore[no-untyped-def]
    study = write_study(tmp_path / "study", items=5)
    run = write_run(tmp_path / "runs", study, "run-a", *([replier] if replier else []))
    judges = load_judges(
        write_judges(tmp_path / "j.toml", alpha=judge_entry("a"), beta=judge_entry("b"))
    )
    rng = Random(seed)
    source = load_source([run], rng, None, None)
    return Planner(source, judges, rng, Settings(controls_per_kind=3)).plan(load_rubrics(rubrics))


def test_counts_roles_and_repeats_of_a_flag_and_a_pairwise_rubric(tmp_path: Path) -> None:
    planned = _plan(tmp_path, write_rubrics(tmp_path / "rubrics"))
    tasks = [p.task for p in planned]
    assert len({t.id for t in tasks}) == len(tasks)
    assert all(sha256_bytes(p.prompt.encode()) == p.task.prompt_sha256 for p in planned)
    flag = [t for t in tasks if t.rubric == "grounded"]
    pair = [t for t in tasks if t.rubric == "better_reply"]
    # Flags: 5 items x 3 turns x 2 arms = 30 judgments, one task per judge.
    confirm = [t for t in flag if t.role == "confirmatory"]
    assert len(confirm) == 30 * 2
    mixed = {t.judgment for t in flag if t.role == "control" and t.phase == "confirmatory"}
    # A tenth (3) is too few for the running watch to decide: it gets the 10 it needs.
    assert math.ceil(0.1 * 30) < len(mixed) == 10
    calibration = {t.judgment for t in flag if t.role == "control" and t.phase == "calibration"}
    assert len(calibration) == 6 * 3  # six kinds of control (padded included), three each
    # Every control is asked twice; a tenth of the judgments too.
    repeats = Counter(t.repeat_of for t in flag if t.role == "repeat")
    controls = [t for t in flag if t.role == "control"]
    assert all(repeats[t.id] == 1 for t in controls)
    repeated = {t.judgment for t in confirm if repeats[t.id]}
    assert len(repeated) == round(0.1 * 30)
    # Pairwise: 15 pairs, two orders x two judges each.
    assert Counter(t.judgment for t in pair if t.role == "confirmatory").most_common()[-1][1] == 4
    assert len({t.judgment for t in pair if t.role == "confirmatory"}) == 15
    # Its mixed-in controls: 10 with a verdict to catch (near-identical pairs have none).
    caught = {
        t.judgment
        for t in pair
        if t.role == "control" and t.phase == "confirmatory" and t.expect is not None
    }
    assert len(caught) == 10


def test_the_plan_follows_the_seed_and_only_the_seed(tmp_path: Path) -> None:
    rubrics = write_rubrics(tmp_path / "rubrics")
    one = [p.task.model_dump() for p in _plan(tmp_path / "a", rubrics, seed=4)]
    two = [p.task.model_dump() for p in _plan(tmp_path / "b", rubrics, seed=4)]
    other = [p.task.model_dump() for p in _plan(tmp_path / "c", rubrics, seed=5)]
    assert one == two and one != other


def test_last_turn_rubrics_ask_only_of_each_items_last_turn(tmp_path: Path) -> None:
    folder = tmp_path / "rubrics"
    write_clean_set(folder)
    (folder / "recall.toml").write_text(
        tomli_w.dumps({**FLAG_RUBRIC, "name": "recall", "turns": "last"})
    )
    tasks = [p.task for p in _plan(tmp_path, folder) if p.task.role == "confirmatory"]
    assert {t.turn for t in tasks} == {2} and len(tasks) == 5 * 2 * 2


def test_layout_alone_cannot_tell_two_arms_apart(tmp_path: Path) -> None:
    """Two arms saying the same words laid out differently get byte-identical prompts."""

    def replier(arm: str, item: str, turn: int, said: str) -> str:
        text = f"Noted: {said}"
        return text if arm == "bare" else "\n  " + text.replace(" ", "\t  ") + "\n\n"

    planned = _plan(tmp_path, write_rubrics(tmp_path / "rubrics", pairwise=False), replier)
    by_reply: dict[tuple[str | None, int | None, str], set[str]] = {}
    for p in planned:
        if p.task.role == "confirmatory":
            by_reply.setdefault((p.task.item, p.task.turn, p.task.judge), set()).add(
                p.task.prompt_sha256
            )
    assert by_reply and all(len(hashes) == 1 for hashes in by_reply.values())
