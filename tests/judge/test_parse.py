"""Strict reading of judges' replies: only a header naming the pinned judge and a verdict."""

from __future__ import annotations

import pytest

from harness.judge.parse import parse_reply
from rundir.judgments.records import JudgePin

PIN = JudgePin(name="alpha", engine="claude-code", model="opus-4", effort="high", client="command")
HEADER = "judge: engine=claude-code model=opus-4 effort=high"


@pytest.mark.parametrize(
    ("reply", "kind", "verdict"),
    [
        (f"{HEADER}\nverdict: FLAG\n", "flag", "FLAG"),
        (f"\n{HEADER}\nverdict: OK", "flag", "OK"),
        (f"{HEADER}\nverdict: Reply 2\n", "pairwise", "Reply 2"),
        (f"{HEADER}\nverdict: TIE\n", "pairwise", "TIE"),
    ],
)
def test_a_well_formed_reply_is_accepted(reply: str, kind: str, verdict: str) -> None:
    parsed = parse_reply(reply, PIN, kind)  # type: ignore[arg-type]
    assert (parsed.status, parsed.verdict) == ("accepted", verdict)


@pytest.mark.parametrize(
    ("reply", "kind"),
    [
        ("verdict: FLAG", "flag"),  # no header
        (f"Sure! Here is my answer.\n{HEADER}\nverdict: FLAG", "flag"),  # a preamble
        (f"{HEADER}\nverdict: FLAG\nbecause it invents a city", "flag"),  # a reason
        (f"{HEADER}\nverdict: flag", "flag"),  # not the rubric's spelling
        (f"{HEADER}\nverdict: Reply 1", "flag"),  # a pairwise verdict to a flag rubric
        (f"{HEADER}\nverdict: FLAG", "pairwise"),
        (f"{HEADER}\nverdict: Reply 1 or Reply 2", "pairwise"),
        (f"{HEADER} extra\nverdict: OK", "flag"),
        (f"{HEADER}\nVerdict: OK", "flag"),
        ("", "flag"),
    ],
)
def test_anything_else_is_unparseable(reply: str, kind: str) -> None:
    parsed = parse_reply(reply, PIN, kind)  # type: ignore[arg-type]
    assert parsed.status == "unparseable" and parsed.verdict is None


@pytest.mark.parametrize(
    ("header", "named"),
    [
        ("judge: engine=codex model=opus-4 effort=high", "engine 'codex' (pinned 'claude-code')"),
        (
            "judge: engine=claude-code model=sonnet-4 effort=high",
            "model 'sonnet-4' (pinned 'opus-4')",
        ),
        ("judge: engine=claude-code model=opus-4 effort=low", "effort 'low' (pinned 'high')"),
    ],
)
def test_a_header_naming_another_judge_is_a_wrong_pin(header: str, named: str) -> None:
    parsed = parse_reply(f"{header}\nverdict: OK", PIN, "flag")
    assert parsed.status == "wrong_pin"
    assert named in str(parsed.detail)
