"""The report's pins table (section 1; issue 25 item 5): per purpose, the model the study pins
(`[pins.models]`, run.json's copy), the models the call log shows requested and served, and the
calls served by another model than the pin (the proxy's `wrong_model` flag)."""

from __future__ import annotations

from collections import defaultdict

from harness.report.context import Context
from harness.report.model import Table
from vendors.pins import WRONG_MODEL_FLAG


def pins_table(ctx: Context) -> Table:
    pins = ctx.data.study.get("pins") or {}
    models = pins.get("models") if isinstance(pins, dict) else None
    pinned: dict[str, str] = dict(models) if isinstance(models, dict) else {}
    requested: dict[str, set[str]] = defaultdict(set)
    served: dict[str, set[str]] = defaultdict(set)
    calls: dict[str, int] = defaultdict(int)
    wrong: dict[str, int] = defaultdict(int)
    for call in ctx.data.calls:
        purpose = call.purpose
        calls[purpose] += 1
        requested[purpose].add(call.model_requested or "-")
        if call.model_served:
            served[purpose].add(call.model_served)
        if WRONG_MODEL_FLAG in call.flags:
            wrong[purpose] += 1
    rows = [
        [
            purpose,
            pinned.get(purpose, "not pinned"),
            ", ".join(sorted(requested[purpose])) or "-",
            ", ".join(sorted(served[purpose])) or "-",
            str(calls[purpose]),
            str(wrong[purpose]),
        ]
        for purpose in sorted(set(calls) | set(pinned))
    ]
    return Table(
        ["purpose", "pinned model", "requested", "served", "calls", "served by another model"],
        rows or [["none", "-", "-", "-", "0", "0"]],
    )
