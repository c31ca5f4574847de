"""What a pilot's legs will cost, projected from a record run, and what they did cost, per arm.

Projection (before any spend): every call the record run made for a leg's arms and items is
priced at the price table twice. Expected: its own tokens (the record run's stub estimates).
Worst: what the live proxy will reserve before forwarding it (proxy/live/reserve.py), from the
body the proxy will send: the arm's request (the run's pack) with the record run's `rewrites`
applied (the one sampling rewrite, the output cap and B's pins, the same in every mode), so a
call asking 100,000 tokens and sent 4,000 is projected at 4,000. Its prompt bound is the live
proxy's (the request's bytes plus the vendor's hidden overhead, a tool allowance when it offers
tools), at the highest input-side rate its tier could pay; its output the limit as sent (on the
route's wire shape: Anthropic's OpenAI-compatible route reads OpenAI's fields), else the model's
ceiling. A follower's call answered by reuse (`reuse_of`) reserves nothing and is projected at
nothing. A call whose model the table lacks is refused, never projected as free.

Unit costs (after the legs ran): per arm, from the legs' live runs, the mean dollars per turn
with every call an item's turn caused charged to it (ingestion and turn-less calls of the item
included), and the tokens and cached tokens per turn: what the confirmatory ceiling is set from.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

from harness.checks.audit import token_counts
from harness.errors import HarnessError
from ledger.errors import UnknownModelError
from ledger.prices import ModelPrice, PriceTable, cost, worst_case
from rundir.calls import CallRecord, PackReader, as_sent, read_calls
from rundir.turns import read_turns
from vendors.routes import wire_shape

# The live proxy's prompt bound (proxy/metering/billing.py input_bound, which harness/ may not
# import): every token carries at least a byte of the body, plus the vendor's hidden overhead.
# tests/run/pilot/test_pilot_projection.py holds the projection to the proxy's reservations.
BASE_OVERHEAD_TOKENS = 64
TOOL_OVERHEAD_TOKENS = 1200

# The request fields that bound a call's output, per wire shape (as the live proxy reads them).
_OUTPUT_LIMITS = {
    "anthropic.messages": ("max_tokens",),
    "openai.chat": ("max_completion_tokens", "max_tokens"),
    "openai.responses": ("max_output_tokens",),
}


@dataclass
class Projection:
    expected: Decimal = Decimal(0)
    worst: Decimal = Decimal(0)
    calls: int = 0


def sent_body(call: CallRecord, pack: PackReader | None) -> tuple[dict[str, Any], int] | None:
    """The body the proxy sends for `call` (the arm's request with the run's rewrites applied)
    and the arm's request's length in bytes; None when it cannot be read."""
    if pack is None or call.request_body is None or call.request_body not in pack:
        return None
    try:
        raw = pack.get(call.request_body)
        body: Any = json.loads(raw)
    except (ValueError, KeyError):
        return None
    if not isinstance(body, dict):
        return None
    return as_sent(body, call.rewrites), len(raw)


def _output_limit(route: str, body: dict[str, Any]) -> int | None:
    """The output tokens a sent body allows (None: it names no limit)."""
    keys = _OUTPUT_LIMITS.get(wire_shape(route), ())
    limit = next((body[k] for k in keys if isinstance(body.get(k), int)), None)
    if limit is None:
        return None
    n = body.get("n")
    return int(limit) * (n if isinstance(n, int) and n > 1 else 1)


def worst_of(call: CallRecord, price: ModelPrice, pack: PackReader | None) -> Decimal:
    """What the live proxy reserves for `call`, from the body it sends."""
    tokens = token_counts(call)
    if call.route.endswith((".embeddings", ".rerank")):
        return worst_case(price, tokens.prompt, 0)
    sent = sent_body(call, pack)
    if sent is None:  # no body to read: its own prompt, and the model's output ceiling
        return worst_case(price, tokens.prompt + BASE_OVERHEAD_TOKENS, price.max_output_tokens)
    body, raw_len = sent
    prompt = raw_len + BASE_OVERHEAD_TOKENS + (TOOL_OVERHEAD_TOKENS if body.get("tools") else 0)
    asked = _output_limit(call.route, body)
    ceiling = price.max_output_tokens if asked is None else min(asked, price.max_output_tokens)
    return worst_case(price, max(prompt, tokens.prompt), max(ceiling, tokens.output))


def project_calls(
    calls: list[CallRecord], prices: PriceTable, pack: PackReader | None
) -> Projection:
    p = Projection()
    for call in calls:
        if call.reuse_of is not None:
            continue  # answered with the leader's reply: no reservation, no vendor call
        model = call.model_served or call.model_requested or ""
        try:
            price = prices.model(model)
        except UnknownModelError:
            raise HarnessError(
                f"call {call.seq} of the record run ({call.arm}, {call.purpose}) names model "
                f"{model!r}, which the price table {prices.source} lacks: it cannot be projected"
            ) from None
        p.expected += cost(price, token_counts(call))
        p.worst += worst_of(call, price, pack)
        p.calls += 1
    return p


def record_calls(run_dir: Path) -> tuple[list[CallRecord], PackReader | None]:
    path = run_dir / "calls.jsonl"
    if not path.is_file():
        raise HarnessError(f"record run {run_dir} has no calls.jsonl")
    try:
        pack = PackReader.open(run_dir)
    except (OSError, ValueError):
        pack = None  # no body pack: outputs are bounded by the models' ceilings
    return read_calls(path), pack


def leg_calls(calls: list[CallRecord], arms: list[str], items: list[str]) -> list[CallRecord]:
    wanted_arms, wanted_items = set(arms), set(items)
    return [c for c in calls if c.arm in wanted_arms and c.item in wanted_items]


@dataclass
class ArmUnits:
    turns: int = 0
    cost_usd: Decimal = Decimal(0)
    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0  # cache reads
    uncharged_calls: int = 0  # calls with no item: no turn caused them
    runs: list[str] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        per = (lambda v: v / self.turns) if self.turns else (lambda v: None)
        mean = per(self.cost_usd)
        return {
            "turns": self.turns,
            "cost_usd": str(self.cost_usd),
            "mean_usd_per_turn": None if mean is None else str(mean),
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cached_tokens": self.cached_tokens,
            "mean_input_tokens_per_turn": per(float(self.input_tokens)),
            "mean_output_tokens_per_turn": per(float(self.output_tokens)),
            "mean_cached_tokens_per_turn": per(float(self.cached_tokens)),
            "calls_not_charged_to_a_turn": self.uncharged_calls,
            "runs": self.runs,
        }


def unit_costs(run_dirs: list[Path]) -> dict[str, ArmUnits]:
    """Per arm, over these runs: every call of an item charged to that item's turns of the arm;
    the mean is the total over the number of turns."""
    units: dict[str, ArmUnits] = defaultdict(ArmUnits)
    for run_dir in run_dirs:
        turns = read_turns(run_dir / "turns.jsonl") if (run_dir / "turns.jsonl").is_file() else []
        calls = read_calls(run_dir / "calls.jsonl") if (run_dir / "calls.jsonl").is_file() else []
        ran = {(t.arm, t.item) for t in turns}
        for t in turns:
            units[t.arm].turns += 1
        for c in calls:
            u = units[c.arm]
            if c.item is None or (c.arm, c.item) not in ran:
                u.uncharged_calls += 1
                continue
            u.cost_usd += c.cost_usd
            u.input_tokens += c.tokens.input + c.tokens.cache_read + c.tokens.cache_write
            u.output_tokens += c.tokens.output
            u.cached_tokens += c.tokens.cache_read
        for arm in {t.arm for t in turns} | {c.arm for c in calls}:
            if run_dir.name not in units[arm].runs:
                units[arm].runs.append(run_dir.name)
    return dict(sorted(units.items()))
