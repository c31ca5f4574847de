"""Memory controls: did the arm surface what an earlier turn told it?

An item's turn may declare what a working memory must bring back (`expect = ["Lisbon"]` and/or
`expect_regex = "sister .* Lisbon"`). A word or the pattern counts as surfaced when it is in the
arm's reply to that turn or in the context of the arm's main call for that turn: the request
bodies of the calls the proxy logged with purpose `main` for that arm, item and turn. So an
engine that stored nothing (its main call carries only the current message) misses, even when
every turn ended `done`; the miss is written on the turn (`memory_miss` in turns.jsonl: the
words or pattern not found) and counted per arm in the run's summary.

Only `main` calls count: an engine's own extraction or update calls see the current message and
often the old memories, which would make any engine pass. Engines label those calls (the
X-Harness-Purpose header, `utility`); an unlabelled one is `main` and may pass the control
falsely, never fail it.
"""

from __future__ import annotations

import json
import re
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from harness.study import Item
from rundir.calls import CALL_SCHEMA, CallRecord, PackReader
from rundir.jsonlines import read_lines
from rundir.turns import TurnRecord, read_turns

# The call log line of a streamed main call is written when its stream ends, which can be a
# moment after the arm's last delta reached the orchestrator: wait that long for it.
CALL_LOG_GRACE_S = 3.0
POLL_S = 0.1


def wanted(item: Item, turn: int) -> bool:
    script = item.turns[turn]
    return bool(script.expect or script.expect_regex)


def missing(item: Item, turn: int, texts: Sequence[str]) -> list[str]:
    """The expected words (case-insensitive) and pattern that none of `texts` contains."""
    script = item.turns[turn]
    lowered = [text.casefold() for text in texts]
    out = [word for word in script.expect if not any(word.casefold() in t for t in lowered)]
    if script.expect_regex and not any(re.search(script.expect_regex, t) for t in texts):
        out.append(f"/{script.expect_regex}/")
    return out


def strings_of(value: Any) -> Iterator[str]:
    """Every string value of a JSON body, depth first (a request's whole text)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for inner in value.values():
            yield from strings_of(inner)
    elif isinstance(value, list):
        for inner in value:
            yield from strings_of(inner)


def _calls(path: Path) -> list[CallRecord]:
    """The call log as far as it is written: a torn last line (the proxy is still writing) is
    skipped, not an error."""
    records: list[CallRecord] = []
    try:
        lines = read_lines(path)
    except OSError:
        return records
    for line in lines:
        try:
            record = CallRecord.model_validate_json(line)
        except ValueError:
            continue
        if record.schema_ == CALL_SCHEMA:
            records.append(record)
    return records


def main_contexts(run_dir: Path, arm: str, item: str, turns: set[int]) -> dict[int, list[str]]:
    """Per turn, the text of every main-purpose request body the arm sent during it (all the
    string values of the JSON body, joined: system prompt, messages, instructions)."""
    calls = [
        c
        for c in _calls(run_dir / "calls.jsonl")
        if c.arm == arm
        and c.item == item
        and c.turn in turns
        and c.purpose == "main"
        and c.phase is None  # an ingestion's calls (seam v2) are not the turn's context
    ]
    found: dict[int, list[str]] = {turn: [] for turn in turns}
    if not calls:
        return found
    pack = PackReader.open(run_dir)
    for call in calls:
        if call.request_body is None or call.request_body not in pack or call.turn is None:
            continue
        try:
            body = json.loads(pack.get(call.request_body))
        except ValueError:
            continue
        found[call.turn].append("\n".join(strings_of(body)))
    return found


def check(run_dir: Path, item: Item, records: list[TurnRecord]) -> None:
    """Set `memory_miss` on each record whose turn has a control: [] when it passed."""
    controlled = {r.turn: r for r in records if r.turn < len(item.turns) and wanted(item, r.turn)}
    if not controlled:
        return
    arm = records[0].arm
    deadline = time.monotonic() + CALL_LOG_GRACE_S
    while True:
        contexts = main_contexts(run_dir, arm, item.id, set(controlled))
        misses = {
            turn: missing(item, turn, [record.text, *contexts[turn]])
            for turn, record in controlled.items()
        }
        # Only a turn whose main call is not in the log yet is worth waiting for.
        unlogged = [t for t, miss in misses.items() if miss and not contexts[t]]
        if not unlogged or time.monotonic() > deadline:
            break
        time.sleep(POLL_S)
    for turn, record in controlled.items():
        record.memory_miss = misses[turn]


def misses_per_arm(turns_path: Path) -> dict[str, int]:
    """Turns whose memory control failed, per arm (arms with controls and no miss show 0)."""
    counts: Counter[str] = Counter()
    for record in read_turns(turns_path):
        if record.memory_miss is not None:
            counts[record.arm] += bool(record.memory_miss)
    return dict(sorted(counts.items()))
