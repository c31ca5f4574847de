"""A pilot's projection from a record run's calls and the price table (expected: the calls' own
tokens; worst: reserve-style, the request's output limit read from the body pack, else the
model's ceiling), and the unit costs of the legs' live runs, every call of an item's turn
charged to it."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from harness.errors import HarnessError
from harness.run.pilot.pilot_cost import (
    BASE_OVERHEAD_TOKENS,
    leg_calls,
    project_calls,
    record_calls,
    unit_costs,
)
from ledger.prices import load_prices
from rundir.calls.bodies import BodyStore
from rundir.calls.calllog import CallRecord
from rundir.calls.packread import PackReader

PRICES = load_prices()
MODEL = "gpt-4.1-mini"


def _call(seq: int, arm: str, item: str | None, turn: int | None, **fields: Any) -> CallRecord:
    tokens = fields.pop("tokens", {"input": 1000, "output": 50, "cache_read": 200})
    return CallRecord.model_validate(
        {
            "schema": 1, "run_id": "r", "seq": seq, "mode": "record", "arm": arm, "turn": turn,
            "item": item, "purpose": "main", "vendor": "openai", "route": "openai.chat",
            "method": "POST", "path": "/v1/chat/completions", "model_requested": MODEL,
            "model_served": MODEL, "status": 200, "outcome": "ok", "tokens": tokens,
            "request_hash": "h", "timing": {"start": 0.0}, **fields,
        }
    )  # fmt: skip


def _by_hand(tokens: dict[str, int], out_cap: int, overhead: int = 0) -> tuple[Decimal, Decimal]:
    p = PRICES.model(MODEL)
    r = p.base_rates()
    prompt = tokens["input"] + tokens.get("cache_read", 0) + overhead
    expected = (
        tokens["input"] * r.input
        + tokens.get("cache_read", 0) * r.cread
        + tokens["output"] * r.output
    ) / Decimal(10**6)
    worst = (prompt * r.input_side_max() + out_cap * r.output_side_max()) / Decimal(10**6)
    return expected, worst


def test_expected_is_the_calls_own_tokens_and_worst_the_requests_output_limit(
    tmp_path: Path,
) -> None:
    store = BodyStore(tmp_path / "bodies")
    body = store.put(json.dumps({"model": MODEL, "max_completion_tokens": 64}).encode())
    store.close()
    tokens = {"input": 1000, "output": 50, "cache_read": 200}
    calls = [_call(1, "B", "i1", 1, request_body=body), _call(2, "B", "i1", 2)]
    p = project_calls(calls, PRICES, PackReader.open(tmp_path))
    # The worst follows the live proxy's prompt bound (request bytes + hidden overhead) since
    # the projection is held to the proxy's reservations: the small body's bytes plus overhead
    # are under the call's own 1,200 prompt tokens, so those bound it; with no body to read, the
    # call's own prompt (each token at least a byte) plus the overhead the proxy adds.
    limited = _by_hand(tokens, 64)
    unbounded = _by_hand(tokens, PRICES.model(MODEL).max_output_tokens, BASE_OVERHEAD_TOKENS)
    assert p.calls == 2
    assert p.expected == limited[0] + unbounded[0]
    assert p.worst == limited[1] + unbounded[1]  # no body: the model's ceiling, reserve-style
    assert p.worst > p.expected


def test_a_model_the_table_lacks_is_refused_not_projected_free() -> None:
    call = _call(1, "B", "i1", 1, model_served="no-such-model", model_requested="no-such-model")
    with pytest.raises(HarnessError, match=r"'no-such-model'.*cannot be projected"):
        project_calls([call], PRICES, None)


def test_a_leg_takes_only_its_arms_and_items_calls() -> None:
    calls = [_call(1, "B", "i1", 1), _call(2, "C0", "i1", 1), _call(3, "B", "i2", 1)]
    calls.append(_call(4, "B", None, None))
    assert [c.seq for c in leg_calls(calls, ["B"], ["i1"])] == [1]
    assert [c.seq for c in leg_calls(calls, ["B", "C0"], ["i1", "i2"])] == [1, 2, 3]


def test_a_record_run_without_calls_is_refused(tmp_path: Path) -> None:
    with pytest.raises(HarnessError, match=r"has no calls\.jsonl"):
        record_calls(tmp_path)


def _turn(arm: str, item: str, turn: int) -> str:
    return json.dumps(
        {"schema": 1, "run": "r", "item": item, "arm": arm, "turn": turn, "text": "x",
         "outcome": "done"}
    )  # fmt: skip


def test_unit_costs_charge_every_call_of_an_items_turns_and_set_aside_itemless_ones(
    tmp_path: Path,
) -> None:
    run = tmp_path / "run"
    run.mkdir()
    turns = [_turn("B", "i1", 1), _turn("B", "i1", 2), _turn("C0", "i1", 1)]
    (run / "turns.jsonl").write_text("\n".join(turns) + "\n")
    calls = [
        _call(1, "B", "i1", 1, cost_usd="0.010"),
        _call(2, "B", "i1", 2, cost_usd="0.020", tokens={"input": 10, "output": 5}),
        _call(3, "B", "i1", None, cost_usd="0.003", phase="ingest"),  # the item's: charged
        _call(4, "B", None, None, cost_usd="0.5"),  # no item: no turn caused it
        _call(5, "C0", "i1", 1, cost_usd="0.007"),
    ]
    (run / "calls.jsonl").write_text("".join(c.to_line() for c in calls))
    units = unit_costs([run])
    b = units["B"].as_json()
    assert b["turns"] == 2 and Decimal(b["cost_usd"]) == Decimal("0.033")
    assert Decimal(b["mean_usd_per_turn"]) == Decimal("0.0165")
    assert b["input_tokens"] == 1200 + 10 + 1200 and b["cached_tokens"] == 400
    assert b["calls_not_charged_to_a_turn"] == 1 and b["runs"] == ["run"]
    assert Decimal(units["C0"].as_json()["mean_usd_per_turn"]) == Decimal("0.007")
