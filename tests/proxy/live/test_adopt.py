"""A proxy started again for its run (the first failed to bind, or died before settling) adopts
the run's open reservation (proxy/live/setup.py, Ledger.reserve_run(adopt=True)) instead of
counting it a second time: a stage reserved to the cent by this very run still lets the run's
second proxy start, and what the first proxy booked is no longer the run's to spend."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path
from types import SimpleNamespace

import pytest

from ledger.entries import CallSettlement
from ledger.ledger import Ledger
from proxy.live.forwarder import MeteredForwarder
from proxy.live.setup import LiveSetup, LiveSetupError, start_live
from proxy.redact import uninstall_log_redaction
from tests.proxy.live_helpers import STUDY_OPENAI_KEY
from vendors.pins import Pins

UPSTREAMS = {"openai": "https://127.0.0.1:9"}  # never called: nothing is forwarded here


def _opts(tmp_path: Path, cap: str) -> SimpleNamespace:
    run_dir = tmp_path / "run-1"
    run_dir.mkdir(exist_ok=True)
    return SimpleNamespace(
        harness_cap=cap,
        harness_ledger=str(tmp_path / "ledger.jsonl"),
        harness_ledger_url="",
        harness_prices="",
        harness_run_id="run-1",
        harness_stage="pilot",
        harness_stage_cap="0.47",  # the stage holds exactly this run's reservation
        harness_run_dir=str(run_dir),
        harness_deadline=30.0,
    )


def _start(tmp_path: Path, cap: str = "0.47") -> tuple[LiveSetup, MeteredForwarder]:
    return start_live(_opts(tmp_path, cap), UPSTREAMS, {"openai": STUDY_OPENAI_KEY}, Pins())


def _die(setup: LiveSetup, live: MeteredForwarder) -> None:
    """The first proxy goes without settling (it never bound its port, or was killed). Its
    process-global log redaction goes with it, as it would with a killed process: left installed,
    it would outlive this test on the worker."""
    setup.journal.close()
    setup.ledger.close()
    uninstall_log_redaction(live.redactor)


def _kinds(tmp_path: Path) -> list[str]:
    lines = (tmp_path / "ledger.jsonl").read_text().splitlines()
    return [json.loads(line)["kind"] for line in lines]


def test_a_restarted_proxy_adopts_its_runs_reservation(tmp_path: Path) -> None:
    first, dead = _start(tmp_path)
    _die(first, dead)
    second, live = _start(tmp_path)  # was: "open reservations $0.47, this run's $0.47"
    assert _kinds(tmp_path) == ["stage_opened", "run_reserved"]  # reserved once
    assert live.config.budget.cap == Decimal("0.47")
    second.close(live)
    state = Ledger(tmp_path / "ledger.jsonl").state()
    assert state.runs["run-1"].settled and state.stage_reserved("pilot") == 0


def test_what_the_first_proxy_booked_is_gone_from_the_adopted_budget(tmp_path: Path) -> None:
    first, dead = _start(tmp_path)
    settlement = CallSettlement(run_id="run-1", seq=1, cost_usd=Decimal("0.17"), flags=())
    first.ledger.settle_calls([settlement])
    _die(first, dead)
    second, live = _start(tmp_path)
    assert live.config.budget.cap == Decimal("0.30")
    second.close(live)


def test_another_cap_or_a_settled_run_is_not_adopted(tmp_path: Path) -> None:
    first, live = _start(tmp_path)
    _die(first, live)
    with pytest.raises(LiveSetupError, match=r"reserved with \$0.47 in stage 'pilot', not \$0.4"):
        _start(tmp_path, cap="0.4")
    second, live = _start(tmp_path)
    second.close(live)
    with pytest.raises(LiveSetupError, match="already settled"):
        _start(tmp_path)
