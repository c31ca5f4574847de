"""Judging progress (harness/judge/progress.py): on a terminal the stage's passes add their tasks
to one bar and each answered task advances it; off a terminal, or with HARNESS_NO_PROGRESS,
nothing is drawn and reporting is a no-op."""

from __future__ import annotations

import os
import pty

import pytest

from harness.judge import progress


def test_on_a_terminal_every_pass_adds_to_one_bar(monkeypatch: pytest.MonkeyPatch) -> None:
    leader, follower = pty.openpty()
    terminal = os.fdopen(follower, "w")
    monkeypatch.setattr("sys.stderr", terminal)
    monkeypatch.delenv("HARNESS_NO_PROGRESS", raising=False)
    with progress.judging_progress():
        progress.tasks_added(3)  # calibration
        progress.tasks_added(2)  # confirmatory
        for _ in range(4):
            progress.task_done()
        bar = progress._bar
        assert bar is not None
        assert (bar.tasks[0].total, bar.tasks[0].completed) == (5, 4)
    assert progress._bar is None  # the stage is over: later reports draw nothing
    progress.task_done()
    terminal.close()
    os.close(leader)


def test_off_a_terminal_nothing_is_drawn(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HARNESS_NO_PROGRESS", "1")
    with progress.judging_progress():
        progress.tasks_added(3)
        progress.task_done()
        assert progress._bar is None
