"""docs/pilot.md's legs file loads (issue 36 item 6): the page's example is a legs file the
loader accepts and that fits the coupled example it names (every leg runs B, whose turn context
the others get), with its drop order as written."""

from __future__ import annotations

import re
from pathlib import Path

from harness.run.pilot.legs import check_against_study, load_legs
from harness.study import load_study
from tests.helpers.studies import REPO


def test_the_pages_legs_file_loads_against_the_coupled_example(tmp_path: Path) -> None:
    page = (REPO / "docs" / "pilot.md").read_text(encoding="utf-8")
    section = page[page.index("## The legs file") :]
    block = re.search(r"```toml\n(.*?)```", section, re.S)
    assert block is not None
    path = tmp_path / "legs.toml"
    path.write_text(block.group(1), encoding="utf-8")
    legs = load_legs(path)
    study = load_study(REPO / "examples" / "coupled" / "study.toml")
    assert study.file.coupling is not None
    items = [item.id for item in study.items]
    check_against_study(legs, list(study.arms), items, study.file.coupling.addon_from)
    assert legs.order_of_drops() == ["Z-all", "C1-garden"]
    assert len(legs.legs) == 7
