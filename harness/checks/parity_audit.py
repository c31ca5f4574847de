"""The audit's engine-parity check (the design's V9, issue 36 item 5) over the captured requests:
every main request of an arm under the study's `[parity]` (run.json `study.parity`) names the
answer model it fixes and asks for the output limit it fixes, so the arms were compared on equal
terms in fact, not only in the study file. Top-k, the answer prompt and the embedding model are
handed over the seam with them; what the captured requests show of those (the recalled
memories, the system text) depends on each arm's own prompt layout, so the arms' tests read
them (tests/harness/test_parity.py).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from harness.checks.body_diff import request_body
from rundir.calls.calllog import CallRecord
from rundir.calls.packread import PackReader
from rundir.runs.header import RunHeader

# The request fields an output limit is read from, per route shape (the arm's own request).
_LIMITS = ("max_completion_tokens", "max_tokens", "max_output_tokens")


def requested_limit(body: Any) -> int | None:
    """The output limit a request body asks for (None when it names none)."""
    if not isinstance(body, dict):
        return None
    for name in _LIMITS:
        if isinstance(body.get(name), int):
            return int(body[name])
    return None


def parity_findings(
    header: RunHeader, calls: Iterable[tuple[int, CallRecord]], pack: PackReader | None
) -> list[tuple[str, str]]:
    """(where, detail) for each main call of an arm under parity that does not hold to it."""
    parity = header.study.parity if header.study is not None else {}
    arms = parity.get("arms")
    if not isinstance(arms, list) or not arms:
        return []
    model = parity.get("answer_model")
    limit = parity.get("answer_max_tokens")
    found: list[tuple[str, str]] = []
    for line, call in calls:
        if call.arm not in arms or call.purpose != "main":
            continue
        where = f"calls.jsonl:{line} (seq {call.seq}, {call.arm})"
        if isinstance(model, str) and call.model_requested != model:
            found.append((where, f"asked for {call.model_requested}, [parity] fixes {model}"))
        if isinstance(limit, int) and pack is not None and call.request_body is not None:
            try:
                asked = requested_limit(request_body(pack, call))
            except (KeyError, ValueError):
                continue  # the body check names an unreadable body
            if asked != limit:
                found.append((where, f"asked for {asked} output tokens, [parity] fixes {limit}"))
    return found
