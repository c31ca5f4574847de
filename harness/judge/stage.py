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
from collections import defaultdict
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from random import Random

from harness.errors import HarnessError
from harness.judge.aa import aa_control
from harness.judge.calibration import calibration_bars, stability_bars, watch_short
from harness.judge.calibration import running_bars as mixed_in_bars
from harness.judge.judges import load_judges, third_form
from harness.judge.plan import Planner, Settings
from harness.judge.planting import watch_needs
from harness.judge.prompts import template_hashes
from harness.judge.rubrics import Rubric, load_rubrics
from harness.judge.runs import load_source
from harness.judge.send import RUNNING_MIN_CONTROLS, RunningDetection, send
from harness.judge.third import Asking, run_reask, run_third_pass
from rundir.header import now_iso
from rundir.judgments import (
    PROMPTS_DIR,
    REPLIES_DIR,
    VOTES_FILE,
    AxisStatus,
    BarResult,
    JudgmentSet,
    JudgmentTask,
    RubricRef,
    Seal,
    SetAside,
    ThirdPass,
    Vote,
    VoteLog,
    sha256_bytes,
    write_exact,
    write_manifest,
    write_seal,
    write_tasks,
)


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


def seal_path_for(out: Path, options: StageOptions) -> Path:
    return options.seal or out.parent / f"{out.name}.seal.json"


def run_stage(
    run_dirs: list[Path], rubrics_dir: Path, judges_file: Path, out: Path, options: StageOptions
) -> JudgmentSet:
    if out.exists() and any(out.iterdir()):
        raise HarnessError(
            f"--out {out} is not empty", hint="a judgment set is written once: give a new folder"
        )
    seal_path = seal_path_for(out, options)
    if seal_path.resolve().is_relative_to(out.resolve()):
        raise HarnessError(
            "the seal must be stored outside the set", hint="give --seal outside --out"
        )
    rubrics, judges = load_rubrics(rubrics_dir), load_judges(judges_file)
    # A command judge must not read what would let it steer its verdicts (harness/judge/box.py).
    hidden = (out, seal_path, *run_dirs, *([options.aa_run] if options.aa_run else []))
    judges = [j.confined(tuple(Path(p).absolute() for p in hidden)) for j in judges]
    primary = [j for j in judges if not j.pin.third]
    if len(primary) < 2:
        raise HarnessError(
            f"{judges_file} pins {len(primary)} judge(s) besides a third",
            hint="a full vote set needs two judges",
        )
    seed = options.seed if options.seed is not None else secrets.randbits(63)
    rng = Random(seed)
    source = load_source(run_dirs, rng, options.aa_run, options.aa_arm)
    planner = Planner(source, judges, rng, options.settings)
    planned = planner.plan(rubrics)

    # Every prompt is on disk, and listed with its hash, before the first is sent.
    (out / PROMPTS_DIR).mkdir(parents=True)
    (out / REPLIES_DIR).mkdir()
    for p in planned:
        (out / PROMPTS_DIR / f"{p.task.id}.txt").write_text(p.prompt, encoding="utf-8")
    tasks = [p.task for p in planned]
    tasks_sha = write_tasks(out, tasks)
    exact_sha = write_exact(out, planner.exact)
    seal_sha = write_seal(seal_path, Seal(stage=options.stage, seed=seed, codes=source.codes))

    by_name = {j.name: j for j in judges}
    names = [j.name for j in judges if not j.pin.third]
    third = next((j for j in judges if j.pin.third), None)
    form = third_form(judges_file)
    reasked: list[JudgmentTask] = []
    log = VoteLog(out)
    sent: set[str] = set()
    passes: list[ThirdPass] = []
    try:
        calibration = [t for t in tasks if t.phase == "calibration"]
        asked = [t for t in calibration if t.judge in names]
        sent |= {t.id for t in asked}
        votes = send(
            out,
            rng.sample(asked, len(asked)),
            by_name,
            log,
            attempts=options.attempts,
            jobs=options.jobs,
        )
        bars: list[BarResult] = []
        ready: list[Rubric] = []
        for rubric in rubrics:
            mine = calibration_bars(rubric.name, rubric.kind, tasks, votes, names)
            bars += mine
            own_ok = all(b.status == "passed" for b in mine if b.bar != "kappa")
            short = [b for b in mine if b.bar == "kappa" and b.status == "failed"]
            if short and own_ok:
                # Two judges that each pass their own bars but agree less than the bar: a third
                # judge is calibrated on the same controls, and if it passes, joins them.
                asking = Asking(out, by_name, log, options.attempts, options.jobs, rng)
                if form == "reask":
                    third_bars, third_pass, again = run_reask(
                        rubric, short, names, tasks, votes, sent, asking
                    )
                    reasked += again
                else:
                    third_bars, third_pass = run_third_pass(
                        rubric, short, third, tasks, votes, sent, asking
                    )
                bars += third_bars
                passes.append(third_pass)
            if own_ok and (not short or passes[-1].status == "resolved"):
                ready.append(rubric)
        if reasked:
            # The re-asks are tasks of the set like any other (their prompts are on disk).
            tasks += reasked
            tasks_sha = write_tasks(out, tasks)
        ready_names = {r.name for r in ready}
        voters = {
            r.name: names
            + [p.judge for p in passes if p.rubric == r.name and p.status == "resolved" and p.judge]
            for r in rubrics
        }
        confirmatory = [
            t
            for t in tasks
            if t.phase == "confirmatory" and t.rubric in ready_names and t.judge in voters[t.rubric]
        ]
        running = RunningDetection()
        votes |= send(
            out,
            rng.sample(confirmatory, len(confirmatory)),
            by_name,
            log,
            attempts=options.attempts,
            jobs=options.jobs,
            running=running,
        )
    finally:
        log.close()

    sent |= {t.id for t in confirmatory if t.rubric not in running.halted}
    # Only the votes a rubric's judgments need: a third judge's unsent prompts are not missing.
    voting = [t for t in tasks if t.judge in voters[t.rubric]]
    stability, running_bars, aa_results, set_aside, axes = [], [], [], [], []
    notes: dict[str, list[str]] = {}  # why a running watch could not decide, per rubric
    for rubric in rubrics:
        who = voters[rubric.name]
        stability += stability_bars(rubric.name, rubric.kind, voting, votes, who, sent)
        if rubric.name in ready_names:  # an unsent rubric had no controls mixed into anything
            needed = watch_needs(running.bar, RUNNING_MIN_CONTROLS)
            mine = mixed_in_bars(
                rubric.name, voting, votes, who, running.halted, running.bar, needed
            )
            running_bars += mine
            notes[rubric.name] = [n for b in mine if (n := watch_short(b, voting, needed))]
        if rubric.kind == "pairwise":
            first = source.aa_codes[0] if source.aa_codes else None
            aa_results.append(
                aa_control(
                    rubric.name,
                    voting,
                    votes,
                    first,
                    needed=options.aa_pairs,
                    resamples=options.resamples,
                    seed=seed % 2**32,
                )
            )
        if rubric.name in ready_names:
            set_aside += _set_aside(rubric.name, voting, votes)
    for rubric in rubrics:
        axes.append(
            _axis(
                rubric,
                bars,
                stability,
                running_bars,
                aa_results,
                set_aside,
                running,
                rubric.name in ready_names,
                [p for p in passes if p.rubric == rubric.name],
                notes.get(rubric.name, []),
            )
        )

    manifest = JudgmentSet(
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
        seal_sha256=seal_sha,
        tasks_sha256=tasks_sha,
        votes_sha256=sha256_bytes((out / VOTES_FILE).read_bytes()),
        exact_sha256=exact_sha,
        calibration=bars,
        running=running_bars,
        stability=stability,
        aa=aa_results,
        axes=axes,
        set_aside=set_aside,
        halts=sorted(running.halted.values()),
        third_pass=passes,
    )
    write_manifest(out, manifest)
    return manifest


