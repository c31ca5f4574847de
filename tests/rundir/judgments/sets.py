"""A task and a manifest small enough to write a judgment set by hand."""

from __future__ import annotations

from rundir.judgments.records import JudgmentSet, JudgmentTask

TASK = JudgmentTask(
    id="a1",
    judgment="flag:g:i:0:ABCD",
    rubric="g",
    kind="flag",
    judge="alpha",
    role="confirmatory",
    phase="confirmatory",
    item="i",
    turn=0,
    labels=["ABCD"],
    prompt_sha256="0" * 64,
)


def manifest(seal_sha: str) -> JudgmentSet:
    """A manifest that judged nothing yet, holding `seal_sha` as its seal's hash."""
    return JudgmentSet(
        stage="s1",
        written="now",
        tool_version="0",
        runs=[],
        judges=[],
        rubrics=[],
        templates={},
        seal_sha256=seal_sha,
        tasks_sha256="",
        votes_sha256="",
    )
