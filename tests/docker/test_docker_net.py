"""The host's address on a Docker network, as the harness and the docker tests read it."""

from __future__ import annotations

import subprocess
import uuid

import docker

from harness.backends.docker_net import interface_ipv4, network_gateway


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
