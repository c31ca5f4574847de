"""The local backend: arms and the proxy as host processes (backend.py), what they start with
(arm_env.py: environments, commands, libfaketime), how they are started, awaited and stopped
(processes.py), their rlimits (limits.py) and, as root, the OS rule on the proxy's own traffic
(proxy_rule.py). It imports nothing of the docker backend (tests/test_layout.py).
"""

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from harness.isolation.local.arm_env import find_libfaketime
    from harness.isolation.local.backend import LocalBackend

# What this face offers is loaded on first use (PEP 562): a user of one name loads the module
# that defines it, not the whole part (a judge's process must not load scipy).
_OFFERED = {
    "LocalBackend": "harness.isolation.local.backend",
    "find_libfaketime": "harness.isolation.local.arm_env",
}


def __getattr__(name: str) -> Any:
    if name not in _OFFERED:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(_OFFERED[name]), name)


__all__ = ["LocalBackend", "find_libfaketime"]
