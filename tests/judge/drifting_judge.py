"""A test judge that answers like the stub for its first N prompts, then stops catching anything:
`python drifting_judge.py COUNTER N --engine E --model M --effort X PROMPT` (one prompt at a time:
the counter file is not locked). It passes calibration and then drifts, which only the controls
mixed into the confirmatory set can catch."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "harness" / "judge"))
import stub_judge

counter, honest_for = Path(sys.argv[1]), int(sys.argv[2])
asked = int(counter.read_text() or "0") if counter.exists() else 0
counter.write_text(str(asked + 1))
behaviour = [] if asked < honest_for else ["--behaviour", "blind"]
stub_judge.main([*sys.argv[3:-1], *behaviour, sys.argv[-1]])
