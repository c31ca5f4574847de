"""Billing of live judges (issue 27 item 4): an HTTP judge's calls carry purpose `judge`; a live
proxy charging the arms' stage refuses them (nothing sent, nothing spent), one charging the
ledger stage `judge` forwards them, and every vote logs the judge's pins, tokens and cost at the
price table, the same dollars the ledger booked to `judge`, none to the arms' stage."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest
import tomli_w

from harness.judge.judges import load_judges
from harness.judge.send import ask_task
from ledger.ledger import Ledger
from rundir.judgments.files import REPLIES_DIR, VoteLog, read_votes
from rundir.judgments.records import JudgmentTask
from stubs.rules.context import StubContext
from stubs.rules.replies import ReplyBook
from tests.fakevendor.server import FakeVendor
from tests.proxy.live_helpers import start_live_proxy

pytestmark = pytest.mark.integration

MODEL = "gpt-5-mini"  # priced in the packaged price table


def _vendor(tmp_path: Path) -> FakeVendor:
    stubs = tmp_path / "stubs.toml"
    rule = {
        "name": "judge",
        "user_contains": "<reply>",
        "reply": "judge: engine=openai model=$model effort=medium\nverdict: FLAG",
    }
    stubs.write_text(tomli_w.dumps({"schema": 1, "rules": [rule]}))
    return FakeVendor(stub_context=StubContext(book=ReplyBook.load(stubs)))


def _task(task_id: str) -> JudgmentTask:
    return JudgmentTask(
        id=task_id,
        judgment="j",
        rubric="r",
        kind="flag",
        judge="g",
        role="confirmatory",
        phase="confirmatory",
        labels=["AAAA"],
        prompt_sha256="0" * 64,
    )  # type: ignore[arg-type]


def _ask(set_dir: Path, base_url: str, task_id: str) -> None:
    (set_dir / "prompts").mkdir(parents=True, exist_ok=True)
    (set_dir / REPLIES_DIR).mkdir(exist_ok=True)
    (set_dir / "prompts" / f"{task_id}.txt").write_text("User: hi\n<reply>\nNoted: hi.\n</reply>\n")
    entry = {
        "engine": "openai",
        "model": MODEL,
        "effort": "medium",
        "url": base_url,
        "key_env": "JUDGE_TEST_KEY",
    }
    judges_file = set_dir.parent / f"judges-{task_id}.toml"
    judges_file.write_text(tomli_w.dumps({"judges": {"g": entry}}))
    (judge,) = load_judges(judges_file)
    log = VoteLog(set_dir)
    ask_task(set_dir, _task(task_id), judge, judge.client(), 1, log)
    log.close()


def _computed(ledger: Ledger, stage: str) -> Decimal:
    state = ledger.state()
    return sum((state.runs[r].computed_usd for r in state.stages[stage].runs), Decimal(0))


def test_a_live_judge_is_billed_to_the_judge_stage_and_logged_with_its_cost(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("JUDGE_TEST_KEY", "placeholder")  # the proxy holds the real keys
    set_dir = tmp_path / "set"
    with _vendor(tmp_path) as vendor:
        # The arms' proxy (stage "default") refuses a judge's call: the arms' cap is not judging's.
        arms = start_live_proxy(tmp_path, vendor, name="arms")
        try:
            _ask(set_dir, arms.openai_base, "refused")
        finally:
            arms.stop()
        assert vendor.requests == []
        judging = start_live_proxy(tmp_path, vendor, "--stage", "judge", name="judging")
        try:
            _ask(set_dir, judging.openai_base, "billed")
            # A judging proxy refuses any other call: an arm's spend is not booked as judging.
            with pytest.raises(Exception, match="only calls with purpose judge"):
                judging.openai().chat.completions.create(
                    model=MODEL, messages=[{"role": "user", "content": "hi"}]
                )
        finally:
            judging.stop()
        assert len(vendor.requests) == 1
        assert vendor.requests[0].body["model"] == MODEL

    refused, billed = read_votes(set_dir)
    assert refused.status == "client_failed" and "403" in str(refused.detail)
    assert "charged to the ledger stage 'judge'" in str(refused.detail)
    assert refused.cost_usd is None and refused.input_tokens is None
    assert (billed.status, billed.verdict) == ("accepted", "FLAG")
    assert (billed.engine, billed.model, billed.effort) == ("openai", MODEL, "medium")
    assert billed.input_tokens and billed.output_tokens and billed.cost_usd is not None
    assert Decimal(billed.cost_usd) > 0

    ledger = Ledger(tmp_path / "ledger.jsonl")
    try:
        # Every dollar is booked: the judge stage holds exactly what the set says judging cost,
        # the arms' stage nothing.
        assert _computed(ledger, "judge") == Decimal(billed.cost_usd)
        assert _computed(ledger, "default") == 0
    finally:
        ledger.close()
    calls = judging.calls()
    assert [(c["purpose"], c["outcome"]) for c in calls] == [("judge", "ok"), ("", "refused")]
