from __future__ import annotations

import os
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.proxy.proxy_process import ProxyProcess

# V0 (harness/run/live/suite_record.py): the suite is what is being run, so its own live runs go
# without a record of it passing, each saying so in run.json. tests/run/live/test_suite_record.py
# unsets this to show a live run refused without the record.
os.environ.setdefault("HARNESS_SKIP_SUITE", "1")


@pytest.fixture(scope="module")
def record_proxy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ProxyProcess]:
    """One record-mode proxy process shared by a test module."""
    proxy = ProxyProcess(tmp_path_factory.mktemp("proxy") / "run")
    yield proxy
    proxy.stop()


@pytest.fixture
def fresh_proxy(tmp_path: Path) -> Iterator[ProxyProcess]:
    proxy = ProxyProcess(tmp_path / "run")
    yield proxy
    proxy.stop()


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
