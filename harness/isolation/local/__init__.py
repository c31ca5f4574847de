"""The local backend: arms and the proxy as host processes (backend.py), their rlimits
(limits.py) and, as root, the OS rule on the proxy's own traffic (proxy_rule.py). It imports
nothing of the docker backend (tests/test_layout.py).
"""

from harness.isolation.local.backend import LocalBackend, find_libfaketime

__all__ = ["LocalBackend", "find_libfaketime"]
