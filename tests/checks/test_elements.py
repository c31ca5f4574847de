"""The elements file of a cross-arm gate pair (harness/checks/elements.py): ITEM TURN TEXT a
line, the text plain or a JSON string; every malformed line refused naming its number."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.checks.elements import ElementsError, Firing, read_elements


def _file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "elements.txt"
    path.write_text(text, encoding="utf-8")
    return path


def test_plain_and_json_texts_comments_and_blank_lines(tmp_path: Path) -> None:
    path = _file(
        tmp_path,
        '# item turn element\n\nrouter 0 "\\n\\nBe kind: \\"now\\"."\n'
        "garden   2   Plain text,  kept\n",
    )
    assert read_elements(path) == [
        Firing("router", 0, '\n\nBe kind: "now".'),
        Firing("garden", 2, "Plain text,  kept"),
    ]


@pytest.mark.parametrize(
    ("line", "why"),
    [
        ("router 0", "give ITEM TURN ELEMENT-TEXT"),
        ("router one text", "is not a turn number"),
        ("router -1 text", "is not a turn number"),
        ('router 0 "unterminated', "not one JSON string"),
        ('router 0 ""', "the element's text is empty"),
    ],
)
def test_a_malformed_line_is_refused_by_number(tmp_path: Path, line: str, why: str) -> None:
    with pytest.raises(ElementsError, match=f"elements.txt:2: .*{why}"):
        read_elements(_file(tmp_path, f"ok 0 fine\n{line}\n"))


def test_a_firing_named_twice_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ElementsError, match=r"elements\.txt:2: item a turn 1 again"):
        read_elements(_file(tmp_path, "a 1 x\na 1 y\n"))


def test_an_unreadable_file_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ElementsError, match="cannot read it"):
        read_elements(tmp_path / "none.txt")
