"""Strict reading of a judge's reply: exactly a header line naming the judge and a verdict line.

Anything else (a preamble, a reason, a verdict outside the rubric's set, two verdicts) is
unparseable and asked again: a lenient reader would turn a judge's hedging into a vote. A header
naming another engine, model or effort means another judge answered; its verdict is discarded.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from harness.judge.prompts import FLAG_VERDICTS, PAIRWISE_VERDICTS, QA_VERDICTS
from rundir.judgments import JudgePin

HEADER = re.compile(r"judge: engine=(\S+) model=(\S+) effort=(\S+)")
VERDICT = re.compile(r"verdict: (.+)")


@dataclass(frozen=True)
class Parsed:
    status: Literal["accepted", "wrong_pin", "unparseable"]
    verdict: str | None
    detail: str | None


ALLOWED = {"flag": FLAG_VERDICTS, "pairwise": PAIRWISE_VERDICTS, "qa": QA_VERDICTS}


def parse_reply(reply: str, pin: JudgePin, kind: Literal["flag", "pairwise", "qa"]) -> Parsed:
    lines = reply.strip().splitlines()
    if len(lines) != 2:
        return Parsed("unparseable", None, f"{len(lines)} lines, expected 2 (header, verdict)")
    header = HEADER.fullmatch(lines[0].strip())
    if header is None:
        return Parsed(
            "unparseable", None, "the first line is not 'judge: engine=.. model=.. effort=..'"
        )
    verdict = VERDICT.fullmatch(lines[1].strip())
    allowed = ALLOWED[kind]
    if verdict is None or verdict.group(1) not in allowed:
        return Parsed("unparseable", None, f"the second line is not 'verdict: ' one of {allowed}")
    named = dict(zip(("engine", "model", "effort"), header.groups(), strict=True))
    pinned = {"engine": pin.engine, "model": pin.model, "effort": pin.effort}
    wrong = [
        f"{key} {named[key]!r} (pinned {pinned[key]!r})"
        for key in pinned
        if named[key] != pinned[key]
    ]
    if wrong:
        return Parsed("wrong_pin", verdict.group(1), "the reply names " + ", ".join(wrong))
    return Parsed("accepted", verdict.group(1), None)
