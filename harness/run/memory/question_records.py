"""Each memory benchmark question's record (rundir/turns/questions.py), made once its turn is in.

The call log is read incrementally (`CallTail`): a run of 500 questions on two arms logs tens of
thousands of calls, and re-reading the whole file after every question would make the run's
bookkeeping quadratic. The evidence check reads the request bodies of the question's main calls
(answer phase only, as the memory controls do) and looks for each evidence turn's text there,
whitespace-normalised.
"""

from __future__ import annotations

import json
from collections import defaultdict
from decimal import Decimal
from pathlib import Path

from harness.checks import strings_of
from harness.run.memory.net_score import DEFAULT_LAMBDA, abstains, scored_net
from harness.stats import normalise
from harness.study import Item
from rundir.calls import CALL_SCHEMA, CallRecord, PackReader
from rundir.jsonlines import whole_lines
from rundir.turns import IngestionRecord, QuestionLog, QuestionRecord, TurnRecord


def _flat(text: str) -> str:
    return " ".join(text.split())


class CallTail:
    """The call log's new complete lines since the last read, indexed by (arm, item)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.offset = 0
        self.by_item: dict[tuple[str, str | None], list[CallRecord]] = defaultdict(list)

    def refresh(self) -> None:
        try:
            with open(self.path, "rb") as f:
                f.seek(self.offset)
                chunk = f.read()
        except OSError:
            return
        lines, end = whole_lines(chunk)  # a torn last line waits for the next read
        for line in lines:
            try:
                record = CallRecord.model_validate_json(line)
            except ValueError:
                continue
            if record.schema_ == CALL_SCHEMA:
                self.by_item[(record.arm, record.item)].append(record)
        self.offset += end


class QuestionRecorder:
    def __init__(self, run_id: str, run_dir: Path, net_lambda: float = DEFAULT_LAMBDA) -> None:
        self.run_id = run_id
        self.net_lambda = net_lambda
        self.run_dir = run_dir
        self.calls = CallTail(run_dir / "calls.jsonl")
        self.log = QuestionLog(run_dir / "questions.jsonl")

    def record(
        self,
        item: Item,
        arm: str,
        turns: list[TurnRecord],
        ingested: list[IngestionRecord],
        snapshot_sha256: str | None,
    ) -> QuestionRecord:
        memory = item.memory
        assert memory is not None
        q = memory.question
        self.calls.refresh()
        calls = self.calls.by_item.get((arm, item.id), [])
        ingest = [c for c in calls if c.phase == "ingest"]
        answer = [c for c in calls if c.phase is None]
        turn = turns[0] if turns else None
        text = turn.text if turn else ""
        found = self._evidence_found(answer, q.evidence_texts)
        scored = not q.abstention
        exact = normalise(text) == normalise(q.answer)
        outcome = turn.outcome if turn else "infra_failed"
        abstained = abstains(text)
        dates = [session.date for session in memory.history.sessions]  # at least one
        record = QuestionRecord(
            run=self.run_id,
            item=item.id,
            arm=arm,
            question_id=q.question_id,
            source=memory.source,
            history=memory.history.id,
            question_date=q.question_date,
            history_from=min(dates),
            history_to=max(dates),
            question_type=q.question_type,
            category=q.category,
            abstention=q.abstention,
            gold=q.answer,
            answer=text,
            outcome=turn.outcome if turn else "infra_failed",
            exact_match=exact if scored else None,
            gold_in_answer=normalise(q.answer) in normalise(text) if scored else None,
            abstained=abstained,
            net=scored_net(outcome, q.abstention, abstained, exact, self.net_lambda),
            net_lambda=self.net_lambda,
            evidence_sessions=q.evidence_sessions,
            evidence_total=len(q.evidence_texts),
            evidence_found=found,
            # Kept apart for an abstention question: its evidence does not hold the answer.
            evidence_reached=found == len(q.evidence_texts)
            if q.evidence_texts and scored
            else None,
            ingest_sessions=len(ingested),
            ingest_failed=sum(r.outcome != "done" for r in ingested),
            ingest_seconds=round(sum(r.seconds or 0.0 for r in ingested), 3),
            ingest_calls=len(ingest),
            ingest_cost_usd=sum((c.cost_usd for c in ingest), Decimal(0)),
            snapshot_sha256=snapshot_sha256,
            first_token_s=turn.first_token_s if turn else None,
            last_token_s=turn.last_token_s if turn else None,
            answer_calls=len(answer),
            answer_cost_usd=sum((c.cost_usd for c in answer), Decimal(0)),
        )
        self.log.append(record)
        return record

    def _evidence_found(self, answer: list[CallRecord], evidence: list[str]) -> int:
        main = [c for c in answer if c.purpose == "main" and c.request_body is not None]
        if not evidence or not main:
            return 0
        pack = PackReader.open(self.run_dir)
        context: list[str] = []
        for call in main:
            if call.request_body is None or call.request_body not in pack:
                continue
            try:
                body = json.loads(pack.get(call.request_body))
            except ValueError:
                continue
            context.append(_flat("\n".join(strings_of(body))))
        joined = "\n".join(context)
        return sum(_flat(text) in joined for text in evidence)

    def close(self) -> None:
        self.log.close()
