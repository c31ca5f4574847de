"""Re-checking a judgment set: every vote traced to a planned prompt and a kept reply, and every
field the manifest derives from them computed again.

What it checks, from the set alone: the task, vote and exact-match files are the ones the
manifest hashed; every task's prompt file is there with its hash; every vote names a planned task
and that task's judge and prompt hash, and carries that judge's pins; every reply file is there
with its hash, and reading it again (with the judge's pins from the manifest) gives the status
and verdict the vote records. Then, with the set's seal (default SET.seal.json beside it): the
seal is the set's and binds this judgments.json by its hash, and every derived field of the
manifest (bars, the third pass, the running watch and halts, stability, A/A, set-asides, axis
statuses) is what the stage's flow gives from the tasks and votes (recheck.py), else the field
is named. Each problem starts with the file it is in, relative to the set (the seal's by path).
"""

from __future__ import annotations

from pathlib import Path

from harness.judge.parse import parse_reply
from harness.judge.recheck import recheck
from rundir.errors import RunDirError
from rundir.judgments import (
    EXACT_FILE,
    PROMPTS_DIR,
    TASKS_FILE,
    VOTES_FILE,
    JudgmentSet,
    JudgmentTask,
    Vote,
    read_manifest,
    read_seal,
    read_tasks,
    read_votes,
    seal_binding,
    sha256_bytes,
)


def default_seal(set_dir: Path) -> Path:
    """Where `harness judge` writes a set's seal unless told otherwise."""
    return set_dir.parent / f"{set_dir.name}.seal.json"


def _sha(path: Path) -> str | None:
    try:
        return sha256_bytes(path.read_bytes())
    except OSError:
        return None


def verify_set(set_dir: Path, seal_path: Path | None = None) -> list[str]:
    try:
        manifest = read_manifest(set_dir)
        planned = read_tasks(set_dir)
        votes = read_votes(set_dir)
    except RunDirError as e:
        return [str(e.message)]
    problems = _traced(set_dir, manifest, {t.id: t for t in planned}, votes)
    if problems:
        return problems  # a manifest is derived from traced votes only
    sealed = seal_path or default_seal(set_dir)
    try:
        seal = read_seal(set_dir, sealed)
    except RunDirError as e:
        return [f"{e.message} ({e.hint})" if e.hint else str(e.message)]
    unbound = seal_binding(set_dir, sealed, seal)
    # Recomputed even when the seal already refuses the manifest: the fields edited are named.
    return ([unbound] if unbound else []) + recheck(set_dir, manifest, planned, votes, seal)


def _traced(
    set_dir: Path, manifest: JudgmentSet, tasks: dict[str, JudgmentTask], votes: list[Vote]
) -> list[str]:
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
