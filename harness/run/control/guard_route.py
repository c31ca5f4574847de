"""The `[guard]`'s way to the model (harness/guard.py): the proxy listener of the arm whose text it
checks, as the arm's own SDK variables name it (placeholder keys), and, for a Python guard, the
local arms' socket guard (harness/isolation/guard/sitecustomize.py) allowing that listener only,
its refusals logged in the run's `egress/guard/egress.jsonl`."""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import urlsplit

from harness.guard import GUARD_PURPOSE
from harness.isolation import sdk_env

SOCKET_GUARD = Path(__file__).parents[2] / "isolation" / "guard"  # its sitecustomize.py


def guard_route(proxy_base: str | None, egress_log: Path) -> dict[str, str]:
    """The variables laid over the guard's environment for the listener `proxy_base`
    (http://host:port); none without one."""
    if not proxy_base:
        return {}
    where = urlsplit(proxy_base)
    host, port = where.hostname or "127.0.0.1", where.port or 80
    egress_log.parent.mkdir(parents=True, exist_ok=True)
    path = os.pathsep.join(filter(None, [str(SOCKET_GUARD), os.environ.get("PYTHONPATH")]))
    return sdk_env(host, port) | {
        "PYTHONPATH": path,
        "HARNESS_GUARD_ARM": GUARD_PURPOSE,
        "HARNESS_GUARD_ALLOW": f"{host}:{port}",
        "HARNESS_EGRESS_LOG": str(egress_log),
    }
