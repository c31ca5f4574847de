"""Live metering reads vendor facts from vendors/, never the record-mode stubs: importing the live
mode (and its setup) in a fresh interpreter loads no `stubs` module, nor does live intake's request
validation (vendors.requests) on every route that has checks. Record and replay are the only
modes that answer from stubs/."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
LIVE_MODULES = ("proxy.live", "proxy.live.forwarder", "proxy.live.setup")


def loaded_stubs(module: str) -> list[str]:
    code = (
        f"import sys, {module}\n"
        "print('\\n'.join(sorted(m for m in sys.modules if m.split('.')[0] == 'stubs')))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    return out.stdout.split()


@pytest.mark.parametrize("module", LIVE_MODULES)
def test_the_live_mode_loads_no_stub_module(module: str) -> None:
    assert loaded_stubs(module) == []


def test_the_probe_sees_a_stub_module_when_one_is_loaded() -> None:
    # The record mode does load stubs: the probe is not blind.
    assert "stubs.rules.replies" in loaded_stubs("proxy.app.addon")


# In a fresh interpreter: the live mode and its setup imported, then one refused and one accepted
# request through intake with the checks live mode runs, on every route that has checks.
VALIDATE_EVERY_ROUTE = """
import json, sys
import proxy.live, proxy.live.forwarder, proxy.live.setup
from proxy.flow.callstate import CallState
from proxy.flow.intake import intake
from rundir.calls.masking import DEFAULT_BODY_MASKS
from vendors.requests.body import CHECKS, check_body
from vendors.routes import ROUTES

statuses = {}
for route in ROUTES:
    if route.name not in CHECKS:
        continue
    state = CallState(route.vendor, route.path, route.method, "arm", "", 0.0)
    reply = intake(
        state, b'{"model": 5}', DEFAULT_BODY_MASKS, 1 << 20, None, check=check_body
    )
    statuses[route.name] = reply.status if reply else None
good = b'{"model": "gpt-4.1-mini", "messages": [{"role": "user", "content": "hi"}]}'
state = CallState("openai", "/v1/chat/completions", "POST", "arm", "", 0.0)
statuses["openai.chat accepted"] = intake(
    state, good, DEFAULT_BODY_MASKS, 1 << 20, None, check=check_body
)
stubs = sorted(m for m in sys.modules if m.split(".")[0] == "stubs")
print(json.dumps({"statuses": statuses, "stubs": stubs, "checks": sorted(CHECKS)}))
"""


def test_live_intake_validates_every_route_without_loading_a_stub() -> None:
    out = subprocess.run(
        [sys.executable, "-c", VALIDATE_EVERY_ROUTE],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    seen = json.loads(out.stdout)
    # Every route with checks refused a body whose model is a number, with the vendor's 400...
    assert set(seen["statuses"]) - {"openai.chat accepted"} == set(seen["checks"])
    assert {s for r, s in seen["statuses"].items() if r != "openai.chat accepted"} == {400}
    # ...a good body passed, and no stub module was loaded to decide either.
    assert seen["statuses"]["openai.chat accepted"] is None
    assert seen["stubs"] == []
