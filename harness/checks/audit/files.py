"""The audit's checks of the run's own files (harness/checks/audit/run.py runs them): calls.jsonl
parses as this run's calls (`call_log`), every body a call names is in the pack and hashes to its
name (`body`), and every file of run.json's manifest is there as listed, none added (`file`).
Each finding is (where, detail); the audit names its check and counts what was checked."""

from __future__ import annotations

from pathlib import Path

from pydantic import ValidationError

from rundir.calls import UNSTORED_FLAGS, CallRecord, PackReader
from rundir.runs import NOT_LISTED, RunHeader, file_sha256

Findings = list[tuple[str, str]]


def read_call_log(run_dir: Path, run_id: str) -> tuple[list[tuple[int, CallRecord]], Findings]:
    """Every call of calls.jsonl with its line number; lines that are not this run's calls, or
    repeat a seq, are findings (a run without the file has no calls)."""
    path = run_dir / "calls.jsonl"
    calls: list[tuple[int, CallRecord]] = []
    found: Findings = []
    if not path.exists():
        return calls, found
    seen: set[int] = set()
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                call = CallRecord.model_validate_json(line)
            except ValidationError as e:
                found.append((f"calls.jsonl:{lineno}", f"not a call record: {e}"))
                continue
            if call.run_id != run_id:
                found.append((f"calls.jsonl:{lineno}", f"run_id {call.run_id!r}"))
            if call.seq in seen:
                found.append((f"calls.jsonl:{lineno}", f"seq {call.seq} twice"))
            seen.add(call.seq)
            calls.append((lineno, call))
    return calls, found


def body_findings(run_dir: Path, calls: list[tuple[int, CallRecord]]) -> tuple[Findings, int]:
    """Each call's request and response body against bodies/pack.bin; returns the findings and
    how many bodies were checked."""
    pack = PackReader.open(run_dir)
    found: Findings = []
    if pack.damage is not None:
        at, why = pack.damage
        found.append(("bodies/pack.bin", f"unreadable from byte {at}: {why}"))
    checked = 0
    for lineno, call in calls:
        for field, digest in (
            ("request_body", call.request_body),
            ("response_hash", call.response_hash),
        ):
            where = f"calls.jsonl:{lineno} (seq {call.seq}) {field}"
            if UNSTORED_FLAGS[field] in call.flags:
                found.append((where, "the proxy could not store this body (a full disk?)"))
            if digest is None:
                continue
            checked += 1
            if digest not in pack:
                found.append((where, f"body {digest} is not in bodies/pack.bin"))
                continue
            try:
                pack.get(digest)
            except ValueError as e:
                found.append((where, f"body {digest} was altered: {e}"))
    return found, checked


def manifest_findings(run_dir: Path, header: RunHeader) -> tuple[Findings, int]:
    """The run directory against run.json's manifest: missing, changed and added files; returns
    the findings and how many listed files were checked."""
    manifest = header.manifest
    if manifest is None:
        return [("run.json", "no manifest: the run did not finish, or predates it")], 0
    found: Findings = []
    listed = set()
    for entry in manifest.files:
        listed.add(entry.path)
        path = run_dir / entry.path
        if not path.is_file():
            found.append((entry.path, "listed in the manifest but missing"))
        elif path.stat().st_size != entry.size or file_sha256(path) != entry.sha256:
            found.append(
                (
                    entry.path,
                    f"changed since the run: manifest says {entry.size} bytes, SHA-256 "
                    f"{entry.sha256}; now {path.stat().st_size} bytes, {file_sha256(path)}",
                )
            )
    for path in sorted(p for p in run_dir.rglob("*") if p.is_file()):
        relative = path.relative_to(run_dir).as_posix()
        if relative in listed or relative in NOT_LISTED or relative.endswith(".tmp"):
            continue
        found.append((relative, "not in the manifest: added after the run"))
    return found, len(manifest.files)
