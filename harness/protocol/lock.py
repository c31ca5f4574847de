"""Frozen protocol files: `harness protocol freeze STUDY FILE` locks a file's SHA-256 and date in
`protocol.lock.json` beside the study; every run of the study (record, gate, live, replay) then
refuses to start, in one line naming the file, when a frozen file's bytes differ from its lock,
and when the study stops naming a locked file without a withdrawal entry in the addendum: the
lock, not study.toml, says what is frozen.

A frozen file never changes: freezing it again with other bytes is refused (the change belongs in
the addendum, harness/protocol/addendum.py). The lock is committed with the study; the run's
header carries the hashes (rundir/runs/protocol.py), which `harness audit` re-checks.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import Field, ValidationError

from harness.errors import HarnessError
from harness.protocol.addendum import parse_addendum
from harness.study import Study
from rundir.atomic import write_atomic
from rundir.model import RunDirModel
from rundir.runs import FrozenHash, ProtocolRecord, now_iso

LOCK_FILE = "protocol.lock.json"
LOCK_SCHEMA: Literal[1] = 1


class ProtocolLock(RunDirModel):
    schema_: Literal[1] = Field(LOCK_SCHEMA, alias="schema")
    files: list[FrozenHash] = Field(default_factory=list)

    def get(self, name: str) -> FrozenHash | None:
        return next((f for f in self.files if f.path == name), None)


@dataclass(frozen=True)
class CheckedProtocol:
    """What a run records: the hashes, and the addendum's bytes it copies into the run."""

    record: ProtocolRecord
    addendum_bytes: bytes | None


def lock_path(study: Study) -> Path:
    return study.path.parent / LOCK_FILE


def read_lock(study: Study) -> ProtocolLock:
    path = lock_path(study)
    if not path.exists():
        return ProtocolLock()
    try:
        return ProtocolLock.model_validate_json(path.read_bytes())
    except (OSError, ValidationError, ValueError) as e:
        first = str(e).splitlines()[0]
        raise HarnessError(
            f"{path} is not a protocol lock this harness reads: {first}",
            hint="restore it from the study's repository; it is written by harness protocol freeze",
        ) from None


def _digest(path: Path, name: str) -> str:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError as e:
        raise HarnessError(
            f"protocol file {name} ({path}) cannot be read: {e.strerror}",
            hint="restore it: the study names it in [protocol]",
        ) from None


def _named(study: Study, file: Path) -> str:
    """The study's name for `file` (given as the study writes it, or as a path from here)."""
    frozen = study.file.protocol.frozen
    if str(file) in frozen:
        return str(file)
    target = file.resolve()
    for name in frozen:
        if (study.path.parent / name).resolve() == target:
            return name
    raise HarnessError(
        f"{file} is not one of the study's frozen protocol files ({', '.join(frozen) or 'none'})",
        hint=f"add it to [protocol] frozen = [...] in {study.path} first",
    )


def freeze(study: Study, file: Path) -> tuple[FrozenHash, bool]:
    """Lock `file`; returns its entry and whether it was newly locked (False: already was)."""
    name = _named(study, file)
    digest = _digest(study.path.parent / name, name)
    lock = read_lock(study)
    known = lock.get(name)
    if known is not None:
        if known.sha256 != digest:
            raise HarnessError(
                f"frozen protocol file {name} was frozen on {known.frozen} with SHA-256 "
                f"{known.sha256} and now hashes {digest}: a frozen file never changes",
                hint="restore its frozen bytes and write the change into the addendum",
            )
        return known, False
    entry = FrozenHash(path=name, sha256=digest, frozen=now_iso())
    lock.files.append(entry)
    text = json.dumps(lock.model_dump(by_alias=True), indent=2) + "\n"
    write_atomic(lock_path(study), text)
    return entry, True


def check_protocol(study: Study) -> CheckedProtocol | None:
    """Refuse, naming the file, a frozen file that is unlocked, unreadable or changed, and an
    addendum that is missing or malformed; None when the study declares no protocol."""
    protocol = study.file.protocol
    lock = read_lock(study)  # the source of truth: what it locks stays locked
    if not protocol.frozen and protocol.addendum is None and not lock.files:
        return None
    hashes = []
    for name in protocol.frozen:
        digest = _digest(study.path.parent / name, name)
        known = lock.get(name)
        if known is None:
            raise HarnessError(
                f"protocol file {name} is not frozen (no entry in {lock_path(study)})",
                hint=f"freeze it: harness protocol freeze {study.path} {name}",
            )
        if known.sha256 != digest:
            raise HarnessError(
                f"frozen protocol file {name} changed since it was frozen on {known.frozen} "
                f"(SHA-256 {known.sha256[:12]}..., now {digest[:12]}...)",
                hint="restore its frozen bytes; a change goes into the addendum as an amendment",
            )
        hashes.append(known)
    data = None
    if protocol.addendum is not None:
        path = study.path.parent / protocol.addendum
        try:
            data = path.read_bytes()
        except OSError as e:
            raise HarnessError(
                f"protocol addendum {protocol.addendum} ({path}) cannot be read: {e.strerror}",
                hint="create it (it may hold no entries yet) or remove `addendum` from [protocol]",
            ) from None
    withdrawn: set[str] = set()
    if data is not None:
        withdrawn = parse_addendum(data, protocol.addendum or "").withdrawn()
    _refuse_unnamed(study, lock, withdrawn)
    record = ProtocolRecord(
        frozen=hashes,
        addendum=protocol.addendum,
        addendum_sha256=hashlib.sha256(data).hexdigest() if data is not None else None,
    )
    return CheckedProtocol(record, data)


def _refuse_unnamed(study: Study, lock: ProtocolLock, withdrawn: set[str]) -> None:
    """A locked file the study stops naming (dropped from `frozen`, or the [protocol] table
    removed) could then change unseen: refused until the addendum records its withdrawal."""
    named = set(study.file.protocol.frozen)
    for entry in lock.files:
        if entry.path in named or entry.path in withdrawn:
            continue
        raise HarnessError(
            f"protocol file {entry.path} is locked in {lock_path(study)} (frozen "
            f"{entry.frozen}) but {study.path} no longer names it in [protocol] frozen",
            hint=f"name it again, or record its withdrawal in the addendum: [[entry]] kind = "
            f'"withdrawal", file = "{entry.path}", date, text and reason (docs/protocol.md)',
        )
