"""Issue 11's flow figure: which of our files the record path enters, in what order, how often.

    .venv/bin/python -m bench.flow_bench [--levels 3] [--detail 1] [--at COMMIT]

`--at COMMIT` measures that commit instead of the working tree (its files from `git archive`,
traced by this version of the bench), so a before and an after come from one command each.

Runs a study's record path in this process (`run_study`, local isolation, a scratch run root)
under `sys.setprofile` and records every call made from `run_study` downward into a file of the
project (harness/, rundir/, proxy/, stubs/, ledger/, vendors/, arms/; not the stdlib, third-party
code, bench/ or tests/). The arms and the proxy run as subprocesses, so what is traced is the
host's own path: checks, run directory, backend, orchestrator, finishing.

A call's *level* is how many times the file changes on the stack between it and `run_study`,
the pipeline's files (`--stages`: run_study's own and its stage modules) counting as one: the
pipeline is level 0, the files it calls into are level 1, the files those call into level 2. A
helper in the same file does not deepen it, so splitting a function, or a pipeline into stages,
leaves the figure as it is; an asyncio task counts from the code that created it, not from the
event loop. Levels 0-1 are the pipeline's own flow (what it enters to do its work); deeper
levels add the inner workings of the orchestrator, the backend and the formats.

At each level, a *visit* is a call into a file other than the one the previous counted call
went into, and a *return* is a visit to a file the path had already entered and left
(visits - files). Moving folders leaves these numbers as they are; only a flow whose steps each
keep to their own files lowers them. Not counted: import-time code (a lazy import's module
body), comprehensions and lambdas (no step of their own), and a coroutine resuming after an
await (the same visit going on), so the same code gives the same figure on every run.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import os
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any

REPO = Path(__file__).resolve().parents[1]
# The pipeline before (run_study alone) and after issue 11's stages: absent files are no matter.
STAGES = ("pipeline", "prepare", "start", "drive", "finish")
ROOMS = ("harness", "rundir", "proxy", "stubs", "ledger", "vendors", "canonical", "arms")
_PREFIXES = tuple(str(REPO / room) + os.sep for room in ROOMS)
_CREATE_TASK = asyncio.BaseEventLoop.create_task.__code__
_GENERATOR_FLAGS = 0x20 | 0x80 | 0x200  # CO_GENERATOR | CO_COROUTINE | CO_ASYNC_GENERATOR


@dataclass
class Flow:
    """The files entered at one level or above, in order, one entry per visit."""

    visits: list[str] = field(default_factory=list)

    @property
    def files(self) -> int:
        return len(set(self.visits))

    @property
    def returns(self) -> int:
        return len(self.visits) - self.files

    def per_file(self) -> Counter[str]:
        return Counter(self.visits)


class FlowTracer:
    """A `sys.setprofile` hook recording (level, file) for each call of ours below a root."""

    def __init__(self, root: str, stages: set[str]) -> None:
        self.root = root
        self.stages = stages  # absolute paths of the pipeline's files
        self.calls: list[tuple[int, str]] = []
        self._root_frame: FrameType | None = None
        # Strong references keep a started coroutine's frame id from being reused.
        self._started: dict[int, FrameType] = {}
        # A task's coroutine resumes from the event loop: its stack goes on at its creator's,
        # kept as the files from the creator up to the root (task frame id -> frame, files).
        self._task_stack: dict[int, tuple[FrameType, list[str]]] = {}

    def flow(self, level: int) -> Flow:
        flow = Flow()
        for call_level, path in self.calls:
            if call_level <= level and (not flow.visits or flow.visits[-1] != path):
                flow.visits.append(path)
        return flow

    def __call__(self, frame: FrameType, event: str, arg: Any) -> None:
        if event != "call":
            return
        code = frame.f_code
        if self._root_frame is None:
            if code.co_name == self.root and code.co_filename.startswith(_PREFIXES):
                self._root_frame = frame
                self.calls.append((0, _name(code.co_filename)))
            return
        if code is _CREATE_TASK:
            self._note_task(frame)
            return
        if not code.co_filename.startswith(_PREFIXES) or code.co_name.startswith("<"):
            return  # a module body being imported; a comprehension or lambda: no step of its own
        if code.co_flags & _GENERATOR_FLAGS:
            if id(frame) in self._started:
                return  # resuming after a yield or an await
            self._started[id(frame)] = frame
        files = self._stack_files(frame)
        if files is not None:
            self.calls.append((self._changes(files), _name(code.co_filename)))

    def _note_task(self, frame: FrameType) -> None:
        coro_frame = getattr(frame.f_locals.get("coro"), "cr_frame", None)
        creator = frame.f_back  # through asyncio.create_task, gather, wait_for ... to our code
        while creator is not None and not creator.f_code.co_filename.startswith(_PREFIXES):
            creator = creator.f_back
        files = self._stack_files(creator) if creator is not None else None
        if coro_frame is not None and files is not None:
            self._task_stack[id(coro_frame)] = (coro_frame, files)

    def _stack_files(self, frame: FrameType) -> list[str] | None:
        """Our files on the stack from `frame` up to the root, innermost first; None when the
        call is not below the root or runs inside a module body being imported."""
        files: list[str] = []
        current: FrameType | None = frame
        while current is not None:
            code = current.f_code
            if code.co_name == "<module>":
                return None
            if code.co_filename.startswith(_PREFIXES):
                files.append(code.co_filename)
            if current is self._root_frame:
                return files
            task = self._task_stack.get(id(current))
            if task is not None:
                return files + task[1]
            current = current.f_back
        return None

    def _changes(self, files: list[str]) -> int:
        groups = ["<pipeline>" if path in self.stages else path for path in files]
        return sum(1 for inner, outer in itertools.pairwise(groups) if inner != outer)


def _name(path: str) -> str:
    return str(Path(path).relative_to(REPO))


def trace_record_path(study_path: Path, stages: set[str]) -> FlowTracer:
    os.environ["HARNESS_NO_PROGRESS"] = "1"  # the progress bar is the terminal's, not the flow's
    from harness.run.pipeline import RunRequest, run_study
    from harness.study import load_study

    study = load_study(study_path)
    with tempfile.TemporaryDirectory(prefix="flow-bench-") as tmp:
        request = RunRequest(study=study, mode="record", run_root=Path(tmp), isolation="local")
        tracer = FlowTracer("run_study", stages)
        sys.setprofile(tracer)
        try:
            result = run_study(request)
        finally:
            sys.setprofile(None)
        if not result.passed:
            raise SystemExit(f"the record run did not pass: see {result.run_dir}")
    return tracer


def report_lines(tracer: FlowTracer, levels: int, detail: int) -> list[str]:
    lines = ["| levels counted | files entered | visits | returns to a file already left |"]
    lines.append("|---|---|---|---|")
    for level in range(1, levels + 1):
        flow = tracer.flow(level)
        lines.append(f"| 0-{level} | {flow.files} | {len(flow.visits)} | {flow.returns} |")
    flow = tracer.flow(detail)
    lines += ["", f"Visits per file, levels 0-{detail}:", ""]
    lines += [f"- {name}: {n}" for name, n in flow.per_file().most_common()]
    lines += ["", f"Order, levels 0-{detail}: " + " > ".join(Path(v).stem for v in flow.visits)]
    return lines


def _at_commit(commit: str, argv: list[str]) -> int:
    """Run this bench on `commit`'s files, in a scratch copy (the shared tree is left alone)."""
    with tempfile.TemporaryDirectory(prefix="flow-bench-tree-") as tmp:
        archive = subprocess.run(
            ["git", "archive", commit], cwd=REPO, capture_output=True, check=True
        ).stdout
        subprocess.run(["tar", "-x", "-C", tmp], input=archive, check=True)
        shutil.copy(Path(__file__), Path(tmp) / "bench" / "flow_bench.py")
        # From the copy's root, `python -m` imports the copy's packages before the installed ones.
        return subprocess.run([sys.executable, "-m", "bench.flow_bench", *argv], cwd=tmp).returncode


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--study", type=Path, help="default: examples/quickstart/study.toml")
    parser.add_argument(
        "--stages",
        nargs="+",
        default=[f"harness/run/{name}.py" for name in STAGES],
        help="the pipeline's files, counted as one for the level",
    )
    parser.add_argument("--at", help="measure this commit (git archive) instead of the tree")
    parser.add_argument("--levels", type=int, default=3, help="print levels 0-1 up to 0-N")
    parser.add_argument("--detail", type=int, default=1, help="per-file visits at levels 0-N")
    args = parser.parse_args(argv)
    if args.levels < 1 or args.detail < 1:
        parser.error("--levels and --detail must be 1 or more")
    if args.at:
        child = ["--levels", str(args.levels), "--detail", str(args.detail)]
        child += ["--stages", *args.stages]
        if args.study:
            child += ["--study", str(args.study.resolve())]
        raise SystemExit(_at_commit(args.at, child))
    study = args.study or REPO / "examples/quickstart/study.toml"
    tracer = trace_record_path(study, {str(REPO / path) for path in args.stages})
    print("\n".join(report_lines(tracer, args.levels, args.detail)))


if __name__ == "__main__":
    main()
