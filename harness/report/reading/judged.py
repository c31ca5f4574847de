"""The judgments the report reads (`--judgments`), keyed by (run, arm, item, turn, metric).

Two forms:
- a judgment set, the folder `harness judge --out SET` wrote (rundir/judgments/), read through
  `harness.judge.outcomes.read_outcomes` with its seal (`--seal`, default `SET.seal.json`) and
  re-checked with `harness.judge.verify.verify_set` first: every vote traced to its prompt and
  reply, or the set is refused. A flag rubric gives one judgment per reply (scale `flag_share`:
  the share of the judges' votes that flag it), a grading rubric one per answer (scale
  `correct_share`, family its LongMemEval question type); a pairwise rubric gives one
  `PairJudgment` per two arms' replies to a turn (scale `win_share`: arm_a's share of the votes).
- a JSONL file, one line per judged answer: `{"item", "arm", "run"?, "turn"?, "family"?,
  "metric"?, "correct": bool}` or `"score": number` with `"scale"?` ("1-5", "0/1", ...).

Each metric has one declared scale and is never averaged with another metric; a second judgment
for the same key is refused (never overwritten); nothing depends on the order of the lines.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from harness.errors import HarnessError
from rundir.jsonlines import read_lines
from rundir.judgments import JudgmentSet, open_seal, read_manifest, read_tasks, read_votes

# The scales a metric may declare, with the values each allows (None: any finite number).
SCALES: dict[str, tuple[float, float] | None] = {
    "0/1": (0.0, 1.0),
    "1-5": (1.0, 5.0),
    "1-10": (1.0, 10.0),
    "flag_share": (0.0, 1.0),
    "correct_share": (0.0, 1.0),
    "win_share": (0.0, 1.0),
    "score": None,
}


@dataclass(frozen=True)
class Judgment:
    """One judged answer of one arm (a per-arm metric)."""

    item: str
    arm: str
    turn: int | None
    family: str
    metric: str
    value: float  # 1/0 for correct/wrong, the score, or the share of judges that flag it
    binary: bool
    judge: str | None
    rubric_sha256: str | None
    run: str | None = None  # None in a JSONL line without `run`: resolved from the runs' turns
    scale: str = "0/1"
    source: str = ""  # where it was read: "FILE line N" or "SET judgment NAME"
    votes: str = ""  # what the judges said, for the drill-down
    axis: str | None = None  # the judging axis's status (a judgment set only)


@dataclass(frozen=True)
class PairJudgment:
    """One pairwise judgment: arm_a's share of the votes against arm_b on one turn."""

    run: str
    item: str
    turn: int
    metric: str
    arm_a: str
    arm_b: str
    value: float
    votes: str
    axis: str
    rubric_sha256: str | None
    family: str = "all"
    scale: str = "win_share"
    source: str = ""


@dataclass
class Judged:
    judgments: list[Judgment]
    pairs: list[PairJudgment] = field(default_factory=list)
    manifest: JudgmentSet | None = None  # a judgment set's manifest
    set_aside: list[str] = field(default_factory=list)


def load_judged(path: Path, seal: Path | None = None) -> Judged:
    if path.is_dir():
        return _load_set(path, seal or path.with_name(path.name + ".seal.json"))
    return Judged(_load_jsonl(path))


def _check_scale(where: str, metric: str, scale: str, value: float) -> None:
    if scale not in SCALES:
        raise ValueError(f"{where}: scale {scale!r} is not one of {', '.join(SCALES)}")
    bounds = SCALES[scale]
    if bounds is not None and not bounds[0] <= value <= bounds[1]:
        raise ValueError(f"{where}: {metric} = {value:g} is outside its scale {scale}")
    if scale == "0/1" and value not in (0.0, 1.0):
        raise ValueError(f"{where}: {metric} = {value:g} on the 0/1 scale")


def _load_jsonl(path: Path) -> list[Judgment]:
    out: list[Judgment] = []
    first_line: dict[tuple[object, ...], int] = {}
    scale_of: dict[str, tuple[str, int]] = {}
    for lineno, line in enumerate(read_lines(path), 1):
        if not line.strip():
            continue
        where = f"line {lineno}"
        row = json.loads(line)
        if not isinstance(row, dict) or "item" not in row or "arm" not in row:
            raise ValueError(f"{where}: every judgment needs `item` and `arm`")
        if "correct" in row:
            if not isinstance(row["correct"], bool):
                raise ValueError(f"{where}: `correct` must be true or false")
            value, scale = float(row["correct"]), str(row.get("scale") or "0/1")
        elif "score" in row:
            value, scale = float(row["score"]), str(row.get("scale") or "score")
        else:
            raise ValueError(f"{where}: needs `correct` (true/false) or `score` (a number)")
        metric = str(row.get("metric") or ("correct" if "correct" in row else "score"))
        _check_scale(where, metric, scale, value)
        seen = scale_of.setdefault(metric, (scale, lineno))
        if seen[0] != scale:
            raise ValueError(
                f"{where}: metric {metric!r} is on scale {scale} here but {seen[0]} on line "
                f"{seen[1]}: one metric has one scale (name the other metric differently)"
            )
        turn = row.get("turn")
        if turn is not None and (isinstance(turn, bool) or not isinstance(turn, int)):
            raise ValueError(f"{where}: `turn` must be a whole number")
        run = None if row.get("run") is None else str(row["run"])
        key = (run, str(row["arm"]), str(row["item"]), turn, metric)
        if key in first_line:
            raise ValueError(
                f"{where}: a second judgment of {metric!r} for arm {row['arm']!r}, item "
                f"{row['item']!r}, turn {turn} (first on line {first_line[key]}): never overwritten"
            )
        first_line[key] = lineno
        out.append(
            Judgment(
                item=str(row["item"]),
                arm=str(row["arm"]),
                turn=turn,
                family=str(row.get("family") or "all"),
                metric=metric,
                value=value,
                binary=scale == "0/1",
                judge=row.get("judge"),
                rubric_sha256=row.get("rubric_sha256"),
                run=run,
                scale=scale,
                source=f"{path.name} {where}",
                votes=str(row.get("judge") or "-"),
            )
        )
    return out


