"""The host's address on a Docker network, as the harness and the docker tests read it."""

from __future__ import annotations

import subprocess
import uuid

import docker

from harness.isolation.docker.net import interface_ipv4, network_gateway


def test_default_bridge_gateway_is_the_docker0_address(docker_engine: docker.DockerClient) -> None:
    # A freshly started docker.io 20.10 lists no Gateway in the bridge's IPAM config; whatever
    # the daemon lists, the answer must be the address the host holds on docker0.
    assert network_gateway("bridge") == interface_ipv4("docker0")


def test_user_network_gateway_is_an_address_of_its_bridge(
    docker_engine: docker.DockerClient,
) -> None:
    name = f"harness-test-gw-{uuid.uuid4().hex[:8]}"
    network = docker_engine.networks.create(name, internal=True)
    try:
        gateway = network_gateway(name)
        bridge = f"br-{network.id[:12]}"
        shown = subprocess.run(
            ["ip", "-4", "-o", "addr", "show", "dev", bridge], capture_output=True, text=True
        ).stdout
        assert f"inet {gateway}/" in shown
    finally:
        network.remove()


def test_an_arms_rules_match_its_bridge_in_both_families_and_are_removed_by_run(
    docker_engine: docker.DockerClient,
) -> None:
    from harness.isolation.docker import arm_rules
    from harness.isolation.docker.net import network_bridge
    from harness.isolation.firewall import log_prefix
    from harness.isolation.owner import remove_rules, rule_comment

    run_id = f"rules-{uuid.uuid4().hex[:6]}"
    network = docker_engine.networks.create(f"harness-test-rules-{run_id}", internal=True)
    try:
        bridge = network_bridge(network.name)
        assert bridge == f"br-{network.id[:12]}"
        rules = arm_rules.ArmRules(
            bridge=bridge,
            proxy_ip="10.9.9.9",
            tcp_ports=(8100, 8200),
            prefix=log_prefix(run_id, "a", 0),
            comment=rule_comment(run_id),
            udp_ports=(53,),
        )
        arm_rules.add_rules(rules)
        listed = {
            tool: [
                line
                for line in subprocess.run(
                    [tool, "-S"], capture_output=True, text=True
                ).stdout.splitlines()
                if run_id in line
            ]
            for tool in ("iptables", "ip6tables")
        }
        # Matched on the interface, never on a source address an arm can forge.
        for lines in listed.values():
            assert lines and all(f"-i {bridge}" in line and " -s " not in line for line in lines)
        assert sum("-j RETURN" in line for line in listed["iptables"]) == 3  # 2 listeners, DNS
        assert {line.split()[1] for line in listed["ip6tables"]} >= {"INPUT"}
        assert all("-j RETURN" not in line for line in listed["ip6tables"])  # IPv6: nothing
        assert remove_rules(run_id) == len(listed["iptables"]) + len(listed["ip6tables"])
    finally:
        remove_rules(run_id)
        network.remove()
