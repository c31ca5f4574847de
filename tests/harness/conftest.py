"""Fixtures shared by the harness tests."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator

import pytest


@pytest.fixture
def listener() -> Iterator[tuple[int, list[str]]]:
    """A server the test started on 127.0.0.1: it must never receive a connection."""
    server = socket.create_server(("127.0.0.1", 0))
    accepted: list[str] = []

    def accept() -> None:
        try:
            conn, peer = server.accept()
            accepted.append(str(peer))
            conn.close()
        except OSError:
            pass

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield server.getsockname()[1], accepted
    server.close()
    thread.join(5)
