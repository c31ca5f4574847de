from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.proxy.proxy_process import ProxyProcess


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
