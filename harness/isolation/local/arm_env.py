"""What the local backend's processes start with: the proxy's environment (vendor keys in live
mode only), an arm's (placeholder keys, its listeners, its socket guard), an arm's command, and
the libfaketime that pins an arm's clock."""

from __future__ import annotations

import glob
import os
import sys
from pathlib import Path

from harness.isolation.base import SECRET_SUFFIXES
from harness.isolation.proxy_ca import proxy_env
from harness.isolation.sdk_env import sdk_env
from harness.study import ArmSpec

GUARD_DIR = Path(__file__).parents[1] / "guard"
# Environment an arm inherits from the harness: enough to run, nothing secret (no vendor keys).
PASSTHROUGH_ENV = ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "VIRTUAL_ENV", "PYTHONPATH")
FAKETIME_GLOBS = (
    "/usr/lib/*/faketime/libfaketime.so.1",
    "/usr/lib/faketime/libfaketime.so.1",
    "/usr/local/lib/faketime/libfaketime.so.1",
)


def find_libfaketime() -> str | None:
    """The libfaketime to preload, or None. HARNESS_FAKETIME=0 turns it off; =PATH picks one."""
    choice = os.environ.get("HARNESS_FAKETIME", "")
    if choice == "0":
        return None
    if choice:
        return choice if Path(choice).is_file() else None
    for pattern in FAKETIME_GLOBS:
        found = sorted(glob.glob(pattern))
        if found:
            return found[0]
    return None


def proxy_env_for(mode: str) -> dict[str, str]:
    """The proxy's environment: the harness's own, with the study's vendor keys in live mode
    only (the proxy alone holds them; record and replay never forward, so they get none)."""
    if mode == "live":
        return dict(os.environ)
    return {k: v for k, v in os.environ.items() if not k.endswith(SECRET_SUFFIXES)}


def argv(spec: ArmSpec) -> list[str]:
    """`python ...` runs under the harness's interpreter, so the venv's packages are there."""
    command = list(spec.command)
    if command[0] in ("python", "python3"):
        command[0] = sys.executable
    return command


def arm_env(
    name: str, spec: ArmSpec, ports: tuple[int, int, int], ca_cert: Path, egress_log: Path
) -> dict[str, str]:
    """An arm's environment: `ports` are its proxy listener, its HTTPS_PROXY listener and its
    seam, the only addresses its socket guard lets it reach; `egress_log` is the guard's log."""
    proxy_port, https_port, seam_port = ports
    env = {k: os.environ[k] for k in PASSTHROUGH_ENV if k in os.environ}
    env |= {"TZ": "UTC", "PYTHONUNBUFFERED": "1"}
    env |= spec.env
    # Set last so a compose file's docker-network URLs cannot override them.
    env |= sdk_env("127.0.0.1", proxy_port)
    env |= proxy_env(f"http://127.0.0.1:{https_port}", str(ca_cert), "127.0.0.1,localhost")
    return env | {
        "SEAM_HOST": "127.0.0.1",
        "SEAM_PORT": str(seam_port),
        "HARNESS_ARM": name,
        "HARNESS_GUARD_ARM": name,
        "HARNESS_GUARD_ALLOW": ",".join(f"127.0.0.1:{port}" for port in ports),
        "HARNESS_EGRESS_LOG": str(egress_log.resolve()),
        "PYTHONPATH": os.pathsep.join(filter(None, [str(GUARD_DIR), env.get("PYTHONPATH")])),
    }
