"""A deterministic judge for record mode: `python -m harness.judge.stub_judge --engine E --model M
--effort X PROMPT_FILE` prints a reply in the judges' format, decided by rule from the prompt alone.

Its rules read a reply against the user's messages the prompt shows, the way record mode's stubs
write replies (an acknowledgement, then the user's own words):
- ungrounded words: a content word of the reply the user never said (a wrong fact, a spliced or
  off-topic sentence, an inverted trait's "not");
- no acknowledgement: the reply does not open by acknowledging the user;
- repeated: a sentence said twice; truncated: no closing punctuation.
A flag rubric flags a reply with any problem; a pairwise rubric prefers the reply with fewer, a
tie when equal. A grading prompt (LongMemEval's, "Model Response: ...") is answered "yes" when the
response holds every content word of the correct answer (numbers off by one forgiven where the
temporal prompt forgives them; half the words of a preference rubric), and for an unanswerable
question when the response declines. It knows nothing of which prompts are controls: it finds
them by these rules, as a real judge must, which is what lets calibration run in CI without a key.

Test judges with a known fault, to show calibration catches each (`--behaviour`):
- position-bias: every pairwise verdict is "Reply 1";
- blind: never flags, always a tie, grades every answer right (misses every planted control);
- and `--claim-model NAME`: its header names another model than the one pinned.
It imports only the standard library: it runs once per prompt.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

ACKNOWLEDGEMENTS = (
    "noted",
    "i understand",
    "understood",
    "thanks",
    "thank you",
    "got it",
    "you told me",
    "you said",
    "ok",
    "okay",
    "sure",
    "i see",
    "i remember",
)
_STOPWORDS = (
    "a an the and or but of to in on at for with from by as is are was were be been am i me my "
    "you your it its this that these those what which who here there have has had do does did "
    "so if then than about into over just also let keep mind recap telling told said thanks "
    "understand noted got ok okay sure see remember"
)
STOPWORDS = frozenset(_STOPWORDS.split())
WORD = re.compile(r"[a-z0-9']+")


def words(text: str) -> list[str]:
    return WORD.findall(text.lower())


def problems(reply: str, said: str, pairwise: bool) -> list[str]:
    found = []
    heard = set(words(said))
    ungrounded = [w for w in words(reply) if w not in STOPWORDS and w not in heard]
    if ungrounded:
        found.append("ungrounded: " + " ".join(ungrounded[:5]))
    if not reply.lower().startswith(ACKNOWLEDGEMENTS):
        found.append("no acknowledgement")
    sentences = [s.strip().lower() for s in re.split(r"(?<=[.!?])\s+", reply) if len(s.split()) > 2]
    if len(sentences) != len(set(sentences)):
        found.append("repeated")
    # A reply cut short is worse than a whole one, but not a reason to flag what it does say.
    if pairwise and not reply.rstrip().endswith((".", "!", "?")):
        found.append("truncated")
    return found


def read_prompt(text: str) -> tuple[str, list[str]]:
    """The user's messages (joined) and the reply lines between <reply> and </reply>."""
    lines = text.splitlines()
    said = " ".join(line[len("User: ") :] for line in lines if line.startswith("User: "))
    replies = [
        lines[i + 1]
        for i, line in enumerate(lines[:-2])
        if line == "<reply>" and lines[i + 2] == "</reply>"
    ]
    return said, replies


ABSTAINS = re.compile(
    r"\b(?:not (?:mentioned|say|said|know|sure|provided|available)|don't know|do not know|"
    r"no (?:information|record|mention)|cannot|can't|never (?:mentioned|said|told))\b"
)


def _field(lines: list[str], *names: str) -> str | None:
    for line in lines:
        for name in names:
            if line.startswith(f"{name}: "):
                return line[len(name) + 2 :]
    return None


def _numbers_close(wanted: str, got: set[str]) -> bool:
    if not wanted.isdigit():
        return False
    return any(w.isdigit() and abs(int(w) - int(wanted)) <= 1 for w in got)


def grade(text: str) -> str | None:
    """ "yes" or "no" for a grading prompt; None when the prompt is not one."""
    lines = text.splitlines()
    response = _field(lines, "Model Response")
    gold = _field(lines, "Correct Answer", "Rubric", "Explanation")
    if response is None or gold is None:
        return None
    if "unanswerable question" in text:
        return "yes" if ABSTAINS.search(response.lower()) else "no"
    got = set(words(response))
    wanted = [w for w in words(gold) if w not in STOPWORDS]
    lenient = "off-by-one errors" in text
    hits = sum(w in got or (lenient and _numbers_close(w, got)) for w in wanted)
    need = (len(wanted) + 1) // 2 if _field(lines, "Rubric") is not None else len(wanted)
    return "yes" if wanted and hits >= need else "no"


def verdict(text: str, behaviour: str) -> str:
    graded = grade(text)
    if graded is not None:
        return "yes" if behaviour == "blind" else graded
    said, replies = read_prompt(text)
    if len(replies) == 1:
        if behaviour == "blind":
            return "OK"
        return "FLAG" if problems(replies[0], said, pairwise=False) else "OK"
    if len(replies) != 2:
        raise SystemExit(f"stub judge: expected 1 or 2 replies in the prompt, found {len(replies)}")
    if behaviour == "position-bias":
        return "Reply 1"
    if behaviour == "blind":
        return "TIE"
    first, second = (len(problems(r, said, pairwise=True)) for r in replies)
    return "TIE" if first == second else ("Reply 1" if first < second else "Reply 2")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="harness.judge.stub_judge")
    parser.add_argument("--engine", required=True)
    parser.add_argument("--model", required=True)
    parser.add_argument("--effort", required=True)
    parser.add_argument(
        "--behaviour", choices=("honest", "position-bias", "blind"), default="honest"
    )
    parser.add_argument(
        "--claim-model", help="name this model in the header instead (a test fault)"
    )
    parser.add_argument("prompt", type=Path)
    args = parser.parse_args(argv)
    text = args.prompt.read_text(encoding="utf-8")
    model = args.claim_model or args.model
    sys.stdout.write(
        f"judge: engine={args.engine} model={model} effort={args.effort}\n"
        f"verdict: {verdict(text, args.behaviour)}\n"
    )


if __name__ == "__main__":
    main()
