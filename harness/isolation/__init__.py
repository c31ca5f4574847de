"""Isolation backends: how arms and the proxy are started, kept apart and stopped.

`base.py` is the contract; `local/` and `docker/` are the two backends, each with its own
`cleanup` of what crashed runs left; beside them sits what both use (the host firewall, the
proxy's OS rule, who owns a run's resources, egress attribution, clock pinning, the proxy CA,
ports, pids.json) and `choose.py`, which makes the run's backend (and picks between them for
`--isolation auto`).
"""

import importlib
from typing import TYPE_CHECKING, Any

from harness.isolation.sdk_env import sdk_env

if TYPE_CHECKING:
    from harness.isolation.base import (
        PROXY_READY,
        ArmHandle,
        InfraError,
        Isolation,
        IsolationBackend,
        ProxyInfo,
        ProxySettings,
    )
    from harness.isolation.choose import make_backend
    from harness.isolation.egress_book import attempts
    from harness.isolation.owner import RUN_LABEL
    from harness.isolation.proxy_ca import ensure_ca, fingerprint
    from harness.isolation.seam_http import seam_client
    from harness.isolation.sleepfix import compile_sleepfix

# What this face offers is loaded on first use (PEP 562): a user of one name loads the module
# that defines it, not the whole part (a judge's process must not load scipy).
_OFFERED = {
    "ArmHandle": "harness.isolation.base",
    "InfraError": "harness.isolation.base",
    "Isolation": "harness.isolation.base",
    "IsolationBackend": "harness.isolation.base",
    "PROXY_READY": "harness.isolation.base",
    "ProxyInfo": "harness.isolation.base",
    "ProxySettings": "harness.isolation.base",
    "RUN_LABEL": "harness.isolation.owner",
    "attempts": "harness.isolation.egress_book",
    "compile_sleepfix": "harness.isolation.sleepfix",
    "ensure_ca": "harness.isolation.proxy_ca",
    "fingerprint": "harness.isolation.proxy_ca",
    "make_backend": "harness.isolation.choose",
    "seam_client": "harness.isolation.seam_http",
}


def __getattr__(name: str) -> Any:
    if name not in _OFFERED:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(_OFFERED[name]), name)


__all__ = [
    "PROXY_READY",
    "RUN_LABEL",
    "ArmHandle",
    "InfraError",
    "Isolation",
    "IsolationBackend",
    "ProxyInfo",
    "ProxySettings",
    "attempts",
    "compile_sleepfix",
    "ensure_ca",
    "fingerprint",
    "make_backend",
    "sdk_env",
    "seam_client",
]
