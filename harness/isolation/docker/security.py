"""What every container of a run is started with so that root inside it is not root on the net.

- `--cap-drop ALL`: Docker's default set includes NET_RAW, with which an arm running as root
  sends raw frames (IPv6 link-local to the host, UDP with a forged source address) that no
  socket guard sees. The reference arms need none of them (their seam listens on a high port,
  they write only to their own folders, which root owns); a study gives back what an engine
  needs by name (`cap_add`), recorded in run.json.
- `--security-opt no-new-privileges`: a setuid binary in an arm's image cannot give back what
  was dropped.
- IPv6 off in the container (`--sysctl net.ipv6.conf.{all,default}.disable_ipv6=1`): Docker's
  user networks are IPv4-only, yet every veth still gets an fe80:: address and a route to the
  host's link-local one; `default` covers interfaces attached after the start (the proxy is
  connected to each arm network in turn). arm_rules.py refuses and logs any IPv6 frame that is
  sent anyway (raw, with NET_RAW given back).

Docker docs: "Runtime privilege and Linux capabilities" (docker run reference) and
`--sysctl` (only namespaced sysctls, such as net.*, are allowed per container).
"""

from __future__ import annotations

IPV6_OFF = ("net.ipv6.conf.all.disable_ipv6=1", "net.ipv6.conf.default.disable_ipv6=1")


def hardening(cap_add: list[str]) -> list[str]:
    """`docker run` flags for one container: no capabilities but `cap_add`, no privilege
    gain, no IPv6."""
    flags = ["--cap-drop", "ALL", "--security-opt", "no-new-privileges"]
    flags += [a for cap in cap_add for a in ("--cap-add", cap)]
    flags += [a for sysctl in IPV6_OFF for a in ("--sysctl", sysctl)]
    return flags
