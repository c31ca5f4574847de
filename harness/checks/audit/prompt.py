"""The prompt audit (the design's V2, issue 36 item 2) over a coupled run's captured requests:
where a turn handed B's context to an arm (turns.jsonl `addon_from`), that arm's first main
request of the turn must hold the handed text as a system prompt, once, and in no user message.

The turn-context audit (audit/context.py) proves the harness handed the right bytes; this proves
the arm placed them where the design says (docs/coupled.md): an arm that drops the context, puts
it in the user's message or sends it twice is a discrepancy naming the arm, item and turn. Of
V2's other checks (4.7), the one the harness can read without a product's prompt layout is this:
every instruction of B's turn text is in the receiver's prompt. Memory presence, the card's hash
and the persona id are the private runner's to audit. Only answered turns (`done`) are checked:
a turn that failed before its main call has no request to read.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from harness.checks.body_diff import request_body
from rundir.calls import CallRecord, PackReader, read_calls
from rundir.turns import TurnRecord

_SYSTEM_ROLES = ("system", "developer")


def _texts(content: Any) -> list[str]:
    """The text of a message's content: a string, or a list of text blocks or parts."""
    if isinstance(content, str):
        return [content]
    if isinstance(content, list):
        return [
            part["text"]
            for part in content
            if isinstance(part, dict) and isinstance(part.get("text"), str)
        ]
    return []


def prompt_parts(body: Any) -> tuple[list[str], list[str]]:
    """(system texts, user texts) of a request body on any of the routes arms use: OpenAI chat
    (`messages`, system and developer roles), Anthropic's Messages API (`system`), OpenAI's
    Responses API (`instructions`, `input`)."""
    system: list[str] = []
    user: list[str] = []
    if not isinstance(body, dict):
        return system, user
    system += _texts(body.get("system"))
    if isinstance(body.get("instructions"), str):
        system.append(body["instructions"])
    messages = body.get("messages")
    entries = messages if isinstance(messages, list) else []
    if isinstance(body.get("input"), list):
        entries = [*entries, *body["input"]]
    elif isinstance(body.get("input"), str):
        user.append(body["input"])
    for message in entries:
        if not isinstance(message, dict):
            continue
        role = message.get("role")
        if role in _SYSTEM_ROLES:
            system += _texts(message.get("content"))
        elif role == "user":
            user += _texts(message.get("content"))
    return system, user


def _first_mains(run_dir: Path) -> dict[tuple[str, str, int], CallRecord]:
    path = run_dir / "calls.jsonl"
    by_turn: dict[tuple[str, str, int], list[CallRecord]] = defaultdict(list)
    for call in read_calls(path) if path.exists() else []:
        if call.purpose == "main" and call.item is not None and call.turn is not None:
            by_turn[(call.arm, call.item, call.turn)].append(call)
    return {key: min(calls, key=lambda c: c.seq) for key, calls in by_turn.items()}


def placement_problem(handed: str, body: Any) -> str | None:
    """Why `body` does not hold `handed` as a system prompt once (None when it does)."""
    system, user = prompt_parts(body)
    times = sum(text.count(handed) for text in system)
    if any(handed in text for text in user):
        return "its main request has the handed turn context in a user message"
    if times == 0:
        return "its main request does not hold the handed turn context in its system prompt"
    if times > 1:
        return f"its main request holds the handed turn context {times} times"
    return None


def prompt_findings(
    run_dir: Path, handed: Iterable[tuple[int, TurnRecord, str]]
) -> list[tuple[str, str]]:
    """(where, detail) for each (line, receiver's record, handed text) whose receiver's first
    main request of the turn does not place the text as the design says."""
    receivers = [entry for entry in handed if entry[1].outcome == "done" and entry[2]]
    if not receivers:
        return []
    mains = _first_mains(run_dir)
    pack = PackReader.open(run_dir)
    found: list[tuple[str, str]] = []
    for line, record, text in receivers:
        where = f"turns.jsonl:{line} ({record.arm}, {record.item}, turn {record.turn})"
        call = mains.get((record.arm, record.item, record.turn))
        if call is None:
            found.append((where, f"received {record.addon_from}'s turn context, made no main call"))
            continue
        try:
            body = request_body(pack, call)
        except (KeyError, ValueError) as e:
            found.append((where, f"its main request (seq {call.seq}) cannot be read: {e}"))
            continue
        why = placement_problem(text, body)
        if why is not None:
            found.append((where, f"{why} (seq {call.seq}, from {record.addon_from})"))
    return found
