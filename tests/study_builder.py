"""Study folders for tests, written from Python values: study.toml, items.jsonl, stubs.toml.

Tests used to write study.toml line by line with f-strings, each copy quoting (or not) its own
way; here the study is a dict written by tomli_w, so any value a test needs (a path with quotes,
a nested `[vendors]` or `[pins]` table, an arm's env) is written as TOML means it.

    study = StudyBuilder(items=ITEMS).arm("toy", "python study_arm.py", GREETING="hi")
    path = study.set(deadline_ms=20000, vendors={"openai": url}).write(tmp_path / "study")
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import tomli_w

ONE_ITEM: dict[str, Any] = {"id": "i1", "clock": "2024-05-01T10:00:00", "turns": [{"user": "hi"}]}


@dataclass
class StudyBuilder:
    name: str = "test"
    items: list[dict[str, Any]] = field(default_factory=lambda: [dict(ONE_ITEM)])
    # Arms by name (`[arms.NAME]` tables), or a list of compose services (`arms = [...]`).
    arms: dict[str, dict[str, Any]] | list[str] = field(default_factory=dict)
    # Every other study.toml field: deadline_ms, ledger, mask, on_stray, vendors, pins, ...
    fields: dict[str, Any] = field(default_factory=dict)
    # stubs.toml's contents; written beside the study and named by its `stubs` field.
    stubs: dict[str, Any] | None = None

    def arm(self, name: str, command: str, /, **env: str) -> StudyBuilder:
        """Add `[arms.NAME]` running `command` with `env`."""
        assert isinstance(self.arms, dict), "arms is a list of compose services"
        self.arms[name] = {"command": command, "env": env}
        return self

    def set(self, **fields: Any) -> StudyBuilder:
        self.fields.update(fields)
        return self

    def document(self) -> dict[str, Any]:
        """study.toml as a dict; plain fields first, as a person would write them."""
        study: dict[str, Any] = {"name": self.name, "items": "items.jsonl"}
        if self.stubs is not None:
            study["stubs"] = "stubs.toml"
        study.update(self.fields)
        if self.arms or isinstance(self.arms, list):
            study["arms"] = self.arms
        return study

    def write(self, folder: Path) -> Path:
        """Write the folder; returns the path of its study.toml."""
        folder.mkdir(parents=True, exist_ok=True)
        lines = "".join(json.dumps(item) + "\n" for item in self.items)
        (folder / "items.jsonl").write_text(lines)
        if self.stubs is not None:
            (folder / "stubs.toml").write_text(tomli_w.dumps(self.stubs))
        path = folder / "study.toml"
        path.write_text(tomli_w.dumps(self.document()))
        return path
