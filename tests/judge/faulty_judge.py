"""A test judge that answers like the stub except for one fault a planted control must catch:
`python faulty_judge.py FAULT --engine E --model M --effort X PROMPT`, FAULT one of
- `longer`: where the stub ties two replies, it picks the longer one (a length tie-break);
- `accept-long`: it grades any answer of four or more words right (accept-all on a sentence)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "harness" / "judge"))
import stub_judge


def faulty_verdict(text: str, fault: str) -> str:
    honest = stub_judge.verdict(text, "honest")
    lines = text.splitlines()
    response = stub_judge._field(lines, "Model Response")
    if fault == "accept-long" and response is not None:
        return "yes" if len(response.split()) >= 4 else honest
    _, replies = stub_judge.read_prompt(text)
    if fault == "longer" and len(replies) == 2 and honest == "TIE":
        first, second = (len(r.split()) for r in replies)
        return honest if first == second else ("Reply 1" if first > second else "Reply 2")
    return honest


if __name__ == "__main__":
    fault, args = sys.argv[1], sys.argv[2:]
    given = dict(zip(args[0:-1:2], args[1:-1:2], strict=True))
    verdict = faulty_verdict(Path(args[-1]).read_text(encoding="utf-8"), fault)
    sys.stdout.write(
        f"judge: engine={given['--engine']} model={given['--model']} effort={given['--effort']}\n"
        f"verdict: {verdict}\n"
    )
