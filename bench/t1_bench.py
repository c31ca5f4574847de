"""Issue 37's yardstick: T1 (500 LongMemEval-S questions) at its real size, in record mode with
the shipped `retrieval` arm, projected from a run of N items.

    .venv/bin/python -m bench.t1_bench [--items 4] [--workers 4] [--variant default seam-only]
        [--src before=/tmp/t1-before] [--write BENCHMARKS.md]
    .venv/bin/python -m bench.t1_bench --items 4 --compare-workers 1 4  # same runs? (t1_same.py)

The file: a seeded LongMemEval-S-shaped JSON list at the published size (500 questions, about
50 sessions and 115k tokens per history, ~250 MB; made once and kept in bench/results/), its
question types in the published proportions, 30 abstention questions, each question's evidence
in one to three has_answer turns. The run: `harness record` draws `--items` questions from it
(the whole file is read, as T1 reads it) and records them with `--workers` workers on the local
backend, default settings (libfaketime when installed); `seam-only` sets `HARNESS_FAKETIME=0`.
`--src NAME=DIR` runs another checkout (a `git worktree` of an older commit: the baseline) in the
same bench, so ratios compare runs made under the same load.

Printed per run: the whole command's wall time, the items' span (the first call's start to the
last call's end, start-up left out) and its 500-item projection, and the CPU time of each kind
of process (the harness, the proxy, the arms, other helpers), sampled from /proc every 0.2 s
(a process's last fraction of a sampling interval before it exits is missed).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from bench.markdown import replace_section

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "bench" / "results"
SECTION = "T1 at real size"
TICKS = os.sysconf("SC_CLK_TCK")
# LongMemEval-S's published mix (500 questions) and its 30 abstention questions.
TYPES = {
    "single-session-user": 70,
    "single-session-assistant": 56,
    "single-session-preference": 30,
    "temporal-reasoning": 133,
    "knowledge-update": 78,
    "multi-session": 133,
}
ABSTENTIONS = 30
TOKENS_PER_HISTORY = 115_000
_WORDS = (
    "the a to and of I you it is in that for my on with was have be this but we can so what "
    "not at just like about if your they do get all one or would there out will up me when "
    "time some know think really also because more good make go any how now well see want "
    "work day need new people first take back way much most even year something other only "
    "after garden recipe travel budget laptop concert museum hiking sister weekend project "
    "deadline coffee bicycle library podcast marathon painting apartment insurance vacation "
    "keyboard neighbour festival spreadsheet journal camera violin bakery harbour doctor "
    "birthday dinner flight hotel ticket movie book class teacher office meeting friend dog "
    "cat kitchen car train city market weather morning evening plan idea advice suggest "
    "recommend help try start finish buy sell cook read write watch visit call email price "
    "store shop team game song music guitar piano yoga gym run swim walk park beach mountain"
)
WORDS = tuple(_WORDS.split())
FACTS = (
    ("What is my locker code?", "My locker code is {n}.", "{n}"),
    ("How many miles did I run last week?", "I ran {n} miles last week.", "{n}"),
    ("What room number is my dentist in?", "My dentist moved to room {n}.", "{n}"),
    ("How much did the new bike cost?", "The new bike cost me {n} dollars.", "{n} dollars"),
)


def _sentence(rng: random.Random, words: int) -> str:
    return " ".join(rng.choices(WORDS, k=words)).capitalize() + "."


def entry(n: int, seed: int, qtype: str) -> dict[str, Any]:
    """One question with its own history: ~50 sessions of 8-14 messages, ~115k tokens
    (harness's estimate: a token per four characters)."""
    rng = random.Random(f"{seed}:{n}")
    count = rng.randint(45, 55)
    shape = [rng.choice((8, 10, 10, 12, 14)) for _ in range(count)]
    per_message = TOKENS_PER_HISTORY * 4 / sum(shape)  # characters
    words = max(8, round(per_message / 6.2))
    start = datetime(2023, 1, 2, 8, 0) + timedelta(days=rng.randint(0, 300))
    question, said, answer = FACTS[n % len(FACTS)]
    value = str(rng.randint(100, 9999))
    abstain = n < ABSTENTIONS
    evidence = sorted(rng.sample(range(count), 1 if qtype.startswith("single") else 2))
    ids, dates, sessions = [], [], []
    when = start
    for s, messages in enumerate(shape):
        turns: list[dict[str, Any]] = []
        for m in range(messages):
            role = "user" if m % 2 == 0 else "assistant"
            turns.append({"role": role, "content": _sentence(rng, words)})
        if s in evidence and not abstain:
            turns[0] = {"role": "user", "content": said.format(n=value), "has_answer": True}
        ids.append(f"answer_{n}_{s}" if s in evidence else f"s{n}_{s}")
        dates.append(when.strftime("%Y/%m/%d (%a) %H:%M"))
        sessions.append(turns)
        when += timedelta(
            days=rng.randint(0, 4), hours=rng.randint(1, 20), minutes=rng.randint(0, 59)
        )
    return {
        "question_id": f"t1q{n:03d}" + ("_abs" if abstain else ""),
        "question_type": qtype,
        "question": question,
        "answer": answer.format(n=value),
        "question_date": (when + timedelta(days=3)).strftime("%Y/%m/%d (%a) %H:%M"),
        "haystack_session_ids": ids,
        "haystack_dates": dates,
        "haystack_sessions": sessions,
        "answer_session_ids": [ids[s] for s in evidence],
    }


def dataset(items: int, seed: int) -> Path:
    """The seeded file, made once per (items, seed): written a question at a time."""
    path = RESULTS / f"t1-longmemeval-s-{items}-{seed}.json"
    if path.exists():
        return path
    RESULTS.mkdir(parents=True, exist_ok=True)
    types = [t for t, count in TYPES.items() for _ in range(count)]
    random.Random(seed).shuffle(types)
    types = (types * (items // len(types) + 1))[:items]
    tmp = path.with_suffix(".tmp")
    with tmp.open("w", encoding="utf-8") as out:
        out.write("[")
        for n, qtype in enumerate(types):
            out.write(("," if n else "") + json.dumps(entry(n, seed, qtype)))
        out.write("]")
    tmp.replace(path)
    return path


# The engine arms run under the engines venv (scripts/engine-venvs), as their tests run them.
ENGINES_PYTHON = Path(
    os.environ.get("HARNESS_ENGINES_PYTHON", REPO / ".cache" / "engines-venv" / "bin" / "python")
)
ENGINE_ENV = {"MEM0_TELEMETRY": "false", "GRAPHITI_TELEMETRY_ENABLED": "false"}


def write_study(
    folder: Path, data: Path, items: int, seed: int, src: Path, arm: str = "retrieval"
) -> Path:
    import tomli_w

    folder.mkdir(parents=True, exist_ok=True)
    python = sys.executable if arm == "retrieval" else str(ENGINES_PYTHON)
    env = {"PYTHONPATH": str(src)} | ({} if arm == "retrieval" else ENGINE_ENV)
    study = {
        "name": "t1-bench",
        "items": {"format": "longmemeval", "path": str(data), "n": items, "seed": seed},
        "deadline_ms": 60000,
        # An engine ingests a ~2,300-token session in several vendor calls (mem0 embeds each
        # memory; graphiti extracts, resolves and summarises): minutes on a loaded machine.
        "ingest_deadline_ms": 120000 if arm == "retrieval" else 600000,
        "arms": {arm: {"command": f"{python} -m arms.{arm}", "env": env}},
    }
    path = folder / "study.toml"
    path.write_text(tomli_w.dumps(study))
    return path


@dataclass
class Sampler:
    """CPU seconds per process (utime + stime from /proc/PID/stat) of a process tree."""

    root: int
    cpu: dict[int, float] = field(default_factory=dict)
    kind: dict[int, str] = field(default_factory=dict)

    def sample(self) -> None:
        parents: dict[int, int] = {}
        stats: dict[int, list[str]] = {}
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                text = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            fields = text[text.rindex(")") + 2 :].split()
            pid = int(entry)
            parents[pid], stats[pid] = int(fields[1]), fields
        tree = {self.root}
        for pid in sorted(parents):
            chain: list[int] = []
            at = pid
            while at in parents and at not in tree and at > 1 and len(chain) < 64:
                chain.append(at)
                at = parents[at]
            if at in tree:
                tree.update(chain)
        for pid in tree & stats.keys():
            fields = stats[pid]
            self.cpu[pid] = (int(fields[11]) + int(fields[12])) / TICKS
            # Read again each time: a child sampled between fork and exec still shows the
            # harness's command line, and counted the arm's whole CPU as the harness's.
            if pid not in self.kind or self.kind[pid] == "harness":
                self.kind[pid] = _kind(pid) if pid != self.root else "harness"

    def per_kind(self) -> dict[str, float]:
        out: dict[str, float] = {}
        for pid, seconds in self.cpu.items():
            out[self.kind[pid]] = out.get(self.kind[pid], 0.0) + seconds
        return out


def _kind(pid: int) -> str:
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return "other"
    text = " ".join(a.decode(errors="replace") for a in argv)
    if "harness.cli" in text:
        return "harness"
    if "-m proxy" in text or "mitmdump" in text:
        return "proxy"
    if "arms." in text:
        return "arm"
    return "other"


def record(
    study: Path, runs: Path, workers: int, variant: str, src: Path, profile: Path | None = None
) -> dict[str, Any]:
    env = {**os.environ, "HARNESS_NO_PROGRESS": "1", "PYTHONPATH": str(src)}
    if variant == "seam-only":
        env["HARNESS_FAKETIME"] = "0"
    # --profile: the harness process under cProfile (its CPU figures are then inflated by it).
    command = [sys.executable] + (["-m", "cProfile", "-o", str(profile)] if profile else [])
    command += ["-m", "harness.cli", "record", str(study), "--run-dir", str(runs)]
    command += ["--isolation", "local", "--workers", str(workers)]
    started = time.monotonic()
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=src
    )
    sampler = Sampler(process.pid)
    peak_rss = 0
    while process.poll() is None:
        sampler.sample()
        peak_rss = max(peak_rss, _rss(process.pid))
        time.sleep(0.2)
    wall = time.monotonic() - started
    out, err = process.communicate()
    if process.returncode != 0:
        raise SystemExit(f"{variant}: the run failed\n{out.decode()}{err.decode()[-3000:]}")
    (run,) = [p for p in runs.iterdir() if (p / "run.json").exists()]
    calls = [json.loads(x) for x in (run / "calls.jsonl").read_text().splitlines() if x]
    span = max(c["timing"]["end"] for c in calls) - min(c["timing"]["start"] for c in calls)
    questions = [json.loads(x) for x in (run / "questions.jsonl").read_text().splitlines() if x]
    header = json.loads((run / "run.json").read_text())
    return {
        "wall": wall,
        "span": span,
        "cpu": sampler.per_kind(),
        "rss_mb": peak_rss / 1e6,
        "items": len(questions),
        "evidence": sum(bool(q.get("evidence_reached")) for q in questions),
        "clock": header["study"].get("clock_pinning"),
        "calls": len(calls),
        "run": run,  # read while the bench's temporary folder lasts (bench/t1_same.py)
    }


def _rss(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def row(name: str, r: dict[str, Any], workers: int) -> str:
    cpu = r["cpu"]
    total = sum(cpu.values()) or 1.0
    per_item = r["span"] / r["items"]
    return (
        f"| {name} | {r['clock']} | {workers} | {r['wall']:.0f} | {r['span']:.0f} | "
        f"{per_item:.1f} | {500 * per_item / 3600:.2f} h | {cpu.get('harness', 0):.1f} | "
        f"{cpu.get('proxy', 0):.1f} | {cpu.get('arm', 0):.1f} | {cpu.get('other', 0):.1f} | "
        f"{100 * cpu.get('harness', 0) / total:.1f}% | {r['rss_mb']:.0f} | "
        f"{r['evidence']}/{r['items']} |"
    )


HEAD = (
    "| run | clock | workers | whole s | items span s | s per item | 500 items | harness CPU s "
    "| proxy CPU s | arms CPU s | other CPU s | harness share | harness peak RSS MB | "
    "evidence reached |\n|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
)


MEMORY_ARM = REPO / "tests" / "toy_arms" / "memory_arm.py"
WAIT_S = 1.0  # each session's ingestion: the toy arm waits this long (an engine's vendor call)


def overlap(workers: int, src: Path = REPO, sessions: int = 12) -> tuple[float, int]:
    """How many of the arms' waits overlap with `workers` workers: the toy memory arm
    (tests/toy_arms/memory_arm.py) waits WAIT_S per session, `workers` items of `sessions`
    sessions each, clock on the seam only. Every session is dated 2023-01-01 00:00 UTC, so the
    arm's `lag=` (its real clock less the session's date) is the real time each wait began.
    Returns (the total of the waits / their span, the waits counted)."""
    day = "2023/01/01 (Sun) 00:00"
    entries = []
    for n in range(workers):
        ids = [f"o{n}_{s}" for s in range(sessions)]
        history = [[{"role": "user", "content": f"hello {n} {s}"}] for s in range(sessions)]
        entries.append(
            {
                "question_id": f"ov{n:02d}",
                "question_type": "single-session-user",
                "question": "hello?",
                "answer": "hello",
                "question_date": "2023/01/02 (Mon) 00:00",
                "haystack_session_ids": ids,
                "haystack_dates": [day] * sessions,
                "haystack_sessions": history,
                "answer_session_ids": [ids[0]],
            }
        )
    import tomli_w

    with tempfile.TemporaryDirectory(prefix="t1-overlap-") as tmp:
        folder = Path(tmp)
        (folder / "overlap.json").write_text(json.dumps(entries))
        study = {
            "name": "t1-overlap",
            "items": {"format": "longmemeval", "path": "overlap.json"},
            "deadline_ms": 60000,
            "arms": {
                "toy": {
                    "command": f"{sys.executable} {MEMORY_ARM}",
                    "env": {"MEMORY_ARM_INGEST_S": str(WAIT_S), "PYTHONPATH": str(src)},
                }
            },
        }
        (folder / "study.toml").write_text(tomli_w.dumps(study))
        env = {**os.environ, "HARNESS_NO_PROGRESS": "1", "HARNESS_FAKETIME": "0"}
        env["PYTHONPATH"] = str(src)
        command = [sys.executable, "-m", "harness.cli", "record", str(folder / "study.toml")]
        command += ["--run-dir", str(folder / "runs"), "--isolation", "local"]
        command += ["--workers", str(workers)]
        done = subprocess.run(command, capture_output=True, text=True, env=env, cwd=src)
        if done.returncode != 0:
            raise SystemExit(f"overlap: the run failed\n{done.stdout}{done.stderr[-3000:]}")
        (run,) = [p for p in (folder / "runs").iterdir() if (p / "run.json").exists()]
        starts = []
        for line in (run / "turns.jsonl").read_text().splitlines():
            record = json.loads(line)
            if "kind" not in record:  # an answer: its text lists the history's ingestions
                starts += [float(w[4:]) for w in record["text"].split() if w.startswith("lag=")]
    span = max(starts) + WAIT_S - min(starts)
    return len(starts) * WAIT_S / span, len(starts)


def _compare_workers(args: argparse.Namespace) -> None:
    """--compare-workers A B: the same requests, snapshots and answers (bench/t1_same.py)."""
    from bench.t1_same import compare_workers

    a, b = args.compare_workers
    data = dataset(args.file_items, args.seed)
    sources = [(s.split("=", 1)[0], Path(s.split("=", 1)[1])) for s in args.src]
    source = sources[0] if args.skip_this and sources else ("this", REPO)
    rows, same = compare_workers(data, args.items, args.seed, (a, b), args.variant[0], source)
    print(same.line(a, b))
    title = f"{SECTION}: {a} against {b} workers"
    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    text = "\n".join(
        [
            f"## {title}",
            "",
            f"Measured {when}; {args.items} items of the seeded file, retrieval arm, "
            f"{args.variant[0]} clock, record mode, local backend, checkout {source[0]}. "
            "Repeat with:",
            "",
            "```sh",
            "python -m bench.t1_bench " + " ".join(sys.argv[1:]),
            "```",
            "",
            HEAD,
            *rows,
            "",
            f"{same.line(a, b)}: " + ("the same." if same.same else "NOT the same."),
        ]
    )
    print(text)
    if args.write:
        replace_section(args.write, title, text)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=4, help="questions drawn and recorded")
    parser.add_argument("--file-items", type=int, default=500, help="questions in the file")
    parser.add_argument("--seed", type=int, default=37)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument(
        "--variant", nargs="+", default=["default"], choices=["default", "seam-only"]
    )
    parser.add_argument(
        "--arm",
        default="retrieval",
        choices=["retrieval", "mem0", "graphiti"],
        help="the arm recorded (mem0 and graphiti under the engines venv)",
    )
    parser.add_argument("--src", action="append", default=[], help="NAME=DIR: another checkout")
    parser.add_argument("--skip-this", action="store_true", help="run only the --src checkouts")
    parser.add_argument("--write", type=Path, default=None)
    parser.add_argument(
        "--profile", type=Path, default=None, help="write the harness process's cProfile here"
    )
    parser.add_argument(
        "--overlap", type=int, default=0, help="only measure N workers' overlapping waits"
    )
    parser.add_argument(
        "--compare-workers",
        type=int,
        nargs=2,
        metavar=("A", "B"),
        help="only record the items with A and with B workers and compare the runs",
    )
    args = parser.parse_args()
    if args.compare_workers:
        _compare_workers(args)
        return
    if args.overlap:
        checkouts = [("this", REPO)] + [
            (s.split("=", 1)[0], Path(s.split("=", 1)[1])) for s in args.src
        ]
        for name, src in checkouts:
            overlapped, waits = overlap(args.overlap, src)
            print(
                f"{name}: workers {args.overlap}: {waits} waits of {WAIT_S:g} s, "
                f"{overlapped:.2f} at once ({overlapped / args.overlap:.2f} x {args.overlap})",
                flush=True,
            )
        return
    made = time.monotonic()
    data = dataset(args.file_items, args.seed)
    print(f"dataset {data} ({data.stat().st_size / 1e6:.0f} MB, {time.monotonic() - made:.0f} s)")
    sources = [] if args.skip_this else [("this", REPO)]
    sources += [(s.split("=", 1)[0], Path(s.split("=", 1)[1])) for s in args.src]
    rows = []
    loads = [os.getloadavg()[0]]
    with tempfile.TemporaryDirectory(prefix="t1-bench-") as tmp:
        for name, src in sources:
            for variant in args.variant:
                label = f"{name}, {variant}" + ("" if args.arm == "retrieval" else f", {args.arm}")
                folder = Path(tmp) / label.replace(", ", "-")
                study = write_study(folder, data, args.items, args.seed, src, args.arm)
                result = record(study, folder / "runs", args.workers, variant, src, args.profile)
                loads.append(os.getloadavg()[0])
                rows.append(row(label, result, args.workers))
                print(rows[-1], flush=True)
    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    title = SECTION if args.arm == "retrieval" else f"{SECTION}: the {args.arm} arm"
    command = "python -m bench.t1_bench " + " ".join(sys.argv[1:])
    text = "\n".join(
        [
            f"## {title}",
            "",
            f"Measured {when} on {os.cpu_count()} cores, Python {platform.python_version()}; "
            f"load average {min(loads):.2f} to {max(loads):.2f} (other work shares this "
            f"machine). {args.items} of the seeded file's {args.file_items} questions, {args.arm} "
            "arm, record mode, local backend. Repeat with:",
            "",
            "```sh",
            command,
            "```",
            "",
            HEAD,
            *rows,
        ]
    )
    print(text)
    if args.write:
        replace_section(args.write, title, text)


if __name__ == "__main__":
    main()
