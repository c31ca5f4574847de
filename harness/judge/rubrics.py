"""Rubric files: what a judge is asked, one TOML file per rubric, versioned and hashed.

    schema = 1
    name = "grounded"          # the axis it measures
    version = "1"              # bump on any change to the question
    kind = "flag"              # flag: one reply, FLAG or OK; pairwise: two replies, which is better
    turns = "all"              # which turns are judged: all, or the last of each item
    question = "Flag the reply if ..."
    clean = "grounded.clean.jsonl"   # flag rubrics: the declared clean set (clean_set.py)

A flag rubric must declare its clean set: the replies two readers confirmed clean, from which
alone its clean controls are drawn (an arm's own reply is never assumed clean).

A grading rubric (`kind = "qa"`) asks no question of its own: it grades answers against their
gold with LongMemEval's prompt for the question's type (harness/judge/grading.py), and says
which answers (`grades`): a memory benchmark's `questions`, or the `probes` (turns that `expect`
words), which normalised exact match settles first.

    schema = 1
    name = "t1_correct"
    version = "1"
    kind = "qa"
    grades = "questions"

The file's SHA-256 goes into the judgment set, so a rubric edited after a stage is seen as another
rubric, whatever its version says.
"""

from __future__ import annotations

import hashlib
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from harness.errors import HarnessError
from harness.judge.clean_set import CleanSet, load_clean_set


class RubricFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    schema_: Literal[1] = Field(1, alias="schema")
    name: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    version: str = Field(min_length=1)
    kind: Literal["flag", "pairwise", "qa"]
    turns: Literal["all", "last"] = "all"
    question: str = ""
    grades: Literal["questions", "probes"] | None = None
    clean: str | None = None

    @model_validator(mode="after")
    def _fits_kind(self) -> RubricFile:
        if self.kind == "qa":
            if self.grades is None:
                raise ValueError('a qa rubric needs grades = "questions" or "probes"')
            if self.question:
                raise ValueError("a qa rubric asks LongMemEval's question: give no question")
        else:
            if self.grades is not None:
                raise ValueError("grades is for kind = qa")
            if len(self.question.strip()) < 10:
                raise ValueError("question: the rubric's question (at least 10 characters)")
        if self.kind == "flag" and not self.clean:
            raise ValueError(
                "a flag rubric needs clean = FILE: the replies two readers confirmed clean "
                "(its clean controls come only from there)"
            )
        if self.kind != "flag" and self.clean is not None:
            raise ValueError("clean is for kind = flag")
        return self


@dataclass(frozen=True)
class Rubric:
    file: RubricFile
    path: Path
    sha256: str
    clean: CleanSet | None = None

    @property
    def name(self) -> str:
        return self.file.name

    @property
    def kind(self) -> Literal["flag", "pairwise", "qa"]:
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
            hint="fields: schema = 1, name, version, kind (flag, pairwise, qa), turns, question "
            "(or grades, for qa), clean (for flag)",
        ) from None
    clean = None
    if rubric.clean is not None:
        clean = load_clean_set(path.parent / rubric.clean, rubric.name)
    return Rubric(file=rubric, path=path, sha256=hashlib.sha256(data).hexdigest(), clean=clean)


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
