"""Rubric files: what a judge is asked, one TOML file per rubric, versioned and hashed.

    schema = 1
    name = "grounded"          # the axis it measures
    version = "1"              # bump on any change to the question
    kind = "flag"              # flag: one reply, FLAG or OK; pairwise: two replies, which is better
    turns = "all"              # which turns are judged: all, or the last of each item
    question = "Flag the reply if ..."

The file's SHA-256 goes into the judgment set, so a rubric edited after a stage is seen as another
rubric, whatever its version says.
"""

from __future__ import annotations

import hashlib
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from harness.errors import HarnessError


class RubricFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    schema_: Literal[1] = Field(1, alias="schema")
    name: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    version: str = Field(min_length=1)
    kind: Literal["flag", "pairwise"]
    turns: Literal["all", "last"] = "all"
    question: str = Field(min_length=10)


@dataclass(frozen=True)
class Rubric:
    file: RubricFile
    path: Path
    sha256: str

    @property
    def name(self) -> str:
        return self.file.name

    @property
    def kind(self) -> Literal["flag", "pairwise"]:
        return self.file.kind


def load_rubric(path: Path) -> Rubric:
    try:
        data = path.read_bytes()
        parsed = tomllib.loads(data.decode("utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
        raise HarnessError(
            f"cannot read rubric {path}: {e}", hint="a rubric is a TOML file"
        ) from None
    try:
        rubric = RubricFile.model_validate(parsed)
    except ValidationError as e:
        first = e.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "(the file)"
        raise HarnessError(
            f"rubric {path}: {where}: {first['msg']}",
            hint="fields: schema = 1, name, version, kind = flag|pairwise, turns, question",
        ) from None
    return Rubric(file=rubric, path=path, sha256=hashlib.sha256(data).hexdigest())


def load_rubrics(folder: Path) -> list[Rubric]:
    """Every `*.toml` of `folder`, by name; two files naming one rubric are refused."""
    if not folder.is_dir():
        raise HarnessError(f"--rubrics {folder} is not a folder", hint="a folder of rubric TOMLs")
    rubrics = [load_rubric(path) for path in sorted(folder.glob("*.toml"))]
    if not rubrics:
        raise HarnessError(f"no rubric (*.toml) in {folder}", hint="add one file per rubric")
    names = [r.name for r in rubrics]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise HarnessError(f"rubric {twice[0]!r} is defined by two files in {folder}")
    return sorted(rubrics, key=lambda r: r.name)
