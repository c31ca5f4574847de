"""Model identity per turn (issue 25 item 5): a turn whose main call the live proxy flagged
`wrong_model` (the reply named a model other than the study's `[pins.models]` pin for its
purpose: proxy/live/settle.py) is that arm's failure, outcome `wrong_model`, naming the call.

The proxy writes a call's record when its reply is complete, which is before the arm can
answer the turn with it; the watch reads calls.jsonl's new complete lines each time a turn
record is written. Other purposes' flags stay findings of the call log (the report's pins table
and `harness audit` show them); a record of an infrastructure failure keeps its outcome.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

from rundir.jsonlines import whole_lines
from rundir.turns import TurnRecord
from vendors.pins import WRONG_MODEL_FLAG

# Outcomes of an answered turn: a wrong model overrides them (the answer is not the subject's).
_ANSWERED = ("done", "cut", "error")


class ModelIdentityWatch:
    def __init__(self, calls: Path) -> None:
        self.calls = calls
        self.offset = 0
        self.flagged: dict[tuple[str, str | None, int | None], list[str]] = defaultdict(list)

    def _read_new(self) -> None:
        try:
            with self.calls.open("rb") as f:
                f.seek(self.offset)
                data = f.read()
        except FileNotFoundError:
            return
        lines, end = whole_lines(data)  # a line still being written waits for the next read
        self.offset += end
        for line in lines:
            try:
                call = json.loads(line)
            except ValueError:
                continue  # the audit names a damaged line; this watch only looks for flags
            if not isinstance(call, dict) or WRONG_MODEL_FLAG not in (call.get("flags") or []):
                continue
            if call.get("purpose") != "main":
                continue
            key = (str(call.get("arm")), call.get("item"), call.get("turn"))
            self.flagged[key].append(
                f"call {call.get('seq')} asked for {call.get('model_requested')} and was served "
                f"by {call.get('model_served') or 'an unnamed model'}"
            )

    def check(self, record: TurnRecord) -> TurnRecord:
        """`record`, failed as `wrong_model` if one of its main calls was served by a model
        other than the pinned one."""
        self._read_new()
        found = self.flagged.get((record.arm, record.item, record.turn))
        if found and record.outcome in _ANSWERED:
            record.outcome = "wrong_model"
            record.error = "wrong model (not the pinned one): " + "; ".join(found)
        return record
