"""The run files a report reads, from one run or a run and the runs that resumed it.

Read-only over run.json, turns.jsonl, calls.jsonl, egress.jsonl, rtt.jsonl, strays_seen.jsonl
and bodies/pack.bin, so it works on any copy of a run. Several directories are one study's
chain (a stopped run, then its `--resume` runs): for each (item, arm) pair the turns of the LAST
directory given that has any are kept, because a resume re-runs exactly the pairs the earlier
run did not finish.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import zstandard

from harness.errors import HarnessError
from rundir.calls import CallRecord, PackReader, read_calls
from rundir.network import RttProbe, StraySeen, read_egress, read_probes, read_seen
from rundir.runs import file_sha256, read_header, voided_items
from rundir.turns import TurnRecord, read_turns

RUN_FILES = (
    "run.json",
    "turns.jsonl",
    "calls.jsonl",
    "egress.jsonl",
    "rtt.jsonl",
    "strays_seen.jsonl",
    "voids.jsonl",
    # the protocol's addendum as the run started (rundir/runs/protocol.py)
    "protocol/addendum.toml",
)
# The study's addendum as it is now, which may hold entries added after the run (a later
# amendment is that run's deviation): harness/report/sections/paper_trail.py.
ADDENDUM_NOW = "study addendum (now)"


@dataclass
class ReadFile:
    """A file the report read, named in the section that used it."""

    kind: str  # what it is to the report: run header, turn log, call log, ...
    path: Path
    sha256: str
    size: int


@dataclass
class VoidedItem:
    """An item `harness void` set aside in every arm of a run (rundir/runs/voids.py): its turns
    there are left out of every statistic, and kept here to show against the rerun's."""

    run_id: str
    item: str
    reason: str
    turns: list[TurnRecord]


@dataclass
class RunData:
    run_dirs: list[Path]
    headers: list[dict[str, Any]]
    turns: list[TurnRecord]
    calls: list[CallRecord]
    egress: list[dict[str, Any]]
    response_bytes: dict[str, int]  # response_hash -> body size, when the pack says
    read: list[ReadFile] = field(default_factory=list)
    probes: list[RttProbe] = field(default_factory=list)  # rtt.jsonl: the round-trip floors
    strays_seen: list[StraySeen] = field(default_factory=list)  # which turn saw each stray
    voided: list[VoidedItem] = field(default_factory=list)  # set aside, in the order voided

    @property
    def header(self) -> dict[str, Any]:
        """The first run's header: the run the study started as."""
        return self.headers[0]

    @property
    def study(self) -> dict[str, Any]:
        return dict(self.header.get("study") or {})

    @property
    def deadline_s(self) -> float:
        return float(self.study.get("deadline_ms") or 0) / 1000

    @property
    def arm_names(self) -> list[str]:
        names = list(self.study.get("arms") or [])
        return names + sorted({t.arm for t in self.turns} - set(names))


def read_file(kind: str, path: Path) -> ReadFile:
    return ReadFile(kind, path, file_sha256(path), path.stat().st_size)


def load_runs(run_dirs: list[Path]) -> RunData:
    if not run_dirs:
        raise HarnessError("no run directory given", hint="harness report runs/<run-id>")
    headers, read = [], []
    by_pair: dict[tuple[str, str], list[TurnRecord]] = {}
    calls: list[CallRecord] = []
    egress: list[dict[str, Any]] = []
    sizes: dict[str, int] = {}
    probes: list[RttProbe] = []
    seen: list[StraySeen] = []
    voided: list[VoidedItem] = []
    for run_dir in run_dirs:
        headers.append(_header(run_dir))
        turns: dict[tuple[str, str], list[TurnRecord]] = {}
        with _parsing(run_dir / "turns.jsonl"):
            for record in read_turns(run_dir / "turns.jsonl"):
                turns.setdefault((record.item, record.arm), []).append(record)
        calls_path = run_dir / "calls.jsonl"
        with _parsing(calls_path):
            calls += read_calls(calls_path) if calls_path.exists() else []
        with _parsing(run_dir / "egress.jsonl"):
            egress += [e.as_dict() for e in read_egress(run_dir / "egress.jsonl")]
        with _parsing(run_dir / "rtt.jsonl"):
            probes += read_probes(run_dir / "rtt.jsonl")
        with _parsing(run_dir / "strays_seen.jsonl"):
            seen += read_seen(run_dir / "strays_seen.jsonl")
        with _parsing(run_dir / "voids.jsonl"):
            voids = voided_items(run_dir)
        for item, reason in voids.items():
            # Set aside in every arm; an earlier run's turns of the item, which this run's
            # replaced, do not come back in its place: only a later run (the rerun) does.
            aside = [t for pair in [p for p in turns if p[0] == item] for t in turns.pop(pair)]
            for pair in [p for p in by_pair if p[0] == item]:
                del by_pair[pair]
            voided.append(VoidedItem(str(headers[-1].get("run_id")), item, reason, aside))
        by_pair.update(turns)  # a later run's pair replaces the earlier one's
        sizes.update(_body_sizes(run_dir))
        for name in RUN_FILES:
            if (run_dir / name).is_file():
                read.append(read_file(name, run_dir / name))
        if (run_dir / "bodies" / "pack.bin").is_file():
            read.append(read_file("bodies/pack.bin", run_dir / "bodies" / "pack.bin"))
    turns_kept = [t for pair in by_pair.values() for t in pair]
    read += _addenda_now(headers)
    return RunData(
        list(run_dirs), headers, turns_kept, calls, egress, sizes, read, probes, seen, voided
    )


def _addenda_now(headers: list[dict[str, Any]]) -> list[ReadFile]:
    found: dict[Path, ReadFile] = {}
    for header in headers:
        study = header.get("study") or {}
        protocol = study.get("protocol") or {}
        if protocol.get("addendum") and study.get("study_path"):
            path = Path(str(study["study_path"])).parent / str(protocol["addendum"])
            if path.is_file() and path not in found:
                found[path] = read_file(ADDENDUM_NOW, path)
    return list(found.values())


@contextmanager
def _parsing(path: Path) -> Iterator[None]:
    try:
        yield
    except ValueError as e:  # pydantic's ValidationError and json's errors are ValueErrors
        first = str(e).splitlines()[0]
        raise HarnessError(
            f"{path} does not parse: {first}",
            hint="run `harness audit` on this run; a report is not made from damaged files",
        ) from None


def _body_sizes(run_dir: Path) -> dict[str, int]:
    # zstd frames carry their content size in the frame header: sizes without decompressing.
    pack = PackReader.open(run_dir)
    sizes = {}
    for digest, (start, length) in pack.index.items():
        size = zstandard.frame_content_size(pack.data[start : start + length])
        if size >= 0:
            sizes[digest] = size
    return sizes


def _header(run_dir: Path) -> dict[str, Any]:
    # The report reads headers as plain dicts; read_header validates (and upgrades) them first.
    return read_header(run_dir).model_dump(by_alias=True, mode="json")
