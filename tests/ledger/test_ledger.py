"""The spend ledger: a valid chain under 4 writer processes, torn lines set aside, tampering
caught by verify, caps held with the 1.5x and full-reservation rules, settlements never lost."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import threading
from decimal import Decimal
from pathlib import Path

import pytest
import rfc8785

from ledger.entries import CallSettlement
from ledger.errors import CapExceeded, LedgerCorrupt, LedgerError
from ledger.ledger import Ledger, verify
from ledger.settlements import SettlementWriter, SettlementWriterError

D = Decimal
ROOT = Path(__file__).resolve().parents[2]


def settlement(run: str, seq: int, usd: str, *flags: str) -> CallSettlement:
    return CallSettlement(run_id=run, seq=seq, cost_usd=D(usd), flags=flags)


def small_ledger(path: Path) -> Ledger:
    led = Ledger(path)
    led.open_stage("pilot", D(10))
    led.reserve_run("r1", D(2), "pilot")
    led.settle_calls([settlement("r1", 1, "0.25"), settlement("r1", 2, "0.5", "cut")])
    led.settle_run("r1")
    led.reserve_run("r2", D(1), "pilot")
    return led


def lines(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines(keepends=True)


def test_entries_are_chained_and_verify(tmp_path: Path) -> None:
    path = tmp_path / "ledger.jsonl"
    small_ledger(path).close()
    report = verify(path)
    assert report.ok and report.entries == 5 and report.torn_tail is None
    first, second = (json.loads(x) for x in lines(path)[:2])
    assert first["prev"] == "0" * 64 and second["prev"] == first["hash"]
    assert first["schema"] == 1 and first["seq"] == 1 and first["kind"] == "stage_opened"
    # Money as decimal strings, never floats.
    assert first["fields"]["cap_usd"] == "10"
    state = Ledger(path).state()
    assert state.runs["r1"].calls_usd == D("0.75") and state.runs["r1"].flagged_calls == 1


def test_every_line_is_rfc8785_canonical_and_rehashes_with_any_rfc8785_tool(
    tmp_path: Path,
) -> None:
    # An auditor re-hashes the chain with their own RFC 8785 canonicaliser: flags with quotes,
    # control characters and non-ASCII text included, the bytes on disk must be its bytes.
    path = tmp_path / "ledger.jsonl"
    led = small_ledger(path)
    led.settle_calls([settlement("r2", 1, "0.1", 'cut "early"\n\x01', "premium_tier:été")])
    led.close()
    for line in lines(path):
        body = json.loads(line)
        assert line == rfc8785.dumps(body) + b"\n"
        unhashed = {k: v for k, v in body.items() if k != "hash"}
        assert body["hash"] == hashlib.sha256(rfc8785.dumps(unhashed)).hexdigest()


def test_verify_catches_an_edited_line(tmp_path: Path) -> None:
    path = tmp_path / "ledger.jsonl"
    small_ledger(path).close()
    ls = lines(path)
    ls[2] = ls[2].replace(b'"0.5"', b'"0.05"')
    path.write_bytes(b"".join(ls))
    report = verify(path)
    assert not report.ok
    assert report.problems[0][0] == 3 and "edited" in report.problems[0][1]
    with pytest.raises(LedgerCorrupt, match=":3:"):
        Ledger(path)


def test_verify_catches_a_removed_line(tmp_path: Path) -> None:
    path = tmp_path / "ledger.jsonl"
    small_ledger(path).close()
    ls = lines(path)
    del ls[1]
    path.write_bytes(b"".join(ls))
    report = verify(path)
    assert not report.ok and report.problems[0][0] == 2
    assert "removed" in report.problems[0][1]


def test_verify_catches_swapped_lines(tmp_path: Path) -> None:
    path = tmp_path / "ledger.jsonl"
    small_ledger(path).close()
    ls = lines(path)
    ls[2], ls[3] = ls[3], ls[2]
    path.write_bytes(b"".join(ls))
    report = verify(path)
    assert not report.ok and report.problems[0][0] == 3


def test_a_torn_last_line_is_set_aside_and_reported(tmp_path: Path) -> None:
    path = tmp_path / "ledger.jsonl"
    small_ledger(path).close()
    good = path.read_bytes()
    torn = b'{"fields":{"calls":[{"cost_usd":"0.1'
    path.write_bytes(good + torn)
    assert verify(path).ok and verify(path).torn_tail is not None
    led = Ledger(path)
    assert len(led.warnings) == 1 and "torn" in led.warnings[0]
    assert Path(f"{path}.torn-1").read_bytes() == torn
    assert path.read_bytes() == good
    led.settle_calls([settlement("r2", 1, "0.1")])  # the chain goes on from the good line
    led.close()
    assert verify(path).ok and verify(path).entries == 6


def test_an_unparseable_last_line_with_its_newline_is_also_set_aside(tmp_path: Path) -> None:
    path = tmp_path / "ledger.jsonl"
    small_ledger(path).close()
    good = path.read_bytes()
    path.write_bytes(good + b'{"seq": 6, "hash\n')
    Path(f"{path}.torn-1").write_bytes(b"an earlier one")
    led = Ledger(path)
    assert led.warnings and Path(f"{path}.torn-2").read_bytes() == b'{"seq": 6, "hash\n'
    assert path.read_bytes() == good


def test_a_bad_line_that_is_not_last_is_corruption_not_a_torn_line(tmp_path: Path) -> None:
    path = tmp_path / "ledger.jsonl"
    small_ledger(path).close()
    ls = lines(path)
    ls[1] = ls[1][:20] + b"\n"
    path.write_bytes(b"".join(ls))
    with pytest.raises(LedgerCorrupt, match=":2:"):
        Ledger(path)
    assert not Path(f"{path}.torn-1").exists()


def test_unreconciled_spend_counts_at_one_and_a_half(tmp_path: Path) -> None:
    led = Ledger(tmp_path / "ledger.jsonl")
    led.open_stage("pilot", D(10))
    led.reserve_run("r1", D(4), "pilot")
    led.settle_calls([settlement("r1", 1, "2.00")])
    led.settle_run("r1")
    assert led.state().stage_spend("pilot") == D("3.00")
    # 2.00 x 1.5 + 7.01 > 10, though 2.00 + 7.01 would fit.
    with pytest.raises(CapExceeded) as err:
        led.reserve_run("r2", D("7.01"), "pilot")
    for part in ("$10", "$3.00", "$0", "$7.01", "reconcile"):
        assert part in str(err.value)
    assert led.state().stages["pilot"].refused == 1
    assert json.loads(lines(led.path)[-1])["kind"] == "run_refused"
    # The vendor's figure replaces the factor.
    led.reconcile(["r1"], D("2.00"), "usage.csv", "a" * 64)
    assert led.state().stage_spend("pilot") == D("2.00")
    led.reserve_run("r2", D("7.01"), "pilot")


def test_an_unsettled_run_counts_at_its_full_reservation(tmp_path: Path) -> None:
    led = Ledger(tmp_path / "ledger.jsonl")
    led.open_stage("pilot", D(10))
    led.reserve_run("crashed", D(4), "pilot")
    led.settle_calls([settlement("crashed", 1, "0.10")])
    assert led.state().stage_reserved("pilot") == D(4)
    with pytest.raises(CapExceeded):
        led.reserve_run("next", D("6.01"), "pilot")
    led.reserve_run("next", D(6), "pilot")


def test_a_reconciled_run_never_counts_below_its_computed_spend(tmp_path: Path) -> None:
    led = Ledger(tmp_path / "ledger.jsonl")
    led.open_stage("s", D(10))
    for run, usd in (("a", "1"), ("b", "3")):
        led.reserve_run(run, D(5), "s")
        led.settle_calls([settlement(run, 1, usd)])
        led.settle_run(run)
    led.reconcile(["a", "b"], D("8"), "x.csv", "b" * 64)  # shared by computed share
    state = led.state()
    assert (state.runs["a"].vendor_usd, state.runs["b"].vendor_usd) == (D(2), D(6))
    led.reconcile(["a"], D("0.5"), "y.csv", "c" * 64)  # an export that missed calls
    assert led.state().runs["a"].charge_usd == D(1)


def test_misuse_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    led = Ledger(tmp_path / "ledger.jsonl")
    with pytest.raises(LedgerError, match="never opened"):
        led.reserve_run("r", D(1), "nope")
    led.open_stage("s", D(5))
    assert led.open_stage("s", D(5)) is None
    with pytest.raises(LedgerError, match="replace"):
        led.open_stage("s", D(6))
    led.reserve_run("r", D(1), "s")
    with pytest.raises(LedgerError, match="already reserved"):
        led.reserve_run("r", D(1), "s")
    with pytest.raises(LedgerError, match="never reserved"):
        led.settle_calls([settlement("ghost", 1, "1")])
    with pytest.raises(LedgerError, match="in flight"):
        led.settle_run("r", in_flight=2)
    led.settle_calls([settlement("r", 1, "0.5")])
    with pytest.raises(LedgerError, match="undo"):
        led.settle_run("r", total_usd=D("0.1"))
    with pytest.raises(LedgerError, match="still open"):
        led.reconcile(["r"], D(1), "x.csv", "d" * 64)
    assert led.state().entries == 3 and verify(led.path).ok


WRITER = """
import sys
from decimal import Decimal
from pathlib import Path
from ledger.entries import CallSettlement
from ledger.ledger import Ledger

