"""Sending prompt files to judges: re-asking a reply that cannot be used, and halting a rubric
whose mixed-in controls show its judges stopped catching them.

A reply is kept whatever it says (replies/<task>.<attempt>.txt) and one vote line tells what was
made of it. A reply that is unparseable, or whose header names another engine, model or effort,
is discarded and the prompt asked again, up to `attempts` times; after that the task has no vote
and its judgment is set aside (stage.py). Tasks are sent in a seeded shuffled order, so a control
is not told apart by when it comes.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from harness.judge.judges import Judge, JudgeClient, JudgeError
from harness.judge.parse import parse_reply
from harness.judge.progress import task_done, tasks_added
from rundir.judgments import PROMPTS_DIR, REPLIES_DIR, JudgmentTask, Vote, VoteLog, sha256_bytes

RUNNING_MIN_CONTROLS = 10
RUNNING_BAR = 0.90


@dataclass
class RunningDetection:
    """Detection of the controls mixed into the confirmatory set, per judge and rubric, as their
    votes arrive: below the bar after enough controls, the rubric's sending halts."""

    minimum: int = RUNNING_MIN_CONTROLS
    bar: float = RUNNING_BAR
    seen: dict[tuple[str, str], list[bool]] = field(default_factory=dict)
    halted: dict[str, str] = field(default_factory=dict)  # rubric -> why
    lock: threading.Lock = field(default_factory=threading.Lock)

    def record(self, task: JudgmentTask, verdict: str) -> None:
        if task.role != "control" or task.phase != "confirmatory" or task.expect is None:
            return
        with self.lock:
            caught = self.seen.setdefault((task.judge, task.rubric), [])
            caught.append(verdict == task.expect)
            rate = sum(caught) / len(caught)
            if len(caught) >= self.minimum and rate < self.bar and task.rubric not in self.halted:
                self.halted[task.rubric] = (
                    f"halted: judge {task.judge} caught {sum(caught)} of {len(caught)} mixed-in "
                    f"controls of {task.rubric} ({rate:.2f} < {self.bar:.2f})"
                )


def ask_task(
    set_dir: Path,
    task: JudgmentTask,
    judge: Judge,
    client: JudgeClient,
    attempts: int,
    log: VoteLog,
    on_accepted: Callable[[Vote], None] | None = None,
) -> Vote | None:
    """Ask until a reply is accepted (returned) or `attempts` are spent (None). `on_accepted`
    runs as the accepted vote is logged, in the log's order (the running watch: a re-check
    replays votes.jsonl in that order and must reach the same halt)."""
    prompt = set_dir / PROMPTS_DIR / f"{task.id}.txt"
    # Every call is logged with the pins of the judge asked and, for an HTTP judge, its tokens
    # and cost at the price table: this line says which model was asked, at what effort, and
    # what it cost, for each vote (docs/judging.md, "Billing").
    pins = {"engine": judge.pin.engine, "model": judge.pin.model, "effort": judge.pin.effort}
    for attempt in range(1, attempts + 1):
        started = time.monotonic()
        reply_file = reply_sha = None
        try:
            answer = client.ask(prompt)
        except JudgeError as e:
            vote = Vote(
                task=task.id,
                judge=judge.name,
                attempt=attempt,
                prompt_sha256=task.prompt_sha256,
                reply_file=None,
                reply_sha256=None,
                status="client_failed",
                detail=str(e),
                elapsed_s=time.monotonic() - started,
                **pins,
            )
        else:
            text = answer.text
            reply_file = f"{REPLIES_DIR}/{task.id}.{attempt}.txt"
            data = text.encode("utf-8")
            (set_dir / reply_file).write_bytes(data)
            reply_sha = sha256_bytes(data)
            parsed = parse_reply(text, judge.pin, task.kind)
            vote = Vote(
                task=task.id,
                judge=judge.name,
                attempt=attempt,
                prompt_sha256=task.prompt_sha256,
                reply_file=reply_file,
                reply_sha256=reply_sha,
                status=parsed.status,
                verdict=parsed.verdict if parsed.status == "accepted" else None,
                detail=parsed.detail,
                elapsed_s=time.monotonic() - started,
                input_tokens=answer.input_tokens,
                output_tokens=answer.output_tokens,
                cost_usd=answer.cost_usd,
                unpriced=answer.unpriced,
                **pins,
            )
        accepted = vote.status == "accepted"
        log.append(vote, partial(on_accepted, vote) if accepted and on_accepted else None)
        if accepted:
            return vote
    return None


def send(
    set_dir: Path,
    tasks: list[JudgmentTask],
    judges: dict[str, Judge],
    log: VoteLog,
    *,
    attempts: int,
    jobs: int,
    running: RunningDetection | None = None,
    progress: Callable[[int], None] | None = None,
) -> dict[str, Vote]:
    """Ask every task (skipping those of a rubric halted meanwhile); the accepted vote by task."""
    clients = {name: judge.client() for name, judge in judges.items()}
    accepted: dict[str, Vote] = {}
    lock = threading.Lock()
    tasks_added(len(tasks))

    def one(task: JudgmentTask) -> None:
        try:
            ask_one(task)
        finally:
            task_done()

    def ask_one(task: JudgmentTask) -> None:
        if running is not None and task.rubric in running.halted:
            return

        def watch(vote: Vote) -> None:
            if running is not None and vote.verdict is not None:
                running.record(task, vote.verdict)

        vote = ask_task(
            set_dir, task, judges[task.judge], clients[task.judge], attempts, log, watch
        )
        if vote is None:
            return
        with lock:
            accepted[task.id] = vote
            if progress is not None:
                progress(len(accepted))

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        for future in [pool.submit(one, task) for task in tasks]:
            future.result()
    return accepted
