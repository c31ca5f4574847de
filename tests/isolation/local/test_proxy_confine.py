"""The local proxy's own traffic under attack from inside (local/proxy_rule.py, proxy_confine.py,
proxy_dns.py, egress_probe.py), as root: a process started as the proxy is (in its cgroup, with
its confinement) cannot reach port 53 of an address that is no resolver, over TCP or UDP, nor send
a resolver anything but a DNS query; each attempt is refused and logged in proxy_egress.jsonl,
and the start probe's own attempts are not. It has no capability, cannot leave its cgroup for the
root one nor read or change the firewall. And the start probe names what gets through where
nothing confines it."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness.isolation import egress_probe, owner, proxy_dns
from harness.isolation.local import proxy_rule as local_proxy_rule
from rundir.control.proxy_file import ProxySettings
from tests.helpers.studies import read_jsonl

NEEDS_ROOT = pytest.mark.skipif(
    local_proxy_rule.unavailable() is not None, reason="needs root and cgroup2"
)

# Run as the proxy: what a hostile dependency of the proxy would try.
ATTACK = """
import socket, subprocess, sys
target, query, roots, resolvers = sys.argv[1], bytes.fromhex(sys.argv[2]), sys.argv[3], sys.argv[4:]
def report(what, act):
    try:
        act()
        print(what, "done", flush=True)
    except (OSError, subprocess.CalledProcessError) as e:
        print(what, type(e).__name__, flush=True)
def udp(to, data):
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.sendto(data, (to, 53))
report("tcp", lambda: socket.create_connection((target, 53), timeout=3).close())
report("udp", lambda: udp(target, query))
for resolver in resolvers:
    report("resolver", lambda: udp(resolver, b"not a DNS query, any bytes at all"))
def leave():
    with open(roots + "/cgroup.procs", "w") as f:
        f.write("0")
report("leave", leave)
print("cgroup", [x for x in open("/proc/self/cgroup").read().splitlines() if x[:3] == "0::"][0])
report("iptables", lambda: subprocess.run(["iptables", "-S"], check=True, capture_output=True))
status = dict(line.split(":", 1) for line in open("/proc/self/status").read().splitlines())
print("CapEff", status["CapEff"].strip(), "CapBnd", status["CapBnd"].strip())
print("NoNewPrivs", status["NoNewPrivs"].strip())
"""


@NEEDS_ROOT
def test_a_process_of_the_proxy_cannot_reach_port_53_elsewhere_nor_undo_its_rule(
    tmp_path: Path,
) -> None:
    root = local_proxy_rule.cgroup2_root()
    assert root is not None
    resolvers = proxy_dns.resolvers() or ("127.53.0.2",)
    run_id = f"confine-{os.getpid()}-{time.time_ns()}"
    rule = local_proxy_rule.LocalProxyRule(tmp_path)
    settings = ProxySettings(run_id=run_id, mode="live", upstreams=["openai=http://127.0.0.1:9"])
    # A non-resolver this test listens on, port 53, as a server off the host would.
    listener = egress_probe.listen(proxy_dns.non_resolvers(resolvers))
    attacker = listener.address
    try:
        rule.start(settings, owner.rule_comment(run_id))
        assert rule.said.startswith("enforced:"), rule.said
        assert rule.cgroup is not None
        cgroup = rule.cgroup.name
        attack = subprocess.run(
            [sys.executable, "-c", ATTACK, attacker, egress_probe.QUERY.hex(), str(root),
             *resolvers],
            capture_output=True, text=True, timeout=120, preexec_fn=rule.preexec(),
        )  # fmt: skip
        reached = listener.reached()
    finally:
        refused = rule.stop()
        listener.close()
    said = dict(line.split(" ", 1) for line in attack.stdout.splitlines())
    assert reached == [], attack.stdout
    assert said["tcp"] != "done" and said["iptables"] != "done"
    # Whatever the write did (the cgroup filesystem is gone from its view), it is still in the
    # proxy's cgroup, which the rule matches on.
    assert said["cgroup"] == f"0::/{cgroup}", attack.stdout
    assert said["resolver"] == "PermissionError", attack.stdout + attack.stderr
    assert said["CapEff"].startswith("0000000000000000 CapBnd 0000000000000000")
    assert said["NoNewPrivs"] == "1"
    entries = read_jsonl(tmp_path / "proxy_egress.jsonl")
    seen = {(e["destination"], e["protocol"]) for e in entries}
    assert {(f"{attacker}:53", "tcp"), (f"{attacker}:53", "udp")} <= seen
    assert all((f"{r}:53", "udp") in seen for r in resolvers)
    # The start probe's attempts (to another non-resolver) are not the proxy's.
    assert len(entries) == 2 + len(resolvers), entries
    assert refused and "(refused packets the kernel log lost)" not in refused


def test_the_start_probe_names_what_gets_through_where_nothing_confines_it() -> None:
    if os.geteuid() != 0:
        pytest.skip("port 53 needs root")
    addresses = proxy_dns.non_resolvers(("127.53.0.8",))
    through, _ = egress_probe.probe_local(lambda: None, addresses, ("127.53.0.8",))
    target = through[0].removeprefix("tcp to ")
    assert through == [
        f"tcp to {target}",
        f"udp to {target}",
        "a datagram that is no DNS query to 127.53.0.8:53",
    ]
