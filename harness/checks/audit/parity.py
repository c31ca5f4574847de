"""The audit's engine-parity check (the design's V9, issue 36 item 5) over the captured requests:
every main request of an arm under the study's `[parity]` (run.json `study.parity`) names the
answer model it fixes, asks for the output limit it fixes, and recalled under the top-k it fixes,
so the arms were compared on equal terms in fact, not only in the study file.

Top-k is read from the recalled-memory section every shipped memory arm writes into its answer's
system text (arms/recall.py): the top-k its heading names must be the block's, and the memories it
shows (counted by their markers) no more than that. An arm may show fewer (its store held fewer,
its engine's search returned fewer): that is the engine's recall, not a setting, and is not
flagged. A request without a section recalled nothing; an arm under the block none of whose main
calls has one, while another's do, does not show what it recalled, and is flagged. The answer
prompt and the embedding model are handed over the seam with them; tests/study/test_parity.py
reads those in two arms' captured requests.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from arms.recall import counted
from harness.checks.audit.prompt import prompt_parts
from harness.checks.body_diff import request_body
from rundir.calls import CallRecord, PackReader
from rundir.runs import RunHeader

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


def recall_problem(body: Any, top_k: int) -> tuple[str | None, bool]:
    """(why a main request's recalled memories break `top_k`, or None; whether it shows a
    section at all), read from the system text's recalled-memory section (arms/recall.py)."""
    system, _ = prompt_parts(body)
    try:
        found = counted("\n".join(system))
    except ValueError as e:
        return f"its recalled memories cannot be counted: {e}", True
    if found is None:
        return None, False
    named, shown = found
    if named != top_k:
        return f"recalled under top_k={named}, [parity] fixes top_k={top_k}", True
    if shown > top_k:
        return f"shows {shown} recalled memories, [parity] fixes top_k={top_k}", True
    return None, True


def parity_findings(
    header: RunHeader, calls: Iterable[tuple[int, CallRecord]], pack: PackReader | None
) -> list[tuple[str, str]]:
    """(where, detail) for each main call of an arm under parity that does not hold to it, and
    each such arm none of whose main calls shows its recalled memories while top_k is fixed."""
    parity = header.study.parity if header.study is not None else {}
    arms = parity.get("arms")
    if not isinstance(arms, list) or not arms:
        return []
    model = parity.get("answer_model")
    limit = parity.get("answer_max_tokens")
    top_k = parity.get("top_k")
    found: list[tuple[str, str]] = []
    mains: dict[str, int] = {}  # arm -> its main calls
    shown: set[str] = set()  # arms that showed a recalled-memory section at least once
    for line, call in calls:
        if call.arm not in arms or call.purpose != "main":
            continue
        mains[call.arm] = mains.get(call.arm, 0) + 1
        where = f"calls.jsonl:{line} (seq {call.seq}, {call.arm})"
        if isinstance(model, str) and call.model_requested != model:
            found.append((where, f"asked for {call.model_requested}, [parity] fixes {model}"))
        if pack is None or call.request_body is None:
            continue
        try:
            body = request_body(pack, call)
        except (KeyError, ValueError):
            continue  # the body check names an unreadable body
        if isinstance(limit, int) and (asked := requested_limit(body)) != limit:
            found.append((where, f"asked for {asked} output tokens, [parity] fixes {limit}"))
        if isinstance(top_k, int):
            why, sectioned = recall_problem(body, top_k)
            shown |= {call.arm} if sectioned else set()
            if why is not None:
                found.append((where, why))
    if isinstance(top_k, int) and shown:
        # One arm shows what it recalled and another never does: the second's top-k is unseen.
        for arm in sorted(set(mains) - shown):
            found.append(
                (f"calls.jsonl ({arm})", f"none of its {mains[arm]} main calls shows recalled "
                 f"memories (arms/recall.py): its top_k cannot be checked against {top_k}")
            )  # fmt: skip
    return found
