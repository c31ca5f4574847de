"""What a run records of the network: the arms' refused connections (`egress.jsonl`) and the
proxy's own (`proxy_egress.jsonl`), when the orchestrator saw each (`strays_seen.jsonl`), the
round trips it measured (`rtt.jsonl`), and the day's compatibility probe and the route it chose
(`probe.json`).

What other parts use is imported here and listed in `__all__`: they import it from this face,
never from a module inside (tests/test_layout.py holds that)."""

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rundir.network.egress import EgressEntry, read_egress
    from rundir.network.probe_file import (
        PROBE_FILE,
        ProbeCheck,
        ProbeDecision,
        read_probe,
        write_probe,
    )
    from rundir.network.proxy_egress import (
        PROXY_EGRESS_FILE,
        ProxyEgressEntry,
        by_destination,
        read_proxy_egress,
        write_proxy_egress,
    )
    from rundir.network.rtt import ProbeKind, ProbeMethod, ProbePhase, RttLog, RttProbe, read_probes
    from rundir.network.strays_seen import StraySeen, append_seen, read_seen

# What this face offers is loaded on first use (PEP 562): a user of one name loads the module
# that defines it, not the whole part (a judge's process must not load scipy).
_OFFERED = {
    "EgressEntry": "rundir.network.egress",
    "PROBE_FILE": "rundir.network.probe_file",
    "PROXY_EGRESS_FILE": "rundir.network.proxy_egress",
    "ProbeCheck": "rundir.network.probe_file",
    "ProbeDecision": "rundir.network.probe_file",
    "ProbeKind": "rundir.network.rtt",
    "ProbeMethod": "rundir.network.rtt",
    "ProbePhase": "rundir.network.rtt",
    "ProxyEgressEntry": "rundir.network.proxy_egress",
    "RttLog": "rundir.network.rtt",
    "RttProbe": "rundir.network.rtt",
    "StraySeen": "rundir.network.strays_seen",
    "append_seen": "rundir.network.strays_seen",
    "by_destination": "rundir.network.proxy_egress",
    "read_egress": "rundir.network.egress",
    "read_probe": "rundir.network.probe_file",
    "read_probes": "rundir.network.rtt",
    "read_proxy_egress": "rundir.network.proxy_egress",
    "read_seen": "rundir.network.strays_seen",
    "write_probe": "rundir.network.probe_file",
    "write_proxy_egress": "rundir.network.proxy_egress",
}


def __getattr__(name: str) -> Any:
    if name not in _OFFERED:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(_OFFERED[name]), name)


__all__ = [
    "PROBE_FILE",
    "PROXY_EGRESS_FILE",
    "EgressEntry",
    "ProbeCheck",
    "ProbeDecision",
    "ProbeKind",
    "ProbeMethod",
    "ProbePhase",
    "ProxyEgressEntry",
    "RttLog",
    "RttProbe",
    "StraySeen",
    "append_seen",
    "by_destination",
    "read_egress",
    "read_probe",
    "read_probes",
    "read_proxy_egress",
    "read_seen",
    "write_probe",
    "write_proxy_egress",
]
