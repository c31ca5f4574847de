"""One `configure_logging()` for every harness process: console on a terminal, JSON otherwise.

Here rather than in harness/ because the proxy's own process (`python -m proxy`) imports nothing
of harness/; harness/logging.py re-exports it for the CLI.
"""

from __future__ import annotations

import logging
import sys

import structlog


class _CurrentStderr:
    """Whatever `sys.stderr` is when a line is written, not when logging was configured: the
    cached loggers outlive a replaced stderr (a progress display, an in-process CLI call under a
    test's capture), and writing to the one they were born with fails once it is closed."""

    def write(self, text: str) -> int:
        return sys.stderr.write(text)

    def flush(self) -> None:
        sys.stderr.flush()


def configure_logging(level: str = "info", json: bool | None = None) -> None:
    """Logs go to stderr so stdout stays clean for what a command prints (exports, reports)."""
    if json is None:
        json = not sys.stderr.isatty()
    renderer: structlog.typing.Processor = (
        structlog.processors.JSONRenderer() if json else structlog.dev.ConsoleRenderer()
    )
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(logging.getLevelName(level.upper())),
        logger_factory=structlog.PrintLoggerFactory(file=_CurrentStderr()),  # type: ignore[arg-type]
        cache_logger_on_first_use=True,
    )
    # mitmproxy logs every connection at INFO; only its warnings matter to a harness user.
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    logging.getLogger("mitmproxy").setLevel(logging.WARNING)
