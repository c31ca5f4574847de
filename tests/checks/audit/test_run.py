"""`harness audit`: a clean live run (gate, then `harness live` against a fake vendor) passes;
an edited call log cost, an edited body, a ledger line removed or reordered and a swapped price
table are each caught and named. Each tamper test works on its own copy of the run and ledger."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.fakevendor.server import FakeVendor
from tests.helpers.gate_studies import gate_study
from tests.helpers.studies import REPO, harness, read_jsonl
from tests.proxy.live_helpers import STUDY_KEYS

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def live_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A clean live run of the gate toy study, its ledger in the study folder."""
    base = tmp_path_factory.mktemp("audit")
    with FakeVendor() as vendor:
        study = gate_study(base / "study", vendors={"openai": vendor.url})
        runs = base / "runs"
        for command in (["gate", str(study)], ["live", str(study), "--cap", "2"]):
            done = harness(*command, "--run-dir", str(runs), "--isolation", "local", env=STUDY_KEYS)
            assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    (run,) = [p for p in runs.iterdir() if json.loads(_read(p / "run.json")).get("mode") == "live"]
    yield run


def _read(path: Path) -> str:
    return path.read_text() if path.exists() else "{}"


def _copy(run: Path, tmp_path: Path) -> tuple[Path, Path]:
    """The run and its ledger, copied so a test can tamper with them."""
    copy = tmp_path / run.name
    shutil.copytree(run, copy)
    (copy / "audit.json").unlink(missing_ok=True)
    ledger = tmp_path / "ledger.jsonl"
    shutil.copy(run.parents[1] / "study" / "ledger.jsonl", ledger)
    return copy, ledger


def _audit(run: Path, *extra: str) -> tuple[int, str, dict[str, Any]]:
    done = harness("audit", str(run), *extra)
    assert done.returncode in (0, 1), done.stderr[-3000:]
    return done.returncode, done.stdout, json.loads((run / "audit.json").read_text())


def _checks(audit: dict[str, Any]) -> set[str]:
    return {d["check"] for d in audit["discrepancies"]}


def test_a_clean_live_run_passes(live_run: Path) -> None:
    code, out, audit = _audit(live_run)
    assert code == 0, out
    assert "PASSED" in out and audit["schema"] == 1 and audit["passed"]
    calls = read_jsonl(live_run / "calls.jsonl")
    assert len(calls) == 3 and all(c["mode"] == "live" and c["outcome"] == "ok" for c in calls)
    assert audit["counts"]["calls_repriced"] == 3 and audit["counts"]["settlements"] == 3
    total = sum(float(c["cost_usd"]) for c in calls)
    assert total > 0 and float(audit["totals"]["ledger_usd"]) == pytest.approx(total)
    assert audit["totals"]["repriced_usd"] == audit["totals"]["call_log_usd"]
    assert audit["ledger_entries"] and audit["prices_sha256"] == audit["run_prices_sha256"]


def test_an_edited_cost_in_the_call_log_is_caught(live_run: Path, tmp_path: Path) -> None:
    run, ledger = _copy(live_run, tmp_path)
    lines = (run / "calls.jsonl").read_text().splitlines()
    call = json.loads(lines[1])
    call["cost_usd"] = str(float(call["cost_usd"]) / 2)
    lines[1] = json.dumps(call)
    (run / "calls.jsonl").write_text("\n".join(lines) + "\n")
    code, out, audit = _audit(run, "--ledger", str(ledger))
    assert code == 1 and "FAILED" in out
    assert {"cost", "ledger_sum", "file"} <= _checks(audit)
    cost = next(d for d in audit["discrepancies"] if d["check"] == "cost")
    assert cost["where"].startswith("calls.jsonl:2 ")


def test_an_edited_body_is_caught(live_run: Path, tmp_path: Path) -> None:
    run, ledger = _copy(live_run, tmp_path)
    pack = run / "bodies" / "pack.bin"
    data = bytearray(pack.read_bytes())
    data[-3] ^= 0x01  # inside the last compressed frame: its header still reads
    pack.write_bytes(bytes(data))
    code, _, audit = _audit(run, "--ledger", str(ledger))
    assert code == 1
    body = [d for d in audit["discrepancies"] if d["check"] == "body"]
    assert len(body) == 1 and "altered" in body[0]["detail"]
    assert "file" in _checks(audit)  # the manifest's hash of the pack no longer matches


