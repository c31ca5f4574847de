"""`harness ledger ...` and `harness prices ...` through the real command line."""

from __future__ import annotations

import json
import subprocess
from decimal import Decimal
from pathlib import Path

import pytest

from ledger.entries import CallSettlement
from ledger.ledger import Ledger
from tests.helpers.studies import harness as run_harness

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]


def harness(
    *args: str, cwd: Path | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Each call is a fresh process (a few seconds: the CLI imports mitmproxy), so tests are few.
    The developer's own HARNESS_LEDGER is unset: these tests check where the ledger is found."""
    base: dict[str, str | None] = {"HARNESS_LEDGER": None, "PYTHONPATH": str(ROOT)}
    return run_harness(*args, cwd=cwd or ROOT, env={**base, **(env or {})})


def make_ledger(path: Path, stage_by_cli: bool = False) -> None:
    if stage_by_cli:
        opened = harness("ledger", "open-stage", "pilot", "--cap", "10", "--ledger", str(path))
        assert opened.returncode == 0, opened.stderr
    led = Ledger(path)
    if not stage_by_cli:
        led.open_stage("pilot", Decimal(10))
    led.reserve_run("done", Decimal(2), "pilot")
    led.settle_calls([CallSettlement(run_id="done", seq=1, cost_usd=Decimal("0.40"))])
    led.settle_run("done")
    led.reserve_run("crashed", Decimal(3), "pilot")
    led.settle_calls([CallSettlement(run_id="crashed", seq=1, cost_usd=Decimal("0.25"))])
    led.close()


def test_show_lists_stages_and_runs(tmp_path: Path) -> None:
    path = tmp_path / "ledger.jsonl"
    make_ledger(path, stage_by_cli=True)
    out = harness("ledger", "show", "--ledger", str(path))
    assert out.returncode == 0, out.stderr
    assert "pilot" in out.stdout and "$10.000000" in out.stdout
    assert "$0.600000" in out.stdout  # 0.40 settled, counted at 1.5x
    assert "$3.000000" in out.stdout  # the open run at its full reservation
    assert "crashed" in out.stdout and "open" in out.stdout and "settled" in out.stdout


def test_the_default_ledger_is_in_the_cwd_or_harness_ledger(tmp_path: Path) -> None:
    make_ledger(tmp_path / "ledger.jsonl")
    assert "crashed" in harness("ledger", "show", cwd=tmp_path).stdout
    other = tmp_path / "elsewhere.jsonl"
    make_ledger(other)
    out = harness("ledger", "verify", cwd=ROOT, env={"HARNESS_LEDGER": str(other)})
    assert out.returncode == 0 and "elsewhere.jsonl: ok" in out.stdout


def test_verify_exits_1_naming_the_broken_line(tmp_path: Path) -> None:
    path = tmp_path / "ledger.jsonl"
    make_ledger(path)
    ok = harness("ledger", "verify", "--ledger", str(path))
    assert ok.returncode == 0 and "ok, 6 entries" in ok.stdout
    lines = path.read_bytes().splitlines(keepends=True)
    lines[3] = lines[3].replace(b'"0.40"', b'"0.04"')
    path.write_bytes(b"".join(lines))
    bad = harness("ledger", "verify", "--ledger", str(path))
    assert bad.returncode == 1
    assert f"{path}:4:" in bad.stderr and "BROKEN" in bad.stderr
    assert "Traceback" not in bad.stderr
    show = harness("ledger", "show", "--ledger", str(path))
    assert show.returncode == 2 and ":4:" in show.stderr and "Traceback" not in show.stderr


def test_settle_at_full_reservation_says_so(tmp_path: Path) -> None:
    path = tmp_path / "ledger.jsonl"
    make_ledger(path)
    out = harness("ledger", "settle", "crashed", "--ledger", str(path))
    assert out.returncode == 0, out.stderr
    assert "full reservation $3" in out.stdout
    run = Ledger(path).state().runs["crashed"]
    assert run.settled and run.basis == "full_reservation" and run.total_usd == 3
    again = harness("ledger", "settle", "crashed", "--ledger", str(path))
    assert again.returncode == 2 and "already settled" in again.stderr


def test_settle_from_the_run_dirs_call_log(tmp_path: Path) -> None:
    path = tmp_path / "ledger.jsonl"
    make_ledger(path)
    run_dir = tmp_path / "runs" / "crashed"
    run_dir.mkdir(parents=True)
    records = [{"run_id": "crashed", "seq": i, "cost_usd": 0.1} for i in range(1, 8)]
    text = "".join(json.dumps(r) + "\n" for r in records) + '{"run_id": "crashed", "co'
    (run_dir / "calls.jsonl").write_text(text)
    out = harness("ledger", "settle", "crashed", "--run-dir", str(run_dir), "--ledger", str(path))
    assert out.returncode == 0, out.stderr
    assert "from its call log at $0.7" in out.stdout and "7 calls" in out.stdout
    run = Ledger(path).state().runs["crashed"]
    assert run.basis == "call_log" and run.total_usd == Decimal("0.7")


def test_reconcile_records_the_vendor_figure_and_prints_the_difference(tmp_path: Path) -> None:
    path = tmp_path / "ledger.jsonl"
    make_ledger(path)
    export = tmp_path / "usage.csv"
    export.write_text(
        "# exported from the vendor console\n"
        "date,model,input_tokens,output_tokens,cost_usd,run_id\n"
        "2026-11-30,claude-haiku-4-5,,,0.30,done\n"
        "2026-11-30,claude-haiku-4-5-20251001,100000,4000,,done\n"
    )
    out = harness("ledger", "reconcile", str(export), "--ledger", str(path))
    assert out.returncode == 0, out.stderr
    # 0.30 + (100000*1 + 4000*5)/1e6 = 0.42 against 0.40 computed
    assert "vendor $0.42" in out.stdout and "computed $0.40" in out.stdout
    assert "difference $+0.02" in out.stdout and "+5.0%" in out.stdout
    run = Ledger(path).state().runs["done"]
    assert run.state == "reconciled" and run.charge_usd == Decimal("0.42")
    entry = json.loads(path.read_bytes().splitlines()[-1])
    assert entry["kind"] == "reconciled" and len(entry["fields"]["source_sha256"]) == 64


def test_reconcile_refuses_rows_it_cannot_attribute_or_price(tmp_path: Path) -> None:
    path = tmp_path / "ledger.jsonl"
    make_ledger(path)
    export = tmp_path / "usage.csv"
    export.write_text("date,model,cost_usd\n2026-11-30,gpt-5,1.00\n")
    out = harness("ledger", "reconcile", str(export), "--ledger", str(path))
    assert out.returncode == 2 and "--run" in out.stderr and "usage.csv:2" in out.stderr
    export.write_text("date,model,input_tokens,output_tokens\n2026-11-30,gpt-9,1,1\n")
    out = harness("ledger", "reconcile", str(export), "--run", "done", "--ledger", str(path))
    assert out.returncode == 2 and "gpt-9" in out.stderr and "Traceback" not in out.stderr


def test_prices_show(tmp_path: Path) -> None:
    table = harness("prices", "show")
    assert table.returncode == 0
    assert "claude-opus-4-8" in table.stdout and "sha256" in table.stdout
    one = harness("prices", "show", "claude-sonnet-4-5-20250929")
    assert one.returncode == 0 and "> 200000: 6.00 22.50" in one.stdout
    unknown = harness("prices", "show", "gpt-9")
    assert unknown.returncode == 2 and "gpt-9" in unknown.stderr
    assert "Traceback" not in unknown.stderr
    bad = tmp_path / "bad.toml"
    bad.write_text('schema = 1\ntable_version = "x"\ncurrency = "USD"\nmodels = {}\n')
    out = harness("prices", "show", "--prices", str(bad))
    assert out.returncode == 2 and str(bad) in out.stderr and "checked" in out.stderr


@pytest.mark.parametrize(("cap", "says"), [("abc", "is not an amount"), ("$10", "no $ or USD")])
def test_open_stage_with_a_cap_that_is_not_dollars_leaves_no_ledger(
    tmp_path: Path, cap: str, says: str
) -> None:
    done = harness("ledger", "open-stage", "pilot", "--cap", cap, "--ledger",
                   str(tmp_path / "ledger.jsonl"))  # fmt: skip
    assert done.returncode == 2 and "Traceback" not in done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("harness: error:")]
    assert len(errors) == 1 and f"--cap {cap!r}" in errors[0] and says in errors[0], done.stderr
    assert list(tmp_path.iterdir()) == []
