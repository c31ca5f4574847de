"""A live-mode proxy process in front of a FakeVendor, as a pilot would run it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.fakevendor.server import FakeVendor
from tests.proxy.proxy_process import ProxyProcess

STUDY_ANTHROPIC_KEY = "sk-ant-study-SECRET-0123456789abcdef"
STUDY_OPENAI_KEY = "sk-proj-study-SECRET-fedcba9876543210"
STUDY_KEYS = {"ANTHROPIC_API_KEY": STUDY_ANTHROPIC_KEY, "OPENAI_API_KEY": STUDY_OPENAI_KEY}


def start_live_proxy(
    tmp_path: Path,
    vendor: FakeVendor,
    *extra: str,
    cap: str = "5",
    deadline: float = 30.0,
    name: str = "run",
) -> ProxyProcess:
    args = [
        "--mode",
        "live",
        "--cap",
        cap,
        "--ledger",
        str(tmp_path / "ledger.jsonl"),
        "--upstream",
        f"anthropic={vendor.url}",
        "--upstream",
        f"openai={vendor.url}",
        "--deadline",
        str(deadline),
        *extra,
    ]
    if vendor.tls:
        args += ["--ca-bundle", str(vendor.ca_file)]
    return ProxyProcess(tmp_path / name, *args, env=STUDY_KEYS)


def live_options(tmp_path: Path, vendor: FakeVendor) -> dict[str, Any]:
    """The options of an in-process live addon (tests/proxy/addon_kit.py) in front of `vendor`."""
    return {
        "harness_mode": "live",
        "harness_cap": "5",
        "harness_ledger": str(tmp_path / "ledger.jsonl"),
        "harness_upstreams": [f"openai={vendor.url}"],
    }


def settled_seqs(ledger: Path) -> list[int]:
    """The seq of every call the ledger's `calls_settled` entries booked, in their order."""
    entries = [json.loads(line) for line in ledger.read_text().splitlines()]
    return [
        call["seq"]
        for entry in entries
        if entry["kind"] == "calls_settled"
        for call in entry["fields"]["calls"]
    ]
