"""What the docker backend's containers mount from the host, besides their run folders.

The harness sources of this checkout, read-only on PYTHONPATH, so a code change never needs an
image rebuild (the images provide Python, the SDKs and libfaketime); and, for the proxy, the
host paths its options name (run dir, stubs, pins, prices, ledger), at the same paths, so its
config needs no translation.
"""

from __future__ import annotations

from pathlib import Path

from harness.isolation.base import ProxySettings

SOURCE_ROOT = Path(__file__).resolve().parents[3]
PACKAGES = ("harness", "proxy", "stubs", "ledger", "arms", "rundir", "vendors", "canonical")


def source_mounts() -> list[str]:
    return [
        a
        for pkg in PACKAGES
        if (SOURCE_ROOT / pkg).is_dir()
        for a in ("-v", f"{SOURCE_ROOT / pkg}:/harness/src/{pkg}:ro")
    ]


def identity_mounts(settings: ProxySettings) -> list[str]:
    # The settings' paths are absolute already (proxy.app.options makes them so).
    paths = [settings.stubs, settings.pins, settings.prices, settings.ca_bundle]
    dirs = {str(p.parent) for p in paths if p}
    dirs |= {str(p) for p in (settings.run_dir, settings.replay_from) if p}
    if settings.ledger:
        settings.ledger.parent.mkdir(parents=True, exist_ok=True)
        dirs.add(str(settings.ledger.parent))
    return [a for d in sorted(dirs) for a in ("-v", f"{d}:{d}")]
