"""Progress of a judging stage on a terminal: judge calls asked and answered, across the stage's
passes (calibration, confirmatory, repeats, third passes), so `harness judge` does not sit
silent for minutes before its table.

The stage's sender reports each pass's tasks and each answered task here; the CLI installs a
bar for the stage (`judging_progress`). With no bar installed (a library caller, a test, a log
that is not a terminal or HARNESS_NO_PROGRESS set) reporting does nothing."""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

_bar: Any = None  # rich's Progress and its task, while a stage runs under judging_progress
_task: Any = None
_lock = threading.Lock()


def tasks_added(count: int) -> None:
    """A pass will ask `count` more tasks."""
    with _lock:
        if _bar is not None:
            total = (_bar.tasks[0].total or 0) + count
            _bar.update(_task, total=total)


def task_done() -> None:
    """One task was answered, or given up on after its attempts."""
    with _lock:
        if _bar is not None:
            _bar.update(_task, advance=1)


@contextmanager
def judging_progress(label: str = "judge calls") -> Iterator[None]:
    global _bar, _task
    if not sys.stderr.isatty() or os.environ.get("HARNESS_NO_PROGRESS"):
        yield
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    columns = (TextColumn(label), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=Console(stderr=True), transient=True) as bar:
        with _lock:
            _bar, _task = bar, bar.add_task(label, total=0)
        try:
            yield
        finally:
            with _lock:
                _bar = _task = None