def _set_aside(rubric: str, tasks: list[JudgmentTask], votes: dict[str, Vote]) -> list[SetAside]:
    groups: dict[str, list[JudgmentTask]] = defaultdict(list)
    for t in tasks:
        if t.rubric == rubric and t.role in ("confirmatory", "aa"):
            groups[t.judgment].append(t)
    out = []
    for name, group in sorted(groups.items()):
        missing = [f"{t.judge}/{t.order or 'flag'}" for t in group if t.id not in votes]
        if missing:
            out.append(SetAside(judgment=name, rubric=rubric, missing=missing))
    return out


def _axis(
    rubric: Rubric,
    bars: list[BarResult],
    stability: list[BarResult],
    running_bars: list[BarResult],
    aa: list,
    set_aside: list[SetAside],
    running: RunningDetection,
    calibrated: bool,
    passes: list[ThirdPass],
    notes: list[str],
) -> AxisStatus:
    failed, short = list(notes), []
    resolved = any(p.status == "resolved" for p in passes)
    for p in passes:
        if p.status != "resolved":
            failed.append(f"third pass {p.status}: {p.detail}")
    for b in [*bars, *stability, *running_bars]:
        if b.rubric != rubric.name:
            continue
        if resolved and b.bar == "kappa" and b.status == "failed":
            continue  # the third pass answered it (the bar stays in the set, as measured)
        value = "none" if b.value is None else f"{b.value:.2f}"
        if b.status == "failed":
            failed.append(
                f"judge {b.judge} failed {b.bar}: {value} "
                f"(bar {b.op} {b.threshold:.2f}, {b.answered} answered)"
            )
        elif b.status == "incomplete":
            short.append(f"judge {b.judge} {b.bar}: {b.answered} answered of {b.held} held")
    if rubric.name in running.halted:
        failed.append(running.halted[rubric.name])
    for result in aa:
        if result.rubric == rubric.name:
            if result.status == "failed":
                failed.append(f"A/A control failed: {result.detail}")
            elif result.status in ("incomplete", "not run"):
                short.append(f"A/A control {result.status}: {result.detail}")
    mine = [s for s in set_aside if s.rubric == rubric.name]
    if mine:
        short.append(f"{len(mine)} judgment(s) set aside without their full vote set")
    if not calibrated:
        short.append("calibration did not pass: no confirmatory judgment was sent")
    if failed:
        return AxisStatus(rubric=rubric.name, status="no verdict", reasons=failed + short)
    if short:
        return AxisStatus(rubric=rubric.name, status="incomplete", reasons=short)
    return AxisStatus(rubric=rubric.name, status="passed", reasons=[])


def _version() -> str:
    try:
        return metadata.version("harness")
    except metadata.PackageNotFoundError:
        return "unknown"
