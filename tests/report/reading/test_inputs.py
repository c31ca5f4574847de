"""The report's optional inputs: read and hashed when given, refused in one line when they do not
parse, and a ledger whose hash chain is broken shown as broken, never totalled."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest

from ledger.ledger import Ledger
from tests.helpers.report_runs import call, turn, write_run
from tests.helpers.studies import harness

pytestmark = pytest.mark.integration

PRICES = """schema = 1
table_version = "test.1"
checked = 2026-12-01
currency = "USD"
[models."gpt-4.1-mini"]
vendor = "openai"
input = 1
output = 2
cache_read = 0.5
max_output_tokens = 1000
context_window = 100000
"""


def two_calls(tmp_path: Path) -> Path:
    run = "r-inputs"
    turns = [turn(run, "a", "x", 0), turn(run, "a", "x", 1)]
    calls = [call(run, 1, "a", "x", 0), call(run, 2, "a", "x", 1)]
    return write_run(tmp_path, run, ["a"], turns, calls)


def section(markdown: str, number: int) -> str:
    return markdown.split(f"\n## {number} ")[1].split("\n## ")[0]


def test_the_caching_counterfactual_reprices_the_tokens(tmp_path: Path) -> None:
    run_dir = two_calls(tmp_path)
    prices = tmp_path / "prices.toml"
    prices.write_text(PRICES)
    header = tmp_path / "header.toml"
    header.write_text("static_prefix_tokens = 50\n")
    out = tmp_path / "out"
    done = harness(
        "report", str(run_dir), "--out", str(out), "--format", "md", "--prices", str(prices),
        "--header", str(header),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    cost = section((out / "report.md").read_text(), 8)
    # Per call (input 100, cache read 30, output 20 of which reasoning 5), in $ per million tokens:
    # as billed 100*1 + 30*0.5 + 20*2 = 155; with no cache 130*1 + 40 = 170. With the 50-token
    # prefix cached: the first call writes it (50*1 + 50*1 + 30*0.5 + 40 = 155), the second
    # reads it (50*1 + 80*0.5 + 40 = 130).
    assert "these tokens cost $0.00031 at --prices" in cost
    assert "with no cache at all they would cost $0.00034" in cost
    assert "static prefix of 50 tokens cached, $0.000285" in cost


def test_a_ledger_whose_chain_is_broken_is_shown_broken(tmp_path: Path) -> None:
    run_dir = two_calls(tmp_path)
    ledger = tmp_path / "ledger.jsonl"
    led = Ledger(ledger)
    led.open_stage("pilot", Decimal(5))
    led.reserve_run("r-inputs", Decimal(2), stage="pilot")
    led.close()
    out = tmp_path / "out"
    done = harness("report", str(run_dir), "--out", str(out), "--ledger", str(ledger))
    assert done.returncode == 0, done.stderr[-3000:]
    assert "| pilot | $5 |" in section((out / "report.md").read_text(), 11)
    # Someone raises the stage's cap by hand: the chain no longer holds, so no total is shown.
    ledger.write_text(ledger.read_text().replace('"cap_usd":"5"', '"cap_usd":"500"', 1))
    done = harness("report", str(run_dir), "--out", str(out), "--ledger", str(ledger))
    assert done.returncode == 0, done.stderr[-3000:]
    spend = section((out / "report.md").read_text(), 11)
    assert "hash chain is BROKEN" in spend and "$500" not in spend and "| pilot |" not in spend


@pytest.mark.parametrize(
    ("option", "content", "message"),
    [
        ("--judgments", '{"item": "x", "arm": "a"}\n', "needs `correct` (true/false) or `score`"),
        ("--provenance", '{"name": "items.jsonl"}\n', "needs `name` and `sha256`"),
        ("--header", "question = \n", "--header"),
        ("--gate", "{", "--gate"),
    ],
)
def test_an_input_that_does_not_parse_is_refused_in_one_line(
    tmp_path: Path, option: str, content: str, message: str
) -> None:
    run_dir = two_calls(tmp_path)
    given = tmp_path / "input"
    given.write_text(content)
    done = harness("report", str(run_dir), "--out", str(tmp_path / "out"), option, str(given))
    assert done.returncode == 2, done.stderr
    assert message in done.stderr and "Traceback" not in done.stderr
    missing = harness("report", str(run_dir), option, str(tmp_path / "nope"))
    assert missing.returncode == 2 and "no such file" in missing.stderr
