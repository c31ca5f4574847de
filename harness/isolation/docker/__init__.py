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

from harness.isolation.docker import cli
from harness.isolation.docker.backend import DockerBackend
from harness.isolation.docker.cli import DockerError, docker, engine_answers, require_engine
from harness.isolation.docker.config import compose_images
from harness.isolation.docker.net import network_gateway

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
