"""Reuse and B's pins under `--workers` (issue 36 item 1), through the addon's hooks: each
worker's copies (`C0@k`, `B@k`) run their own items interleaved with the other workers', and a
follower is served (reuse) or pinned (B's sampling) for every turn however the workers interleave
and however many items pass; a reused reply carries its leader's `wrong_model` flag into the
follower's call (live and record), so the follower's turn fails as the leader's does."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from proxy.app.addon import HarnessAddon
from proxy.flow.control import TurnRef
from rundir.calls.calllog import Rewrite
from rundir.calls.rewrites import as_sent
from tests.fakevendor.server import FakeVendor
from tests.proxy.addon_kit import AddonKit, addon_context
from tests.proxy.live_helpers import STUDY_KEYS, live_options

CHAT = "/openai/v1/chat/completions"
WORKERS = 4
ITEMS = 40  # ten items per worker: more than the old book's 64 kept turns, interleaved
TURNS = 2


def _instance(arm: str, k: int) -> str:
    return arm if k == 0 else f"{arm}@{k}"


def _ports() -> dict[str, int]:
    ports: dict[str, int] = {}
    for k in range(WORKERS):
        for n, arm in enumerate(("B", "C0", "C1")):
            ports[_instance(arm, k)] = 9000 + 10 * k + n
    return ports


PORTS = _ports()


def ask(text: str, model: str = "gpt-4.1-mini", **extra: Any) -> dict[str, Any]:
    return {"model": model, "messages": [{"role": "user", "content": text}], **extra}


async def _send(kit: AddonKit, instance: str, body: dict[str, Any]) -> None:
    flow = await kit.send(kit.flow(CHAT, body, port=PORTS[instance]))
    assert flow.response is not None and flow.response.status_code == 200


def _addon(kit: AddonKit) -> HarnessAddon:
    (addon,) = [a for a in kit.addons if isinstance(a, HarnessAddon)]
    return addon


def _options(tmp_path: Path, pins: str, **extra: Any) -> dict[str, Any]:
    study = tmp_path / "study.toml"
    study.write_text(pins)
    return {
        "harness_arm_ports": [f"{port}={name}" for name, port in PORTS.items()],
        "harness_reuse": ["C0=C1"],
        "harness_pins": str(study),
        **extra,
    }


async def test_every_workers_turn_is_reused_and_pinned_however_workers_interleave(
    tmp_path: Path,
) -> None:
    """Each worker k runs items k, k+4, ...; within a turn B, then C0, then C1 (the coupled
    order), but the workers' steps interleave, one step of each worker in turn."""
    pins = '[pins]\nfrom_arm = "B"\n'
    async with addon_context(tmp_path / "run", **_options(tmp_path, pins)) as kit:
        addon = _addon(kit)
        steps: list[list[tuple[str, str, int]]] = [[] for _ in range(WORKERS)]
        for item in range(ITEMS):
            k = item % WORKERS
            for turn in range(TURNS):
                for arm in ("B", "C0", "C1"):
                    steps[k].append((arm, f"i{item}", turn))
        for step in range(max(len(s) for s in steps)):
            for k in range(WORKERS):
                if step >= len(steps[k]):
                    continue
                arm, item, turn = steps[k][step]
                instance = _instance(arm, k)
                addon.turns.set(instance, TurnRef(item, turn))
                temperature = 0.3 if arm == "B" else 1.7
                await _send(kit, instance, ask(f"{item} {turn}", temperature=temperature))
        calls = kit.calls()
    followers = [c for c in calls if c["arm"] == "C1"]
    leaders = [c for c in calls if c["arm"] == "C0"]
    assert len(followers) == len(leaders) == ITEMS * TURNS
    assert all(c.get("reuse_of") is not None for c in followers)  # every reusable call reused
    by_seq = {c["seq"]: c for c in calls}
    for hit in followers:
        leader = by_seq[hit["reuse_of"]]
        assert (leader["arm"], leader["item"], leader["turn"]) == ("C0", hit["item"], hit["turn"])
    for c0 in leaders:  # sent at B's 0.3, never its own 1.7 (pins_from_missing)
        assert any(f.startswith("pins_from=B#") for f in c0["flags"]), c0["flags"]
        sent = as_sent({"temperature": 1.7}, [Rewrite(**r) for r in c0["rewrites"]])
        assert sent["temperature"] == 0.3


PINNED = '[pins.models]\nmain = "gpt-4.1-mini"\n'


async def test_a_reused_wrong_model_reply_is_flagged_on_the_follower_in_live_mode(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, key in STUDY_KEYS.items():
        monkeypatch.setenv(name, key)
    with FakeVendor() as vendor:
        vendor.script(["served_model=gpt-4o-2024-08-06"])
        options = _options(tmp_path, PINNED, **live_options(tmp_path, vendor))
        async with addon_context(tmp_path / "run", **options) as kit:
            for arm in ("C0", "C1"):
                _addon(kit).turns.set(arm, TurnRef("i1", 0))
                await _send(kit, arm, ask("hello"))
            calls = kit.calls()
    leader, follower = calls
    assert follower["reuse_of"] == leader["seq"]
    assert "wrong_model" in leader["flags"] and "wrong_model" in follower["flags"]
    assert follower["model_served"] == "gpt-4o-2024-08-06"


async def test_record_mode_flags_a_main_call_asking_for_another_model_than_the_pin(
    tmp_path: Path,
) -> None:
    """The pin checked before money: the stubs answer as the model asked for, so asking for
    gpt-4.1 under a gpt-4.1-mini pin is flagged (and its reuse on the follower too); a call
    asking for the pinned model, or another purpose's call, is not."""
    async with addon_context(tmp_path / "run", **_options(tmp_path, PINNED)) as kit:
        addon = _addon(kit)
        for arm in ("B", "C0", "C1"):
            addon.turns.set(arm, TurnRef("i1", 0))
        await _send(kit, "B", ask("hello"))
        await _send(kit, "C0", ask("hi", model="gpt-4.1"))
        await _send(kit, "C1", ask("hi", model="gpt-4.1"))
        calls = kit.calls()
    b, c0, c1 = calls
    assert "wrong_model" not in b["flags"]
    assert "wrong_model" in c0["flags"] and c1["reuse_of"] == c0["seq"]
    assert "wrong_model" in c1["flags"]
