"""The pilot projects what the live proxy will reserve (issue 36 item 6): from the bodies the
proxy sends (the record run's rewrites applied: the output cap and B's pins), not the limits the
arms asked for. A coupled study whose B and C0 ask 100,000 output tokens (sent 4,000, the cap)
and whose C1 asks 16 (sent B's 4,000) is recorded, gated and run live against a fake vendor; each
live call's reservation is within a cent of its record-run projection."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest

from harness.run.pilot.pilot_cost import project_calls, record_calls
from ledger.prices import load_prices
from rundir.calls.calllog import read_calls
from tests.fakevendor.server import FakeVendor
from tests.helpers.coupled_example import copy_example
from tests.helpers.studies import gate_then_live, header
from tests.proxy.live_helpers import STUDY_KEYS

pytestmark = pytest.mark.integration

ASKED = {"B": "100000", "C0": "100000", "C1": "16"}


def _study(folder: Path, vendor_url: str) -> Path:
    study = copy_example(folder)
    text = study.read_text()
    for arm, asked in ASKED.items():
        text = text.replace(
            f'ARM_ROLE = "{arm}", ARM_MODEL = "gpt-4.1-mini", ARM_MAX_TOKENS = "256"',
            f'ARM_ROLE = "{arm}", ARM_MODEL = "gpt-4.1-mini", ARM_MAX_TOKENS = "{asked}"',
        )
    text = text.replace("[pins]\ntemperature = 0", '[pins]\noutput_cap = 4000\nfrom_arm = "B"')
    text = text[: text.index("# Z reaches")]  # Z's Anthropic route has no fake vendor here
    # C1 asks another limit than C0: no gate pair, or the live run would drop C1.
    text = text[: text.index("# On the turn after")] + text[text.index("[arms.B]") :]
    text = text.replace("[coupling]", f'[vendors]\nopenai = "{vendor_url}"\n\n[coupling]', 1)
    study.write_text(text)
    return study


def test_every_live_reservation_is_within_a_cent_of_its_projection(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    with FakeVendor() as vendor:
        study = _study(tmp_path / "study", vendor.url)
        live = gate_then_live(study, runs, STUDY_KEYS, cap="5")
    records = [p for p in runs.iterdir() if (p / "run.json").exists() and p != live]
    record = next(p for p in records if header(p)["mode"] == "record")
    prices = load_prices(None)
    calls, pack = record_calls(record)
    projected = {
        (c.arm, c.item, c.turn, c.purpose): project_calls([c], prices, pack).worst for c in calls
    }
    reserved = {
        (c.arm, c.item, c.turn, c.purpose): c.reserved_usd for c in read_calls(live / "calls.jsonl")
    }
    assert reserved.keys() == projected.keys()
    sent_at_cap = 0
    for key, amount in reserved.items():
        assert abs(projected[key] - amount) <= Decimal("0.01"), (key, projected[key], amount)
        sent_at_cap += amount > Decimal("0.005")
    assert sent_at_cap == len(reserved)  # C1's 16 tokens were sent as B's 4,000: reserved so
