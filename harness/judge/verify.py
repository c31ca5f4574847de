"""Re-checking a judgment set: every vote traced to a planned prompt and a kept reply.

What it checks, from the set alone: the task, vote and exact-match files are the ones the
manifest hashed; every task's prompt file is there with its hash; every vote names a planned task
and that task's judge and prompt hash, and carries that judge's pins; every reply file is there
with its hash, and reading it again (with the judge's pins from the manifest) gives the status
and verdict the vote records. Each problem starts with the file it is in, relative to the set.
"""

from __future__ import annotations

from pathlib import Path

from harness.judge.parse import parse_reply
from rundir.errors import RunDirError
from rundir.judgments import (
    EXACT_FILE,
    PROMPTS_DIR,
    TASKS_FILE,
    VOTES_FILE,
    read_manifest,
    read_tasks,
    read_votes,
    sha256_bytes,
)


def _sha(path: Path) -> str | None:
    try:
        return sha256_bytes(path.read_bytes())
    except OSError:
        return None


def verify_set(set_dir: Path) -> list[str]:
    try:
        manifest = read_manifest(set_dir)
        tasks = {t.id: t for t in read_tasks(set_dir)}
        votes = read_votes(set_dir)
    except RunDirError as e:
        return [str(e.message)]
    problems = []
    if _sha(set_dir / TASKS_FILE) != manifest.tasks_sha256:
        problems.append(f"{TASKS_FILE} is not the file the manifest hashed")
    if _sha(set_dir / VOTES_FILE) != manifest.votes_sha256:
        problems.append(f"{VOTES_FILE} is not the file the manifest hashed")
    if manifest.exact_sha256 is not None and _sha(set_dir / EXACT_FILE) != manifest.exact_sha256:
        problems.append(f"{EXACT_FILE} is not the file the manifest hashed")
    if manifest.exact_sha256 is None and (set_dir / EXACT_FILE).exists():
        problems.append(f"{EXACT_FILE} is in the set but not in its manifest")
    pins = {pin.name: pin for pin in manifest.judges}
    for task in tasks.values():
        if _sha(set_dir / PROMPTS_DIR / f"{task.id}.txt") != task.prompt_sha256:
            problems.append(
                f"{PROMPTS_DIR}/{task.id}.txt: task {task.id}: its prompt file is missing or "
                "changed"
            )
        if task.judge not in pins:
            problems.append(
                f"{TASKS_FILE}: task {task.id}: judge {task.judge!r} is not pinned in the manifest"
            )
    for vote in votes:
        where = f"{VOTES_FILE}: vote {vote.task}#{vote.attempt}"
        planned = tasks.get(vote.task)
        if planned is None:
            problems.append(f"{where}: no such task was planned")
            continue
        task = planned
        if vote.judge != task.judge or vote.prompt_sha256 != task.prompt_sha256:
            problems.append(f"{where}: its judge or prompt hash is not its task's")
        pin = pins.get(task.judge)
        if pin is not None and vote.engine is not None:
            logged = (vote.engine, vote.model, vote.effort)
            if logged != (pin.engine, pin.model, pin.effort):
                problems.append(f"{where}: its logged pins {logged} are not judge {pin.name}'s")
        if vote.reply_file is None:
            if vote.status != "client_failed":
                problems.append(f"{where}: {vote.status} without a reply")
            continue
        path = set_dir / vote.reply_file
        if _sha(path) != vote.reply_sha256:
            problems.append(
                f"{vote.reply_file}: vote {vote.task}#{vote.attempt}: its reply file is missing "
                "or changed"
            )
            continue
        if task.judge not in pins:
            continue
        parsed = parse_reply(path.read_text(encoding="utf-8"), pins[task.judge], task.kind)
        verdict = parsed.verdict if parsed.status == "accepted" else None
        if (parsed.status, verdict) != (vote.status, vote.verdict):
            problems.append(
                f"{where}: the reply reads as {parsed.status} {verdict}, the vote says "
                f"{vote.status} {vote.verdict}"
            )
    return problems
