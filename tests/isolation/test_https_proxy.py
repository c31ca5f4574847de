"""Engines that hard-code vendor hosts reach the proxy through HTTPS_PROXY and the harness CA.

The arm (hardcoded_arm.py) calls https://api.openai.com and https://api.anthropic.com with the
official SDKs and its own base URLs; only the environment the local backend gives every arm
(HTTPS_PROXY at the arm's forward-proxy listener, SSL_CERT_FILE & co at the run's copy of the
harness CA) gets it there. Nothing leaves the machine: the SDK sends CONNECT to the listener on
127.0.0.1, and mitmproxy answers the TLS handshake itself.
"""

from __future__ import annotations

import ssl
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from harness.isolation.proxy_ca import ensure_ca, fingerprint
from tests.fakevendor.server import FakeVendor
from tests.helpers.studies import (
    gate_then_live,
    harness,
    header,
    only_run,
    read_jsonl,
    write_study,
)
from tests.proxy.live_helpers import STUDY_ANTHROPIC_KEY, STUDY_KEYS, STUDY_OPENAI_KEY
from tests.study_builder import StudyBuilder
from tests.toy_arms import TOY_ARMS

pytestmark = pytest.mark.integration

HARDCODED_ARM = TOY_ARMS / "hardcoded_arm.py"
ITEMS = [
    {
        "id": "i1",
        "clock": "2024-05-01T10:00:00",
        "turns": [
            {"user": "openai what is the capital of France"},
            {"user": "anthropic tell me a short story"},
        ],
    }
]


def _run(tmp_path: Path, items: list[dict[str, Any]]) -> tuple[Any, Path]:
    arms = {"engine": {"command": f"python {HARDCODED_ARM}"}}
    study = write_study(tmp_path / "study", arms, items)
    runs = tmp_path / "runs"
    done = harness("record", str(study), "--run-dir", str(runs), "--isolation", "local")
    return done, only_run(runs)


def test_hardcoded_vendor_hosts_reach_the_stubs_through_the_forward_proxy(
    tmp_path: Path,
) -> None:
    done, run_dir = _run(tmp_path, ITEMS)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    turns = read_jsonl(run_dir / "turns.jsonl")
    assert [t["outcome"] for t in turns] == ["done", "done"], turns
    assert all(t["text"] and not t["text"].startswith("failed") for t in turns), turns
    calls = read_jsonl(run_dir / "calls.jsonl")
    # Attributed to the arm by the listener it came in on, the vendor told by the Host header.
    assert [(c["arm"], c["vendor"], c["route"], c["outcome"]) for c in calls] == [
        ("engine", "openai", "openai.chat", "ok"),
        ("engine", "anthropic", "anthropic.messages", "ok"),
    ]
    assert calls[1]["stream"] is True
    assert [(c["item"], c["turn"]) for c in calls] == [("i1", 0), ("i1", 1)]
    assert read_jsonl(run_dir / "egress.jsonl") == []
    assert header(run_dir)["study"]["passed"] is True
    # The run keeps the public certificate its arms trusted, and only that.
    kept = run_dir / "ca" / "harness-ca.pem"
    assert fingerprint(kept) == fingerprint(ensure_ca())
    assert b"PRIVATE KEY" not in kept.read_bytes()


def test_a_host_that_is_not_a_vendor_is_refused_by_the_forward_proxy_and_named(
    tmp_path: Path,
) -> None:
    items = [
        {
            "id": "i1",
            "clock": "2024-05-01T10:00:00",
            "turns": [{"user": "fetch https://exfiltrate.example/upload"}],
        }
    ]
    done, run_dir = _run(tmp_path, items)
    assert done.returncode == 1, done.stderr[-3000:]
    assert "stray connection" in done.stdout
    (turn,) = read_jsonl(run_dir / "turns.jsonl")
    assert turn["text"].startswith("failed") and "403" in turn["text"], turn
    (attempt,) = read_jsonl(run_dir / "egress.jsonl")
    assert attempt["arm"] == "engine"
    assert attempt["destination"] == "exfiltrate.example:443"
    assert attempt["source"] == "proxy" and attempt["time"]
    assert read_jsonl(run_dir / "calls.jsonl") == []  # refused before it was a call
    assert header(run_dir)["study"]["passed"] is False


def test_the_ca_is_created_once_and_its_key_stays_private(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HARNESS_CA_DIR", str(tmp_path / "ca"))
    cert = ensure_ca()
    assert ensure_ca() == cert and fingerprint(ensure_ca()) == fingerprint(cert)
    assert (tmp_path / "ca").stat().st_mode & 0o077 == 0
    key = tmp_path / "ca" / "mitmproxy-ca.pem"
    assert key.stat().st_mode & 0o077 == 0
    # A usable trust anchor as it is.
    ssl.create_default_context(cafile=str(cert))


def test_live_mode_meters_hardcoded_host_calls_with_the_study_key(tmp_path: Path) -> None:
    """Through the forward-proxy route the call goes to the study's vendor URL (a fake that
    answers only the study's key), metered and priced, and the key stays in the proxy."""
    keys = {"openai": STUDY_OPENAI_KEY, "anthropic": STUDY_ANTHROPIC_KEY}
    with FakeVendor(api_keys=keys) as vendor:
        study = (
            StudyBuilder(name="hardcoded-live", items=ITEMS)
            .arm("engine", f"python {HARDCODED_ARM}")
            .set(vendors={"openai": vendor.url, "anthropic": vendor.url})
            .write(tmp_path / "study")
        )
        run_dir = gate_then_live(study, tmp_path / "runs", STUDY_KEYS)
        served = len(vendor.requests)
    calls = read_jsonl(run_dir / "calls.jsonl")
    assert [(c["arm"], c["vendor"], c["mode"], c["outcome"]) for c in calls] == [
        ("engine", "openai", "live", "ok"),
        ("engine", "anthropic", "live", "ok"),
    ]
    assert all(Decimal(c["cost_usd"]) > 0 for c in calls)
    assert served == 2  # the gate's record runs never reached the vendor
    turns = read_jsonl(run_dir / "turns.jsonl")
    assert all(t["outcome"] == "done" and t["text"] for t in turns), turns
    for path in run_dir.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            assert not any(key.encode() in data for key in keys.values()), path
