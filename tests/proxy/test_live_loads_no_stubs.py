"""Live metering reads vendor facts from vendors/, never the record-mode stubs: importing the live
mode (and its setup) in a fresh interpreter loads no `stubs` module. Record and replay are the only
modes that answer from stubs/."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LIVE_MODULES = ("proxy.live", "proxy.live.mode", "proxy.live.setup")


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
