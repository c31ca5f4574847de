"""A judgment set's files (the folder's layout: rundir/judgments/records.py): written by the
stage, each at once or (votes.jsonl) line by line as replies arrive, and read back refusing a
damaged or newer record with the file and line that holds it."""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Callable
from pathlib import Path
from typing import IO, TypeVar

from pydantic import BaseModel, ValidationError

from rundir.atomic import write_atomic
from rundir.errors import RunDirError, SchemaTooNew
from rundir.jsonlines import read_lines
from rundir.judgments.records import ExactMatch, JudgmentSet, JudgmentTask, Vote
from rundir.model import RunDirModel, schema_too_new

MANIFEST_FILE = "judgments.json"
TASKS_FILE = "tasks.jsonl"
VOTES_FILE = "votes.jsonl"
EXACT_FILE = "exact.jsonl"
PROMPTS_DIR = "prompts"
REPLIES_DIR = "replies"

_T = TypeVar("_T", bound=RunDirModel)


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def pretty_json(model: BaseModel) -> str:
    """A whole-file record as the set writes it: indented JSON by field alias, one final newline."""
    return json.dumps(model.model_dump(mode="json", by_alias=True), indent=2) + "\n"


def write_manifest(set_dir: Path, manifest: JudgmentSet) -> None:
    write_atomic(set_dir / MANIFEST_FILE, pretty_json(manifest))


def write_tasks(set_dir: Path, tasks: list[JudgmentTask]) -> str:
    text = "".join(task.model_dump_json(by_alias=True) + "\n" for task in tasks)
    write_atomic(set_dir / TASKS_FILE, text)
    return sha256_bytes(text.encode("utf-8"))


class VoteLog:
    """votes.jsonl, appended as replies arrive (a stage that dies keeps what it was told)."""

    def __init__(self, set_dir: Path) -> None:
        self._file: IO[str] = open(set_dir / VOTES_FILE, "a", encoding="utf-8")  # noqa: SIM115
        # Judges answer on several threads; one line must never interleave with another.
        self._lock = threading.Lock()

    def append(self, vote: Vote, then: Callable[[], None] | None = None) -> None:
        """Append one line; `then` runs under the same lock, so what it records follows the
        file's order (the running watch, which a re-check replays from this file)."""
        line = vote.model_dump_json(by_alias=True) + "\n"
        with self._lock:
            self._file.write(line)
            self._file.flush()
            if then is not None:
                then()

    def close(self) -> None:
        self._file.close()


def _invalid(
    path: Path, error: ValidationError | json.JSONDecodeError, line: int = 0
) -> RunDirError:
    where = f"{path}:{line}" if line else str(path)
    if isinstance(error, json.JSONDecodeError):
        return RunDirError(
            f"{where}: not JSON: {error.msg}", hint="the set is damaged: judge again"
        )
    too_new = schema_too_new(error)
    if too_new is not None:
        return SchemaTooNew(f"{where}: {too_new.message}", hint=too_new.hint)
    first = error.errors()[0]
    field = ".".join(str(part) for part in first["loc"]) or "(the record)"
    return RunDirError(f"{where}: {field}: {first['msg']}", hint="the set is damaged: judge again")


def _read_lines(path: Path, model: type[_T]) -> list[_T]:
    if not path.exists():
        raise RunDirError(f"{path} is missing", hint="give the folder `harness judge --out` wrote")
    out = []
    for number, line in enumerate(read_lines(path), 1):
        if line.strip():
            try:
                out.append(model.model_validate_json(line))
            except ValidationError as e:
                raise _invalid(path, e, number) from None
    return out


def read_manifest(set_dir: Path) -> JudgmentSet:
    path = set_dir / MANIFEST_FILE
    try:
        return JudgmentSet.model_validate_json(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise RunDirError(
            f"{set_dir} is not a judgment set (no {MANIFEST_FILE})",
            hint="give the folder `harness judge --out` wrote",
        ) from None
    except ValidationError as e:
        raise _invalid(path, e) from None


def write_exact(set_dir: Path, records: list[ExactMatch]) -> str | None:
    if not records:
        return None
    text = "".join(r.model_dump_json(by_alias=True) + "\n" for r in records)
    write_atomic(set_dir / EXACT_FILE, text)
    return sha256_bytes(text.encode("utf-8"))


def read_exact(set_dir: Path) -> list[ExactMatch]:
    if not (set_dir / EXACT_FILE).exists():
        return []
    return _read_lines(set_dir / EXACT_FILE, ExactMatch)


def read_tasks(set_dir: Path) -> list[JudgmentTask]:
    return _read_lines(set_dir / TASKS_FILE, JudgmentTask)


def read_votes(set_dir: Path) -> list[Vote]:
    return _read_lines(set_dir / VOTES_FILE, Vote)
