"""Loading a study validates a file: it must not pay for the proxy's or the stubs' heavy imports
(hypothesis and jsonschema came in through proxy.live.sampling -> stubs, 0.29 s of 0.46 s). A fresh
interpreter imports harness.study and lists what it loaded."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("hypothesis", "jsonschema", "mitmproxy", "proxy", "stubs")


def loaded_roots(module: str) -> set[str]:
    code = f"import sys, {module}\nprint(' '.join({{m.split('.')[0] for m in sys.modules}}))"
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    return set(out.stdout.split())


def test_loading_a_study_imports_neither_hypothesis_nor_jsonschema_nor_the_proxy() -> None:
    assert loaded_roots("harness.study") & set(HEAVY) == set()


def test_the_probe_sees_them_when_they_are_loaded() -> None:
    # The record mode's stubs do load hypothesis and jsonschema: the probe is not blind.
    assert {"hypothesis", "jsonschema", "stubs"} <= loaded_roots("stubs.schema.instance")
