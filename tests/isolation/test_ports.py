"""The local backend's listener ports: distinct within one proxy, free when handed out."""

from __future__ import annotations

import socket

from harness.isolation.ports import free_ports


def test_ports_for_one_proxy_are_distinct_and_bindable() -> None:
    # A study with many arms asks for two listeners per arm plus the control port at once.
    ports = free_ports(65)
    assert len(set(ports)) == len(ports)
    for port in ports:
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", port))
