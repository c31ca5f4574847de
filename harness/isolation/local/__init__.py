"""The local backend: arms and the proxy as host processes (backend.py), what they start with
(arm_env.py: environments, commands, libfaketime), how they are started, awaited and stopped
(processes.py), their rlimits (limits.py) and, as root, the OS rule on the proxy's own traffic
(proxy_rule.py). It imports nothing of the docker backend (tests/test_layout.py).
"""

from harness.isolation.local.arm_env import find_libfaketime
from harness.isolation.local.backend import LocalBackend

__all__ = ["LocalBackend", "find_libfaketime"]
