"""A coupled study's reuse and B's pins under `--workers` (issue 36 item 1), on the local backend:
with one worker and with four, every C1 main call whose request equals C0's of the same item and
turn is answered by reuse, and every other arm's main call is pinned from B's request of its own
item and turn (never `pins_from_missing`), whichever worker ran the item."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers.coupled_example import copy_example
from tests.helpers.studies import read_jsonl
from tests.helpers.worker_runs import record_with_workers

pytestmark = pytest.mark.integration

ITEMS = 12
TURNS = 3


def _study(folder: Path) -> Path:
    study = copy_example(folder)
    text = study.read_text()
    # The example declares the reuse pair itself (since it counts the hits in its report); a
    # study without it would have nothing reused and this test nothing to check.
    assert 'reuse = [["C0", "C1"]]' in text
    text = text.replace("[pins]\ntemperature = 0", '[pins]\nfrom_arm = "B"')
    # B asks for 256 tokens, the others for 999: a follower sent 999 was not pinned from B.
    for arm in ("C0", "C1", "Z"):
        text = text.replace(
            f'ARM_ROLE = "{arm}", ARM_MODEL = "gpt-4.1-mini", ARM_MAX_TOKENS = "256"',
            f'ARM_ROLE = "{arm}", ARM_MODEL = "gpt-4.1-mini", ARM_MAX_TOKENS = "999"',
        )
        text = text.replace(
            f'ARM_ROLE = "{arm}", ARM_MODEL = "claude-haiku-4-5", ARM_MAX_TOKENS = "256"',
            f'ARM_ROLE = "{arm}", ARM_MODEL = "claude-haiku-4-5", ARM_MAX_TOKENS = "999"',
        )
    study.write_text(text)
    lines = [
        {
            "id": f"item{n}",
            "clock": "2024-05-01T10:00:00",
            "turns": [{"user": f"Question {t} of item {n}."} for t in range(TURNS)],
        }
        for n in range(ITEMS)
    ]
    (folder / "items.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    (folder / "elements.txt").write_text("")
    text = study.read_text()
    cut = text.index("[[gate.pairs]]")
    end = text.index("[arms.B]")
    study.write_text(text[:cut] + text[end:])  # no firing in these items: no pair to gate
    return study


@pytest.mark.parametrize("workers", [1, 4])
def test_every_reusable_call_is_reused_and_every_follower_pinned_from_b(
    tmp_path: Path, workers: int
) -> None:
    study = _study(tmp_path / "study")
    run = record_with_workers(study, tmp_path / "runs", "local", workers)
    calls = [c for c in read_jsonl(run / "calls.jsonl") if c["purpose"] == "main"]
    leaders = {(c["item"], c["turn"], c["request_hash"]): c for c in calls if c["arm"] == "C0"}
    followers = [c for c in calls if c["arm"] == "C1"]
    reusable = [c for c in followers if (c["item"], c["turn"], c["request_hash"]) in leaders]
    assert len(reusable) == len(followers) == ITEMS * TURNS  # C1 asks as C0 did on every turn
    assert [c for c in reusable if c.get("reuse_of") is None] == []
    for c in reusable:
        assert c["reuse_of"] == leaders[(c["item"], c["turn"], c["request_hash"])]["seq"]
    b_seq = {(c["item"], c["turn"]): c["seq"] for c in calls if c["arm"] == "B"}
    for c in calls:
        if c["arm"] in ("C0", "Z"):
            assert f"pins_from=B#{b_seq[(c['item'], c['turn'])]}" in c["flags"], c["flags"]
            limits = {r["field"]: (r["before"], r["after"]) for r in c["rewrites"]}
            assert limits["max_completion_tokens"] == (999, 256)  # B's limit, not its own
