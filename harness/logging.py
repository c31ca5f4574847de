"""One `configure_logging()` for every harness process: console on a terminal, JSON otherwise.

It lives in rundir/logs.py, which the proxy's process (importing nothing of harness/) shares.
"""

from __future__ import annotations

from rundir.logs import configure_logging

__all__ = ["configure_logging"]
