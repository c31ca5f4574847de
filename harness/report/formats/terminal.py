"""What `harness report` shows on a terminal while it works: a spinner naming the step (reading
the runs, each section, printing the PDF), so a large run's report does not sit silent. Off a
terminal, or with HARNESS_NO_PROGRESS set, nothing."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager


@contextmanager
def report_progress() -> Iterator[Callable[[str], None]]:
    if not sys.stderr.isatty() or os.environ.get("HARNESS_NO_PROGRESS"):
        yield lambda _: None
        return
    from rich.console import Console

    with Console(stderr=True).status("report: starting") as status:
        yield lambda step: status.update(f"report: {step}")
