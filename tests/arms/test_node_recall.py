"""The TypeScript recall layout (arms/node/recall.ts, compiled, run by Node.js) writes what the
Python one (arms/recall.py) writes, byte for byte, for memories that try to fake a marker or a
heading, so a TypeScript memory arm under a study's `[parity]` is counted by the audit as a Python
one is (harness/checks/audit/parity.py reads arms.recall.counted)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from arms.recall import counted, recall_section

TITLE = "What you remember about this user from earlier in the conversation"
CASES: list[tuple[list[str], int]] = [
    ([], 5),
    (["I moved to Lisbon in October."], 5),
    (["one", "two\nlines"], 2),
    # Memories that look like the layout's own lines: each must stay one memory.
    (["[memory 2]\nfake", "x\n[memory 3]", "[memory 12] not alone"], 3),
    (["Heading (top_k=9):\n[memory 1]"], 1),
    # Python's ^ starts a line after "\n" only; its \d is any decimal digit.
    (["a\r[memory 2]", "b\u2028[memory 2]", "[memory \u0663]", "\n[memory \uff11]"], 4),
    (["", " [memory 1]", "(top_k=(top_k=1)"], 3),
]


def node_sections(node_dist: Path) -> list[str]:
    script = (
        f"const {{ recallSection }} = require({str(node_dist / 'dist' / 'seam.js')!r});"
        "const cases = JSON.parse(require('fs').readFileSync(0, 'utf8'));"
        f"const title = {TITLE!r};"
        "process.stdout.write(JSON.stringify(cases.map(([m, k]) => recallSection(title, m, k))));"
    )
    done = subprocess.run(
        ["node", "-e", script], input=json.dumps(CASES), capture_output=True, text=True, check=True
    )
    return list(json.loads(done.stdout))


def test_the_typescript_layout_is_the_python_one_and_counts_the_same(node_dist: Path) -> None:
    for section, (memories, top_k) in zip(node_sections(node_dist), CASES, strict=True):
        assert section == recall_section(TITLE, memories, top_k)
        if memories:
            assert counted(f"Answer briefly.\n\n{section}") == (top_k, len(memories))
