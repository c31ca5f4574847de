"""One `configure_logging()` for every harness process: console on a terminal, JSON otherwise.

Here rather than in harness/ because the proxy's own process (`python -m proxy`) imports nothing
of harness/; harness/logging.py re-exports it for the CLI.
"""

from __future__ import annotations

import logging
import sys

import structlog


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
        logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
        cache_logger_on_first_use=True,
    )
    # mitmproxy logs every connection at INFO; only its warnings matter to a harness user.
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    logging.getLogger("mitmproxy").setLevel(logging.WARNING)
