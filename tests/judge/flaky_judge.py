"""A test judge that rambles the first time it sees a prompt and answers properly the second:
`python flaky_judge.py STATE_DIR --engine E --model M --effort X PROMPT`. The stage must discard
the rambling reply and ask again."""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "harness" / "judge"))
import stub_judge

state = Path(sys.argv[1])
seen = state / hashlib.sha256(Path(sys.argv[-1]).read_bytes()).hexdigest()
if not seen.exists():
    seen.write_text("")
    print("I think the first reply is better, mostly.")
else:
    stub_judge.main(sys.argv[2:])
