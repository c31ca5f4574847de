"""Read what an arm sent from a record-mode proxy's run directory."""

from __future__ import annotations

import json
from typing import Any

from rundir.calls.bodies import BodyStore
from tests.proxy.proxy_process import ProxyProcess


def request_body(proxy: ProxyProcess, call: dict[str, Any]) -> dict[str, Any]:
    """The JSON body an arm sent, read back from the proxy's content-addressed store."""
    body: dict[str, Any] = json.loads(BodyStore(proxy.run_dir / "bodies").get(call["request_body"]))
    return body


def new_calls(proxy: ProxyProcess, before: int, expected: int) -> list[dict[str, Any]]:
    """The calls logged after the first `before`, once `expected` of them are in."""
    calls = proxy.calls(at_least=before + expected)[before:]
    assert len(calls) == expected, [c["route"] for c in calls]
    return sorted(calls, key=lambda c: c["seq"])
