"""The docker backend: every arm in its own container on its own internal network (backend.py),
with its pieces: what the proxy's and each arm's container run and mount (proxy_container.py,
arm_container.py), the run's firewall and what it caught (run_rules.py), the one Docker CLI
wrapper (cli.py, which `harness images` uses too), the networks and the firewall rules confining
arms (net.py, arm_rules.py), bounds and bounded disks (limits.py, arm_disk.py), clock pinning,
mounts, names, hardening, the images a compose file names (clock.py, mounts.py, names.py,
security.py, config.py), and what a crashed run leaves (leftovers.py, DockerBackend.cleanup).

Outside this package, the harness uses what `__all__` lists (and cli.py), never the rest
(tests/test_layout.py).
"""

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from harness.isolation.docker import cli
    from harness.isolation.docker.backend import DockerBackend
    from harness.isolation.docker.cli import DockerError, docker, engine_answers, require_engine
    from harness.isolation.docker.config import compose_images
    from harness.isolation.docker.net import network_gateway

# What this face offers is loaded on first use (PEP 562): a user of one name loads the module
# that defines it, not the whole part (a judge's process must not load scipy).
_OFFERED = {
    "DockerBackend": "harness.isolation.docker.backend",
    "DockerError": "harness.isolation.docker.cli",
    "compose_images": "harness.isolation.docker.config",
    "docker": "harness.isolation.docker.cli",
    "engine_answers": "harness.isolation.docker.cli",
    "network_gateway": "harness.isolation.docker.net",
    "require_engine": "harness.isolation.docker.cli",
}


def __getattr__(name: str) -> Any:
    if name not in _OFFERED:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(_OFFERED[name]), name)


__all__ = [
    "DockerBackend",
    "DockerError",
    "cli",
    "compose_images",
    "docker",
    "engine_answers",
    "network_gateway",
    "require_engine",
]
