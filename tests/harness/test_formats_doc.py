"""docs/formats.md is generated from the run-directory models (harness/formats_doc.py): the
committed page is what the models say now, every model of rundir/ is on it, no field is left out,
and a field's comments (above it, on its line) and a Literal alias's values reach its row."""

from __future__ import annotations

import importlib
import pkgutil
import subprocess
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

import rundir
from harness import formats_doc
from rundir.model import RunDirModel
from tests.helpers.studies import REPO

PAGE = REPO / "docs" / "formats.md"

Colour = Literal["red", "green"]


class Sample(BaseModel):
    """A sample record: its docstring heads its table,
    its lines joined.

    - a list item
      over two lines;
    - another item.
    """

    name: str  # what the line is called
    # Two lines of comment above a field
    # are joined into its meaning.
    size: int = 3
    colour: Colour = "red"
    tags: list[str] = Field(
        default_factory=list,  # a comment inside a field written over several lines
    )
    bare: bool | None = None
    described: int = Field(0, description="Said by pydantic's description.")  # and a comment


def test_the_committed_page_is_what_the_models_say() -> None:
    assert PAGE.read_text() == formats_doc.render(), "docs/formats.md is stale: run "
    "scripts/gen-formats-doc"


def test_every_model_of_rundir_is_on_the_page() -> None:
    # rundir/ holds parts (sub-packages): walk them all, not only the room's top.
    for module in pkgutil.walk_packages(rundir.__path__, "rundir."):
        importlib.import_module(module.name)
    defined: set[type[BaseModel]] = set()
    stack: list[type[BaseModel]] = [RunDirModel]
    while stack:
        cls = stack.pop()
        stack.extend(cls.__subclasses__())
        if cls.__module__.startswith("rundir.") and cls.__module__ != "rundir.model":
            defined.add(cls)
    assert defined, "found no run-directory model: the walk above is broken"
    page = formats_doc.render()
    missing = sorted(
        f"{cls.__module__}:{cls.__name__}"
        for cls in defined
        if f"### `{cls.__name__}` (`{cls.__module__}`)" not in page
        and f"{cls.__module__}:{cls.__name__}" not in formats_doc.NOT_FILES
    )
    assert not missing, f"run-directory models not in harness/formats_doc.FORMATS: {missing}"


def test_every_field_of_every_model_has_a_row() -> None:
    page = formats_doc.render()
    tables = page.split("\n### ")[1:]
    assert len(tables) > 20
    for table in tables:
        module, name = table.split("`")[3], table.split("`")[1]
        model = getattr(importlib.import_module(module), name)
        rows = {line.split("`")[1] for line in table.splitlines() if line.startswith("| `")}
        expected = {field.alias or key for key, field in model.model_fields.items()}
        assert rows == expected, (name, expected ^ rows)


def test_comments_docstrings_and_literal_values_reach_the_rows() -> None:
    rows = formats_doc.model_table(Sample)
    by_field = {row.split("`")[1]: row for row in rows[2:]}
    assert by_field["name"].endswith("| required | what the line is called |")
    assert (
        "| `3` | Two lines of comment above a field are joined into its meaning. |"
        in (by_field["size"])
    )
    assert "`Colour`: `'red'`, `'green'`" in by_field["colour"]
    assert '`"red"`' in by_field["colour"]
    assert "a comment inside a field written over several lines" in by_field["tags"]
    assert by_field["tags"].count("`[]`") == 1
    # No comment: the row is still there, its meaning empty, the union's bar escaped.
    assert by_field["bare"] == "| `bare` | `bool \\| None` | `null` |  |"
    assert by_field["described"].endswith("| and a comment Said by pydantic's description. |")
    rendered = "\n".join(formats_doc.render_models((Sample,), set()))
    assert "A sample record: its docstring heads its table, its lines joined.\n" in rendered
    assert "\n- a list item over two lines;\n- another item.\n" in rendered


def test_angle_brackets_outside_code_are_escaped() -> None:
    # `<vendor>` in prose would vanish as an HTML tag; inside a code span it is shown as is.
    assert formats_doc.prose("the model (<vendor>/<model>), `runs/<id>/`") == (
        "the model (&lt;vendor&gt;/&lt;model&gt;), `runs/<id>/`"
    )


def test_check_mode_fails_on_a_stale_page_and_passes_on_a_fresh_one(tmp_path: Path) -> None:
    stale = tmp_path / "formats.md"
    stale.write_text(formats_doc.render().replace("this format's version", "edited by hand"))
    done = subprocess.run(
        [str(REPO / ".venv/bin/python"), "-m", "harness.formats_doc", "--check", str(stale)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1 and "stale: run scripts/gen-formats-doc" in done.stderr
    assert formats_doc.main([str(stale)]) == 0
    assert formats_doc.main(["--check", str(stale)]) == 0
    assert stale.read_text() == formats_doc.render()
