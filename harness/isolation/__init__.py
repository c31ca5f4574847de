"""Isolation backends: how arms and the proxy are started, kept apart and stopped.

`base.py` is the contract; `local/` and `docker/` are the two backends, each with its own
`cleanup` of what crashed runs left; beside them sits what both use (the host firewall, the
proxy's OS rule, who owns a run's resources, egress attribution, clock pinning, the proxy CA,
ports, pids.json) and `choose.py`, which makes the run's backend (and picks between them for
`--isolation auto`).
"""

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
from harness.isolation.sdk_env import sdk_env
from harness.isolation.seam_http import seam_client
from harness.isolation.sleepfix import compile_sleepfix

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
