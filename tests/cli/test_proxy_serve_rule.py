"""`harness proxy serve` confines nothing of its own traffic (the proxy is the serving process,
in no container or cgroup the harness sets up): it says so when it starts, on stderr, and in its
run.json's `proxy_rule`, so a user holding keys knows (harness/cli/proxy.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.cli.proxy import SERVE_PROXY_RULE
from tests.fakevendor.server import FakeVendor
from tests.proxy.live_helpers import start_live_proxy

pytestmark = pytest.mark.integration


def test_a_live_serve_says_its_own_traffic_is_not_enforced(tmp_path: Path) -> None:
    with FakeVendor() as vendor:
        proxy = start_live_proxy(tmp_path, vendor)
        try:
            header = json.loads((proxy.run_dir / "run.json").read_text())
            stderr = proxy.stderr_path.read_text()
        finally:
            proxy.stop()
    assert SERVE_PROXY_RULE.startswith("not enforced: ")
    assert header["proxy_rule"] == SERVE_PROXY_RULE
    said = [line for line in stderr.splitlines() if "proxy's own traffic" in line]
    assert said == [f"# proxy's own traffic: {SERVE_PROXY_RULE}"]
    # Still there once the run is closed (the manifest rewrites run.json).
    assert json.loads((proxy.run_dir / "run.json").read_text())["proxy_rule"] == SERVE_PROXY_RULE
