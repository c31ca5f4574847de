"""A study's `ca_bundle`: the live proxy trusts it for the vendors' TLS (a TLS-inspecting
corporate proxy, here a fake vendor with its own CA), and a bundle that is not there stops the
study before anything starts."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest

from harness.errors import HarnessError
from harness.study import load_study
from tests.fakevendor.server import FakeVendor
from tests.helpers.gate_studies import gate_study
from tests.helpers.studies import gate_then_live, read_jsonl
from tests.proxy.live_helpers import STUDY_KEYS

pytestmark = pytest.mark.integration


def test_live_calls_reach_a_vendor_signed_by_the_studys_ca_bundle(tmp_path: Path) -> None:
    with FakeVendor(tls=True) as vendor:
        bundle = tmp_path / "study" / "vendor-ca.pem"
        bundle.parent.mkdir(parents=True)
        bundle.write_bytes(vendor.ca_file.read_bytes())
        study = gate_study(tmp_path / "study", vendors={"openai": vendor.url}, ca_bundle=bundle)
        run_dir = gate_then_live(study, tmp_path / "runs", STUDY_KEYS)
        served = len(vendor.requests)
    calls = read_jsonl(run_dir / "calls.jsonl")
    assert calls and served == len(calls)
    assert all(c["outcome"] == "ok" and Decimal(c["cost_usd"]) > 0 for c in calls), calls
    config = json.loads((run_dir / "proxy.json").read_text())
    assert config["ca_bundle"] == str(bundle.resolve())


def test_a_missing_ca_bundle_is_named_before_anything_starts(tmp_path: Path) -> None:
    study = gate_study(tmp_path, ca_bundle=tmp_path / "nowhere.pem")
    with pytest.raises(HarnessError, match="field 'ca_bundle'"):
        load_study(study)
