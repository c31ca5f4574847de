"""Which runs of a folder `harness merge ROOT` takes: per shard, the latest run that passed.

A cluster job's `--run-dir` collects every attempt: a shard killed mid-run (no manifest), one
stopped by Ctrl-C (interrupted), one that ran to its end and failed (its proxy killed, an arm
that broke), and the re-run that passed. Recovery is running the shard again; the merge then
takes, per shard index, the latest run that passed, else the latest that finished (the merged
run then fails and says why), else the latest there is (which the merge refuses, naming it). The
runs left out are named with why, so nothing is dropped in silence and no run needs deleting by
hand. Only shard runs count: the record runs and gate that let live mode start are not shards.
When the folder holds shards of both modes (record shards tried first, then live), the mode of
the latest shard is taken and the others are left out.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from rundir.errors import RunDirError
from rundir.runs import RunHeader, read_header


@dataclass(frozen=True)
class LeftOut:
    run_dir: Path
    why: str  # e.g. "shard 2/3, failed: arm 'a' completed no turn; RUN taken: passed"

    def __str__(self) -> str:
        return f"{self.run_dir} ({self.why})"


@dataclass(frozen=True)
class _Found:
    run_dir: Path
    header: RunHeader

    @property
    def index(self) -> int:
        assert self.header.study is not None and self.header.study.shard is not None
        return self.header.study.shard.index

    @property
    def label(self) -> str:
        assert self.header.study is not None and self.header.study.shard is not None
        return self.header.study.shard.label

    @property
    def finished(self) -> bool:
        study = self.header.study
        return self.header.manifest is not None and not (study and study.interrupted)

    @property
    def passed(self) -> bool:
        return self.finished and bool(self.header.study and self.header.study.passed)

    @property
    def state(self) -> str:
        study = self.header.study
        if self.header.manifest is None:
            return "unfinished (no manifest: killed, or still running)"
        if study is not None and study.interrupted:
            return "interrupted"
        return "passed" if self.passed else f"failed: {failure_reason(self.header)}"

    @property
    def order(self) -> tuple[str, str]:
        return (self.header.started, self.run_dir.name)


def failure_reason(header: RunHeader) -> str:
    """Why a finished run failed, in one line (its run.json's own words)."""
    study = header.study
    if study is None:
        return "not a study run"
    why = [f"arm {arm!r} {reason}" for arm, reason in study.arm_failures.items()]
    if study.halted:
        why.append(f"halted: {study.halted}")
    if study.outcomes.get("infra_failed"):
        why.append(f"{study.outcomes['infra_failed']} turns failed on the machinery")
    if study.proxy_refused:
        why.append("the proxy's own connections were refused")
    if study.stray_connections:
        why.append(f"{study.stray_connections} stray connections")
    if any(study.memory_miss.values()) and not study.allow_misses:
        why.append("memory controls missed")
    return "; ".join(why) or "did not pass (see its run.json)"


def _shard(run_dir: Path) -> RunHeader | None:
    if not (run_dir / "run.json").exists():
        return None
    try:
        header = read_header(run_dir)
    except RunDirError:
        return None
    return header if header.study is not None and header.study.shard is not None else None


def pick_runs(dirs: list[Path]) -> tuple[list[Path], list[LeftOut]]:
    """The run directories to merge, a folder of runs (no run.json of its own) standing for the
    shard runs it holds; and the runs of those folders left out, each with why."""
    out: list[Path] = []
    left: list[LeftOut] = []
    for path in dirs:
        if not path.is_dir() or (path / "run.json").exists():
            out.append(path)
            continue
        found = [
            _Found(run, header)
            for run in sorted(path.iterdir())
            if (header := _shard(run)) is not None
        ]
        if not found:
            raise RunDirError(
                f"{path} holds no shard runs",
                hint="give the run directories of `harness record|live STUDY --shard I/N`, or "
                "the folder they were written to",
            )
        mode = max(found, key=lambda f: f.order).header.mode
        left += [
            LeftOut(f.run_dir, f"shard {f.label}, a {f.header.mode} run; the {mode} runs are taken")
            for f in found
            if f.header.mode != mode
        ]
        by_index: dict[int, list[_Found]] = {}
        for f in found:
            if f.header.mode == mode:
                by_index.setdefault(f.index, []).append(f)
        for index in sorted(by_index):
            taken, rest = _choose(by_index[index])
            out.append(taken.run_dir)
            took = "passed" if taken.passed else "no run of it passed; the latest"
            left += [
                LeftOut(
                    f.run_dir, f"shard {f.label}, {f.state}; {taken.run_dir.name} taken: {took}"
                )
                for f in rest
            ]
    return out, left


def _choose(runs: list[_Found]) -> tuple[_Found, list[_Found]]:
    runs = sorted(runs, key=lambda f: f.order)
    for good in (lambda f: f.passed, lambda f: f.finished, lambda f: True):
        chosen = [f for f in runs if good(f)]
        if chosen:
            taken = chosen[-1]
            return taken, [f for f in runs if f is not taken]
    raise AssertionError("a shard index with no runs")
