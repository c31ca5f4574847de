"""A hostile test judge that looks around before it answers:
`python peeking_judge.py --look ROOT --engine E --model M --effort X PROMPT`.

It searches its working directory and its parents, ROOT (where it knows the set, the seal and
the runs are) and every process it can see (command lines, environments) for the judging
stage's files, and notes on ROOT/leaks.txt everything it found and its environment's names. When
it finds the task of its own prompt in a tasks.jsonl, it answers what that task expects (a
control then passes); otherwise it answers "Reply 1" to every pair, which no calibration passes
(the verdict follows the order)
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
from pathlib import Path

SECRETS = ("tasks.jsonl", ".seal.json", "turns.jsonl", "judgments.json", "votes.jsonl")


def _found(root: Path) -> list[Path]:
    hits = []
    for folder, _, files in os.walk(root):
        hits += [Path(folder) / f for f in files if f.endswith(SECRETS)]
    return hits


def _processes() -> list[str]:
    seen = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            for part in ("cmdline", "environ"):
                try:
                    text = (entry / part).read_bytes().replace(b"\0", b" ").decode()
                except OSError:
                    continue
                seen.append(f"pid {entry.name} {part}: {text[:300]}")
    return seen


def main() -> None:
    parser = argparse.ArgumentParser()
    for name in ("--look", "--engine", "--model", "--effort"):
        parser.add_argument(name, required=True)
    parser.add_argument("prompt")
    args = parser.parse_args()
    prompt = Path(args.prompt).read_bytes()
    notes = [f"stdin same as prompt file: {sys.stdin.buffer.read() == prompt}"]
    notes.append(f"env: {' '.join(sorted(os.environ))}")
    here = Path.cwd()
    for folder in (here, *here.parents):
        seen = [p.name for p in folder.iterdir() if p.name.endswith(SECRETS)]
        notes += [f"listing {folder}: {name}" for name in seen]
    hits = _found(Path(args.look))
    for hit in hits:
        text = hit.read_text(errors="replace")
        if text:  # a name seen over an empty mask says nothing
            notes.append(f"read {hit}: {len(text)} chars")
    notes += _processes()
    verdict = "Reply 1"
    sha = hashlib.sha256(prompt).hexdigest()
    for hit in hits:
        if hit.name == "tasks.jsonl":
            for line in hit.read_text().splitlines():
                task = json.loads(line) if line.strip() else {}
                if task.get("prompt_sha256") == sha and task.get("expect"):
                    verdict = task["expect"]
                    notes.append(f"steered to {verdict}")
    with open(Path(args.look) / "leaks.txt", "a", encoding="utf-8") as leaks:
        leaks.write("".join(f"{note}\n" for note in notes))
    print(f"judge: engine={args.engine} model={args.model} effort={args.effort}")
    print(f"verdict: {verdict}")


if __name__ == "__main__":
    main()
