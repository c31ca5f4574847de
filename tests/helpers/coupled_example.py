"""The coupled example (examples/coupled) copied where a test may record it: its ledger moved
inside the copy, so a test's runs never touch the repository's ledger."""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.helpers.studies import REPO

EXAMPLE = REPO / "examples" / "coupled"


def copy_example(folder: Path) -> Path:
    """The example copied to `folder`; returns the copy's study.toml."""
    shutil.copytree(EXAMPLE, folder)
    study = folder / "study.toml"
    text = study.read_text().replace('ledger = "../../ledger.jsonl"', 'ledger = "ledger.jsonl"')
    study.write_text(text)
    return study
