"""A judging stage: plan every prompt, write them all, seal the arm codes, calibrate each rubric's
judges on planted controls, then judge the runs (with controls mixed in and a halt when they stop
being caught), then read stability, the A/A control and each axis's status into the set.

An axis (a rubric) is "passed" only when every bar of every judge passed and every judgment has
its full vote set; any bar failed, or a halt, makes it "no verdict"; a shortfall (a bar answered
on fewer items than held, a judgment set aside, an A/A control short of pairs) makes it
"incomplete". A rubric whose calibration did not pass is never sent for confirmatory judgment.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from random import Random
from typing import Literal

from harness.errors import HarnessError
from harness.judge.flow import Flow, LiveSender, judge_flow
from harness.judge.judges import Judge, load_judges, third_form
from harness.judge.plan import Planned, Planner, Settings
from harness.judge.prompts import template_hashes
from harness.judge.rubrics import Rubric, load_rubrics
from harness.judge.runs import Source, load_source
from harness.judge.third import Asking
from rundir.judgments import (
    PROMPTS_DIR,
    REPLIES_DIR,
    VOTES_FILE,
    JudgmentSet,
    JudgmentTask,
    RubricRef,
    Seal,
    VoteLog,
    bind_seal,
    sha256_bytes,
    write_exact,
    write_manifest,
    write_seal,
    write_tasks,
)
from rundir.runs import now_iso


@dataclass(frozen=True)
class StageOptions:
    stage: str = "confirmatory"
    seed: int | None = None
    seal: Path | None = None
    aa_run: Path | None = None
    aa_arm: str | None = None
    settings: Settings = field(default_factory=Settings)
    attempts: int = 3
    jobs: int = 4
    aa_pairs: int = 30
    resamples: int = 10_000


@dataclass
class _Hashes:
    """The SHA-256 of each file of the stage the manifest names."""

    tasks: str
    exact: str | None  # exact.jsonl, written only when a grading rubric settled any
    seal: str
    votes: str = ""  # once the votes are all in


def seal_path_for(out: Path, options: StageOptions) -> Path:
    return options.seal or out.parent / f"{out.name}.seal.json"


def run_stage(
    run_dirs: list[Path], rubrics_dir: Path, judges_file: Path, out: Path, options: StageOptions
) -> JudgmentSet:
    seal_path = _check_places(out, options)
    rubrics = load_rubrics(rubrics_dir)
    # A command judge must not read what would let it steer its verdicts (harness/judge/box.py).
    hidden = (out, seal_path, *run_dirs, *([options.aa_run] if options.aa_run else []))
    judges = _confined_judges(judges_file, hidden)
    seed = options.seed if options.seed is not None else secrets.randbits(63)
    rng = Random(seed)
    source = load_source(run_dirs, rng, options.aa_run, options.aa_arm)
    planner = Planner(source, judges, rng, options.settings)
    tasks = _write_prompts(out, planner.plan(rubrics))
    hashes = _Hashes(
        tasks=write_tasks(out, tasks),
        exact=write_exact(out, planner.exact),
        seal=write_seal(seal_path, Seal(stage=options.stage, seed=seed, codes=source.codes)),
    )
    form = third_form(judges_file)
    log = VoteLog(out)
    try:
        # The flow a re-check replays from votes.jsonl (harness/judge/flow.py, recheck.py).
        flow = judge_flow(
            rubrics,
            tasks,
            [j.name for j in judges if not j.pin.third],
            next((j for j in judges if j.pin.third), None),
            form,
            LiveSender(
                Asking(out, {j.name: j for j in judges}, log, options.attempts, options.jobs, rng)
            ),
            aa_first=source.aa_codes[0] if source.aa_codes else None,
            aa_pairs=options.aa_pairs,
            resamples=options.resamples,
            seed=seed % 2**32,
        )
    finally:
        log.close()
    if len(flow.tasks) > len(tasks):
        # The re-asks are tasks of the set like any other (their prompts are on disk).
        hashes.tasks = write_tasks(out, flow.tasks)
    hashes.votes = sha256_bytes((out / VOTES_FILE).read_bytes())
    manifest = _manifest(options, source, judges, rubrics, flow, form, hashes)
    write_manifest(out, manifest)
    bind_seal(seal_path, out)  # the seal, outside the set, names this manifest by its hash
    return manifest


def _check_places(out: Path, options: StageOptions) -> Path:
    """The seal's path, once `--out` is known empty and the seal outside it (one line each)."""
    if out.exists() and any(out.iterdir()):
        raise HarnessError(
            f"--out {out} is not empty", hint="a judgment set is written once: give a new folder"
        )
    seal_path = seal_path_for(out, options)
    if seal_path.resolve().is_relative_to(out.resolve()):
        raise HarnessError(
            "the seal must be stored outside the set", hint="give --seal outside --out"
        )
    return seal_path


def _confined_judges(judges_file: Path, hidden: tuple[Path, ...]) -> list[Judge]:
    """The pinned judges, each kept from reading `hidden`; refused without two besides a third."""
    judges = load_judges(judges_file)
    judges = [j.confined(tuple(Path(p).absolute() for p in hidden)) for j in judges]
    primary = [j for j in judges if not j.pin.third]
    if len(primary) < 2:
        raise HarnessError(
            f"{judges_file} pins {len(primary)} judge(s) besides a third",
            hint="a full vote set needs two judges",
        )
    return judges


def _write_prompts(out: Path, planned: list[Planned]) -> list[JudgmentTask]:
    """Every prompt on disk, and listed with its hash (by the caller), before the first is sent."""
    (out / PROMPTS_DIR).mkdir(parents=True)
    (out / REPLIES_DIR).mkdir()
    for p in planned:
        (out / PROMPTS_DIR / f"{p.task.id}.txt").write_text(p.prompt, encoding="utf-8")
    return [p.task for p in planned]


def _manifest(
    options: StageOptions,
    source: Source,
    judges: list[Judge],
    rubrics: list[Rubric],
    flow: Flow,
    form: Literal["judge", "reask"],
    hashes: _Hashes,
) -> JudgmentSet:
    """The set's manifest: what was judged, by whom, under which files, and what came of it."""
    return JudgmentSet(
        stage=options.stage,
        written=now_iso(),
        tool_version=_version(),
        runs=source.runs,
        aa_run=source.aa_run,
        judges=[j.pin for j in judges],
        rubrics=[
            RubricRef(
                name=r.name, version=r.file.version, kind=r.kind, file=r.path.name, sha256=r.sha256
            )
            for r in rubrics
        ],
        templates=template_hashes(),
        seal_sha256=hashes.seal,
        tasks_sha256=hashes.tasks,
        votes_sha256=hashes.votes,
        exact_sha256=hashes.exact,
        calibration=flow.calibration,
        running=flow.running,
        stability=flow.stability,
        aa=flow.aa,
        axes=flow.axes,
        set_aside=flow.set_aside,
        halts=flow.halts,
        third_pass=flow.third_pass,
        third_form=form,
        aa_pairs=options.aa_pairs,
        resamples=options.resamples,
    )


def _version() -> str:
    try:
        return metadata.version("harness")
    except metadata.PackageNotFoundError:
        return "unknown"
