"""A test judge that answers like the stub but flips its flag verdict on a fixed share of the
replies it is shown, chosen by a hash of the reply and its own salt:
`python erring_judge.py --engine E --model M --effort X --salt S --percent P PROMPT`. Two such
judges with different salts each err rarely enough to pass their own bars, but on different
replies, so their agreement (kappa) can fall below its bar: what a third pass is for. With
`--silent P` it also gives no reply at all (exit status 1) to P% of its prompts, every time it is
asked them: its bars are answered on fewer items than they hold. With `--remember DIR
--honest-after N` it errs only the first N times it is shown a prompt's text (DIR counts them):
with N = 2, a control and its stability repeat get the same erring verdict, and asked a third
time, as the re-ask form of a third pass does, it answers as the stub would."""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "harness" / "judge"))
import stub_judge


def erring_verdict(text: str, salt: str, percent: int) -> str:
    honest = stub_judge.verdict(text, "honest")
    _, replies = stub_judge.read_prompt(text)
    if honest not in ("FLAG", "OK") or len(replies) != 1:
        return honest
    digest = hashlib.sha256(f"{salt}\n{replies[0]}".encode()).digest()
    if int.from_bytes(digest[:4], "big") % 100 < percent:
        return "OK" if honest == "FLAG" else "FLAG"
    return honest


if __name__ == "__main__":
    args = sys.argv[1:]
    given = dict(zip(args[0:-1:2], args[1:-1:2], strict=True))
    text = Path(args[-1]).read_text(encoding="utf-8")
    silent = hashlib.sha256(f"{given['--salt']} silent\n{text}".encode()).digest()
    if int.from_bytes(silent[:4], "big") % 100 < int(given.get("--silent", "0")):
        sys.exit("erring judge: no reply to this prompt")
    percent = int(given["--percent"])
    if "--remember" in given:
        # One file per prompt text, a byte per sight (O_APPEND: concurrent asks never lose one).
        count = Path(given["--remember"]) / hashlib.sha256(text.encode()).hexdigest()
        with count.open("ab") as f:
            f.write(b".")
        if count.stat().st_size > int(given["--honest-after"]):
            percent = 0
    verdict = erring_verdict(text, given["--salt"], percent)
    sys.stdout.write(
        f"judge: engine={given['--engine']} model={given['--model']} effort={given['--effort']}\n"
        f"verdict: {verdict}\n"
    )
