"""Issue 24's scale figures: a synthetic LongMemEval-S-sized item (50 history sessions, 500
messages, about 115k tokens) ingested and asked in record mode by the `retrieval` and `mem0`
arms, on the local backend: seconds per item per arm, where the time goes, and the projected
time of 500 items.

    .venv/bin/python -m bench.memory_bench [--items 2] [--write BENCHMARKS.md]

Each arm runs alone (`harness record --arm NAME`) over `--items` items, each its own history of
50 sessions (so every item is ingested and snapshotted), once with the clock pinned by
libfaketime and once on the seam only (`HARNESS_FAKETIME=0`); an item's time is the gap between
two consecutive answered questions in the run's log (start-up paid once is left out). The mem0 arm
runs in `.cache/mem0-seam-venv` (mem0ai 2.2.1 with the seam's packages; made with uv on first
use), since the project's .venv does not carry mem0.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import platform
import random
import subprocess
import sys
import tempfile
import time
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from bench.markdown import replace_section

REPO = Path(__file__).resolve().parents[1]
SECTION = "Memory benchmarks: a 50-session item per arm"
MEM0_VENV = REPO / ".cache" / "mem0-seam-venv"
SESSIONS, MESSAGES = 50, 10  # LongMemEval-S: ~50 sessions, ~500 messages, ~115k tokens
_VOCABULARY = (
    "garden recipe travel budget laptop concert museum hiking sister weekend project deadline "
    "coffee bicycle library podcast marathon painting apartment insurance vacation keyboard "
    "neighbour festival spreadsheet journal camera violin bakery harbour"
)
WORDS = tuple(_VOCABULARY.split())


def _text(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words)).capitalize() + "."


def synthetic_entry(n: int) -> dict[str, Any]:
    """One LongMemEval entry: 50 sessions of 10 messages (~180 words each: ~115k tokens)."""
    rng = random.Random(n)
    start = datetime(2023, 1, 2, 9, 0)
    sessions, dates, ids = [], [], []
    for s in range(SESSIONS):
        turns: list[dict[str, Any]] = []
        for m in range(MESSAGES):
            role = "user" if m % 2 == 0 else "assistant"
            turns.append({"role": role, "content": _text(rng, 180)})
        if s == 37:
            turns[0] = {
                "role": "user",
                "content": f"My locker code is {4000 + n}.",
                "has_answer": True,
            }
        sessions.append(turns)
        when = start + timedelta(days=2 * s, hours=s % 7)
        dates.append(when.strftime("%Y/%m/%d (%a) %H:%M"))
        ids.append(f"s{n}_{s}" if s != 37 else f"answer_{n}")
    return {
        "question_id": f"bench{n:03d}",
        "question_type": "single-session-user",
        "question": "What is my locker code?",
        "answer": str(4000 + n),
        "question_date": (start + timedelta(days=120)).strftime("%Y/%m/%d (%a) %H:%M"),
        "haystack_session_ids": ids,
        "haystack_dates": dates,
        "haystack_sessions": sessions,
        "answer_session_ids": [f"answer_{n}"],
    }


def _ensure_mem0_venv() -> Path:
    python = MEM0_VENV / "bin" / "python"
    probe = [str(python), "-c", "import mem0, starlette, uvicorn"]
    if python.exists() and subprocess.run(probe, capture_output=True).returncode == 0:
        return python
    uv = [sys.executable, "-m", "uv"]
    subprocess.run([*uv, "venv", "--quiet", str(MEM0_VENV), "--python", "3.11"], check=True)
    packages = ["mem0ai==2.2.1", "qdrant-client==1.20.0", "starlette==1.10.0", "uvicorn==0.55.0"]
    subprocess.run(
        [*uv, "pip", "install", "--quiet", "--python", str(python), *packages], check=True
    )
    return python


def write_study(folder: Path, items: int) -> Path:
    import tomli_w

    folder.mkdir(parents=True, exist_ok=True)
    (folder / "longmemeval_s.json").write_text(
        json.dumps([synthetic_entry(n) for n in range(items)])
    )
    mem0 = _ensure_mem0_venv()
    study = {
        "name": "memory-bench",
        "items": {"format": "longmemeval", "path": "longmemeval_s.json"},
        "deadline_ms": 60000,
        "ingest_deadline_ms": 120000,
        "mask": ["messages.*.content~date"],
        "arms": {
            "retrieval": {"command": f"{sys.executable} -m arms.retrieval", "env": {}},
            "mem0": {
                "command": f"{mem0} -m arms.mem0",
                "env": {"PYTHONPATH": str(REPO), "ARM_MAX_TOKENS": "256"},
            },
        },
    }
    path = folder / "study.toml"
    path.write_text(tomli_w.dumps(study))
    return path


def run_arm(study: Path, arm: str, runs: Path, faketime: bool) -> dict[str, Any]:
    env = {**os.environ, "HARNESS_NO_PROGRESS": "1"}
    if not faketime:
        env["HARNESS_FAKETIME"] = "0"
    folder = runs / f"{arm}-{'faketime' if faketime else 'seam'}"
    command = [sys.executable, "-m", "harness.cli", "--log-json", "record", str(study)]
    command += ["--arm", arm, "--run-dir", str(folder), "--isolation", "local"]
    started = time.monotonic()
    done = subprocess.run(command, capture_output=True, text=True, env=env, cwd=REPO)
    wall = time.monotonic() - started
    if done.returncode != 0:
        raise SystemExit(f"{arm}: harness record failed:\n{done.stdout}\n{done.stderr[-3000:]}")
    ends = [
        datetime.fromisoformat(line["timestamp"])
        for line in map(_json, done.stderr.splitlines())
        if line and line.get("event") == "turn"
    ]
    (run,) = [p for p in folder.iterdir() if (p / "run.json").exists()]
    lines = [json.loads(x) for x in (run / "turns.jsonl").read_text().splitlines()]
    ingest = [x for x in lines if x.get("kind") == "ingestion"]
    shots = [x for x in lines if x.get("kind") == "snapshot"]
    answers = [x for x in lines if "kind" not in x]
    calls = [json.loads(x) for x in (run / "calls.jsonl").read_text().splitlines()]
    questions = [json.loads(x) for x in (run / "questions.jsonl").read_text().splitlines()]
    header = json.loads((run / "run.json").read_text())
    gaps = [(b - a).total_seconds() for a, b in itertools.pairwise(ends)]
    items = len(answers)
    return {
        "arm": arm,
        "wall_s": wall,
        "items": items,
        "per_item_s": min(gaps) if gaps else wall,
        "ingest_s": sum(x["seconds"] for x in ingest) / items,
        "ingest_max_s": max(x["seconds"] for x in ingest),
        "snapshot_s": sum(x["seconds"] for x in shots) / items,
        "snapshot_mb": sum(x["bytes"] for x in shots) / items / 1e6,
        "answer_s": sum(x["last_token_s"] or 0 for x in answers) / items,
        "calls": Counter(c.get("phase") or "answer" for c in calls),
        "evidence": sum(bool(q["evidence_reached"]) for q in questions),
        "clock": header["study"].get("clock_pinning"),
    }


def _json(line: str) -> dict[str, Any] | None:
    try:
        value = json.loads(line)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def section(results: list[dict[str, Any]]) -> str:
    when = datetime.now(UTC).strftime("%Y-%m-%d")
    rows = []
    for r in results:
        other = r["per_item_s"] - r["ingest_s"] - r["snapshot_s"] - r["answer_s"]
        rows.append(
            f"| {r['arm']} | {r['clock']} | {r['per_item_s']:.1f} | {r['ingest_s']:.1f} "
            f"(max session {r['ingest_max_s']:.2f}) | {r['snapshot_s']:.2f} "
            f"({r['snapshot_mb']:.1f} MB) | "
            f"{r['answer_s']:.2f} | {other:.1f} | {r['calls']['ingest'] / r['items']:.0f} | "
            f"{r['per_item_s'] * 500 / 3600:.1f} h |"
        )
    return "\n".join(
        [
            f"## {SECTION}",
            "",
            f"`python -m bench.memory_bench --items {results[0]['items']}` on {when}, "
            f"{platform.machine()} with {os.cpu_count()} cores, Python "
            f"{platform.python_version()}, record mode, local backend. "
            "One synthetic LongMemEval-S-sized item: 50 history sessions of 10 messages (about "
            "115k tokens), each ingested at its own date, then a snapshot of the arm's state "
            "folder, the arm restarted on a checked copy, and the question. Per item: the gap "
            "between two consecutive answered questions of one arm (start-up left out).",
            "",
            "| arm | clock pinning | s per item | ingestion at the seam, s | snapshot, s | "
            "answer, s | other, s | ingest calls per item | 500 items |",
            "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
            *rows,
            "",
            '"other" is the harness\'s own time per item: pinning the clock for each of the 50 '
            "sessions (libfaketime's cache is waited out after every write: half a second per "
            "session on average, up to a second; seam-only pinning, `HARNESS_FAKETIME=0`, "
            "writes no file and waits for nothing), two arm restarts (an empty folder for "
            "ingestion, then the copy) and two stops, and the bookkeeping. Under libfaketime the "
            "arm itself is slower too (its ingestion at the seam above). Stubs answer in "
            "milliseconds: a live run adds the vendors' time for every ingestion call, which "
            "for mem0 is three calls per session (extraction, embeddings, update).",
        ]
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=2)
    parser.add_argument("--arm", action="append", default=[])
    parser.add_argument("--write", type=Path, default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="memory-bench-") as scratch:
        study = write_study(Path(scratch) / "study", args.items)
        runs = Path(scratch) / "runs"
        results = [
            run_arm(study, arm, runs, faketime)
            for arm in args.arm or ["retrieval", "mem0"]
            for faketime in (True, False)
        ]
    text = section(results)
    print(text)
    if args.write:
        replace_section(args.write, SECTION, text)


if __name__ == "__main__":
    main()