@pytest.mark.parametrize("change", ["remove_middle", "remove_last", "swap"])
def test_a_ledger_line_removed_or_reordered_is_caught(
    live_run: Path, tmp_path: Path, change: str
) -> None:
    run, ledger = _copy(live_run, tmp_path)
    lines = ledger.read_bytes().splitlines(keepends=True)
    assert len(lines) >= 4
    if change == "remove_middle":
        del lines[2]
    elif change == "remove_last":
        del lines[-1]  # a shorter chain still verifies: the run's recorded head catches it
    else:
        lines[1], lines[2] = lines[2], lines[1]
    ledger.write_bytes(b"".join(lines))
    code, out, audit = _audit(run, "--ledger", str(ledger))
    assert code == 1, out
    assert "ledger_chain" in _checks(audit)


def test_a_swapped_price_table_is_caught(live_run: Path, tmp_path: Path) -> None:
    run, ledger = _copy(live_run, tmp_path)
    table = (REPO / "ledger" / "prices.toml").read_text()
    other = tmp_path / "prices.toml"
    # The same table with every rate of the model the run used doubled.
    start = table.index('[models."gpt-4.1-mini"]')
    end = table.index("\n[", start + 1)
    block = table[start:end]
    doubled = "\n".join(_double(line) for line in block.splitlines())
    other.write_text(table[:start] + doubled + table[end:])
    code, out, audit = _audit(run, "--ledger", str(ledger), "--prices", str(other))
    assert code == 1
    assert {"prices", "cost"} <= _checks(audit)
    assert "pass --prices with the table the run used" in out


def _double(line: str) -> str:
    key, sep, value = line.partition(" = ")
    if sep and key.strip() in ("input", "output"):
        return f"{key}{sep}{float(value) * 2}"
    return line


def test_the_live_run_replays_with_no_key_and_no_vendor(live_run: Path, tmp_path: Path) -> None:
    """Issue 5: a live run against the fake vendor, replayed with no key (the fake vendor is
    already stopped, so nothing could answer upstream), reproduces every request and turn text."""
    env = {"ANTHROPIC_API_KEY": "", "OPENAI_API_KEY": ""}
    done = harness("replay", str(live_run), "--run-dir", str(tmp_path), env=env)
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    (replayed,) = [p for p in tmp_path.iterdir() if (p / "replay.json").exists()]
    comparison = json.loads((replayed / "replay.json").read_text())
    assert comparison["clean"] is True
    source_calls = read_jsonl(live_run / "calls.jsonl")
    replay_calls = read_jsonl(replayed / "calls.jsonl")
    assert sorted(c["request_hash"] for c in replay_calls) == sorted(
        c["request_hash"] for c in source_calls
    )
    assert all(c["mode"] == "replay" and c["outcome"] == "ok" for c in replay_calls)


def test_a_body_the_proxy_could_not_store_is_named(live_run: Path, tmp_path: Path) -> None:
    # As a proxy on a full disk logs a call (proxy.calllog.sink): the record whole and flagged,
    # the body not in the pack.
    run, ledger = _copy(live_run, tmp_path)
    lines = (run / "calls.jsonl").read_text().splitlines()
    call = json.loads(lines[0])
    call["response_hash"] = None
    call["flags"] = [*call["flags"], "response_body_unstored"]
    lines[0] = json.dumps(call)
    (run / "calls.jsonl").write_text("\n".join(lines) + "\n")
    code, _, audit = _audit(run, "--ledger", str(ledger))
    assert code == 1
    (body,) = [d for d in audit["discrepancies"] if d["check"] == "body"]
    assert body["where"].startswith("calls.jsonl:1 ") and body["where"].endswith("response_hash")
    assert "could not store" in body["detail"]
