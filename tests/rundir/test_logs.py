"""configure_logging: a logger cached under one stderr keeps working after stderr is replaced."""

from __future__ import annotations

import io
import json
import sys

import pytest
import structlog

from rundir.logs import configure_logging


def test_a_cached_logger_writes_to_the_stderr_of_the_moment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    first, second = io.StringIO(), io.StringIO()
    monkeypatch.setattr(sys, "stderr", first)
    try:
        configure_logging(json=True)
        log = structlog.get_logger("test_logs")
        log.warning("before")
        monkeypatch.setattr(sys, "stderr", second)
        first.close()  # what pytest's capture does to the stderr a test had
        log.warning("after")  # raised "I/O operation on closed file" with the bound stderr
    finally:
        structlog.reset_defaults()
    assert json.loads(second.getvalue())["event"] == "after"