def _load_set(set_dir: Path, seal_path: Path) -> Judged:
    from harness.judge import read_outcomes, verify_set

    problems = verify_set(set_dir, seal_path)
    if problems:
        raise HarnessError(
            f"--judgments {set_dir}: not every vote traces to its prompt and reply, or the "
            f"manifest is not what they give: {problems[0]}"
            + (f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""),
            hint=f"run `harness judge --verify {set_dir}`; judge again if the set is damaged",
        )
    manifest = read_manifest(set_dir)
    outcomes = read_outcomes(set_dir, seal_path)
    rubric_sha = {r.name: r.sha256 for r in manifest.rubrics}
    votes = _vote_lines(set_dir, seal_path)
    judges = "+".join(sorted(p.name for p in manifest.judges))
    judgments = [
        Judgment(
            item=f.item,
            arm=f.arm,
            turn=f.turn,
            family="all",
            metric=f.metric,
            value=f.value,
            binary=False,
            judge=judges,
            rubric_sha256=rubric_sha.get(f.metric),
            run=f.run,
            scale=f.scale,
            source=f"{set_dir.name} {f.metric}/{f.item}/{f.turn}/{f.arm}",
            votes="\n".join(votes.get((f.metric, f.item, f.turn, (f.arm,)), [])) or str(f.votes),
            axis=f.axis,
        )
        for f in outcomes.flags
    ]
    judgments += [
        Judgment(
            item=g.item,
            arm=g.arm,
            turn=g.turn,
            family=g.question_type or "all",
            metric=g.metric,
            value=g.value,
            binary=False,
            judge="exact match" if g.method == "exact_match" else judges,
            rubric_sha256=rubric_sha.get(g.metric),
            run=g.run,
            scale=g.scale,
            source=f"{set_dir.name} {g.metric}/{g.item}/{g.turn}/{g.arm}",
            votes="normalised exact match"
            if g.method == "exact_match"
            else "\n".join(votes.get((g.metric, g.item, g.turn, (g.arm,)), [])) or str(g.votes),
            axis=g.axis,
        )
        for g in outcomes.grades
    ]
    pairs = [
        PairJudgment(
            run=p.run,
            item=p.item,
            turn=p.turn,
            metric=p.metric,
            arm_a=p.arm_a,
            arm_b=p.arm_b,
            value=p.value,
            votes="\n".join(votes.get((p.metric, p.item, p.turn, (p.arm_a, p.arm_b)), []))
            or str(p.votes),
            axis=p.axis,
            rubric_sha256=rubric_sha.get(p.metric),
            source=f"{set_dir.name} {p.metric}/{p.item}/{p.turn}",
        )
        for p in outcomes.pairs
    ]
    return Judged(judgments, pairs, manifest, list(outcomes.set_aside))


VoteKey = tuple[str, str, int, tuple[str, ...]]  # (rubric, item, turn, arms shown)
REPLY_SHOWN = 400  # characters of a judge's reply the drill-down shows beside its vote


def _reply_excerpt(set_dir: Path, reply_file: str | None) -> str:
    # The reply as the judge sent it (the set kept it byte for byte; verify_set checked its hash);
    # codes like "Reply 1" stay as the judge wrote them, the vote beside it names the arm.
    if not reply_file:
        return ""
    try:
        text = (set_dir / reply_file).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    text = " ".join(text.split())
    return text if len(text) <= REPLY_SHOWN else text[:REPLY_SHOWN] + "..."


def _vote_lines(set_dir: Path, seal_path: Path) -> dict[VoteKey, list[str]]:
    """Each confirmatory judgment's accepted votes in words ("alpha first: retrieval"), for the
    drill-down; arms named through the seal, sorted so the text does not hang on file order."""
    seal = open_seal(set_dir, seal_path)
    kept = [v for v in read_votes(set_dir) if v.status == "accepted"]
    accepted = {v.task: v.verdict for v in kept}
    replies = {v.task: _reply_excerpt(set_dir, v.reply_file) for v in kept}
    out: dict[VoteKey, list[str]] = defaultdict(list)
    for task in read_tasks(set_dir):
        if task.role != "confirmatory" or task.item is None or task.turn is None:
            continue
        arms = [seal.codes[c].arm for c in task.labels if c in seal.codes]
        verdict = accepted.get(task.id)
        if verdict is None:
            said = "no accepted vote"
        elif task.kind == "pairwise" and verdict.startswith("Reply"):
            said = arms[int(verdict[-1]) - 1]
        else:
            said = verdict
        order = f" {task.order}" if task.order else ""
        reply = replies.get(task.id)
        out[(task.rubric, task.item, task.turn, tuple(sorted(arms)))].append(
            f"{task.judge}{order}: {said}" + (f" (replied: {reply})" if reply else "")
        )
    return {k: sorted(v) for k, v in out.items()}
