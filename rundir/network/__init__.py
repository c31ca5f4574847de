"""What a run records of the network: the arms' refused connections (`egress.jsonl`) and the
proxy's own (`proxy_egress.jsonl`), when the orchestrator saw each (`strays_seen.jsonl`), the
round trips it measured (`rtt.jsonl`), and the day's compatibility probe and the route it chose
(`probe.json`).

What other parts use is imported here and listed in `__all__`: they import it from this face,
never from a module inside (tests/test_layout.py holds that)."""

from rundir.network.egress import EgressEntry, read_egress
from rundir.network.probe_file import PROBE_FILE, ProbeCheck, ProbeDecision, read_probe, write_probe
from rundir.network.proxy_egress import (
    PROXY_EGRESS_FILE,
    ProxyEgressEntry,
    by_destination,
    read_proxy_egress,
    write_proxy_egress,
)
from rundir.network.rtt import ProbeKind, ProbeMethod, ProbePhase, RttLog, RttProbe, read_probes
from rundir.network.strays_seen import StraySeen, append_seen, read_seen

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
