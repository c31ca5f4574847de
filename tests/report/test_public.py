"""`harness report --public`: a copy with items by ordinal and files by kind and base name, and
`--check-public DIR`, which fails a copy naming an item id, a run id, an arm's internals, a path,
a host name or a word of the study's deny list."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from tests.helpers.studies import harness, only_run

pytestmark = pytest.mark.integration

QUICKSTART = Path(__file__).resolve().parents[2] / "examples" / "quickstart" / "study.toml"
ITEM_IDS = ("lisbon", "garden", "trip")


@pytest.fixture(scope="module")
def quickstart_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    runs = tmp_path_factory.mktemp("runs")
    done = harness("record", str(QUICKSTART), "--run-dir", str(runs), "--isolation", "local")
    assert done.returncode == 0, done.stderr[-3000:]
    return only_run(runs)


def check(run_dir: Path, folder: Path, *extra: str) -> tuple[int, str]:
    done = harness("report", str(run_dir), "--check-public", str(folder), *extra)
    return done.returncode, done.stdout + done.stderr


def test_a_public_copy_names_no_item_run_or_path(quickstart_run: Path, tmp_path: Path) -> None:
    out = tmp_path / "public"
    done = harness(
        "report", str(quickstart_run), "--public", "--out", str(out), "--resamples", "200"
    )
    assert done.returncode == 0, done.stderr[-3000:]
    everything = "\n".join(p.read_text() for p in out.iterdir())
    for item in ITEM_IDS:
        # As a name, not inside another word: the report's own prose says "round-trip".
        assert not re.search(rf"(?<![\w.-]){item}(?![\w-])", everything.lower()), item
    assert quickstart_run.name not in everything
    assert str(quickstart_run.parent) not in everything and str(Path.home()) + "/" not in everything
    assert '"item": "item 1"' in (out / "records.jsonl").read_text()
    assert "calls.jsonl: calls.jsonl (SHA-256" in (out / "report.md").read_text()
    assert check(quickstart_run, out) == (0, f"{out}: 0 private name(s) found\n")

    # The private copy of the same run does name them: the scan is not blind.
    private = tmp_path / "private"
    assert harness("report", str(quickstart_run), "--out", str(private)).returncode == 0
    code, text = check(quickstart_run, private)
    assert code == 1 and "'lisbon'" in text and quickstart_run.name in text


@pytest.mark.parametrize(
    ("planted", "named"),
    [
        ("The garden item was hardest.", "'garden'"),
        ("see python -m arms.retrieval", "'python -m arms.retrieval'"),
        (
            "copied from /home/alice/studies/items.jsonl",
            "the path '/home/alice/studies/items.jsonl'",
        ),
        ("Nightingale-7 wins", "'Nightingale-7'"),
    ],
)
def test_check_public_catches_a_planted_name(
    quickstart_run: Path, tmp_path: Path, planted: str, named: str
) -> None:
    header = tmp_path / "header.toml"
    header.write_text('deny = ["Nightingale-7"]\n')
    out = tmp_path / "public"
    done = harness(
        "report", str(quickstart_run), "--public", "--out", str(out), "--header", str(header)
    )
    assert done.returncode == 0, done.stderr[-3000:]
    leaked = tmp_path / "leaked"
    shutil.copytree(out, leaked)
    with open(leaked / "report.md", "a") as f:
        f.write(planted + "\n")
    code, text = check(quickstart_run, leaked, "--header", str(header))
    assert code == 1, text
    assert "report.md:" in text and named in text


def test_a_public_report_that_would_leak_is_not_written(
    quickstart_run: Path, tmp_path: Path
) -> None:
    header = tmp_path / "header.toml"
    # The study's own question names a denied word: the copy would publish it, so none is made.
    header.write_text('question = "Does Nightingale-7 remember?"\ndeny = ["Nightingale-7"]\n')
    out = tmp_path / "public"
    done = harness(
        "report", str(quickstart_run), "--public", "--out", str(out), "--header", str(header)
    )
    assert done.returncode == 2
    assert "names private data" in done.stderr and "Nightingale-7" in done.stderr
    assert "Traceback" not in done.stderr
    assert list(out.iterdir()) == []