path, name, rounds = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
led = Ledger(path)
for i in range(rounds):
    run = f"{name}-{i}"
    led.reserve_run(run, Decimal("0.01"), "pilot")
    calls = [CallSettlement(run_id=run, seq=k, cost_usd=Decimal("0.001")) for k in range(3)]
    led.settle_calls(calls)
    led.settle_run(run)
led.close()
"""


def test_four_processes_appending_at_once_keep_one_valid_chain(tmp_path: Path) -> None:
    path = tmp_path / "ledger.jsonl"
    Ledger(path).open_stage("pilot", D(1000))
    rounds = 40
    procs = [
        subprocess.Popen([sys.executable, "-c", WRITER, str(path), f"p{n}", str(rounds)], cwd=ROOT)
        for n in range(4)
    ]
    assert [p.wait(timeout=120) for p in procs] == [0, 0, 0, 0]
    report = verify(path)
    assert report.ok, report.problems
    assert report.entries == 1 + 4 * rounds * 3
    state = Ledger(path).state()
    assert len(state.runs) == 4 * rounds
    assert all(r.settled and r.calls == 3 for r in state.runs.values())
    assert sum((r.calls_usd for r in state.runs.values()), D(0)) == D("0.48")


def test_two_handles_in_one_process_see_each_others_entries(tmp_path: Path) -> None:
    path = tmp_path / "ledger.jsonl"
    a, b = Ledger(path), Ledger(path)
    a.open_stage("s", D(1))
    b.reserve_run("r", D("0.6"), "s")
    with pytest.raises(CapExceeded):
        a.reserve_run("q", D("0.6"), "s")
    assert verify(path).ok and verify(path).entries == 3


def test_settlement_writer_batches_and_loses_nothing(tmp_path: Path) -> None:
    led = Ledger(tmp_path / "ledger.jsonl")
    led.open_stage("s", D(100))
    led.reserve_run("r", D(50), "s")
    writer = SettlementWriter(led, max_items=64, max_delay_ms=5)

    def submit(t: int) -> None:
        for i in range(250):
            writer.submit(settlement("r", t * 1000 + i, "0.001"))

    threads = [threading.Thread(target=submit, args=(t,)) for t in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    writer.flush()
    assert writer.durable == 1000
    writer.submit(settlement("r", 99999, "0.5"))
    writer.close()  # close flushes what flush() did not see
    state = led.state()
    assert state.runs["r"].calls == 1001 and state.runs["r"].calls_usd == D("1.5")
    assert state.entries < 2 + 1001  # batched, not one entry per call
    seqs = [
        c["seq"]
        for ln in lines(led.path)
        if json.loads(ln)["kind"] == "calls_settled"
        for c in json.loads(ln)["fields"]["calls"]
    ]
    assert sorted(seqs) == sorted([t * 1000 + i for t in range(4) for i in range(250)] + [99999])


def test_settlement_writer_keeps_what_it_could_not_write(tmp_path: Path) -> None:
    led = Ledger(tmp_path / "ledger.jsonl")
    led.open_stage("s", D(100))
    led.reserve_run("r", D(50), "s")
    writer = SettlementWriter(led, max_items=10, max_delay_ms=5)
    writer.submit(settlement("r", 1, "0.1"))
    writer.submit(settlement("ghost", 2, "0.2"))  # makes the batch fail
    with pytest.raises(SettlementWriterError) as err:
        writer.flush(timeout=10)
    assert [s.seq for s in err.value.pending] == [1, 2]
    with pytest.raises(SettlementWriterError) as err:
        writer.close()
    assert [s.seq for s in err.value.pending] == [1, 2]
    assert led.state().runs["r"].calls == 0


def test_a_run_reserved_again_is_adopted_only_as_it_was_made(tmp_path: Path) -> None:
    led = Ledger(tmp_path / "ledger.jsonl")
    led.open_stage("s", D(1))
    led.reserve_run("r", D(1), "s")
    assert led.reserve_run("r", D(1), "s", adopt=True) is None  # the stage is full: of r itself
    assert led.state().stage_reserved("s") == D(1) and led.state().entries == 2
    with pytest.raises(LedgerError, match="adopts its run's reservation only as it was made"):
        led.reserve_run("r", D("0.5"), "s", adopt=True)
    with pytest.raises(CapExceeded):
        led.reserve_run("r2", D("0.01"), "s", adopt=True)  # another run is no adoption
    led.settle_run("r")
    with pytest.raises(LedgerError, match="already settled"):
        led.reserve_run("r", D(1), "s", adopt=True)
