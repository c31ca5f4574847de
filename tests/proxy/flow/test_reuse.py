"""Reuse hits (proxy/flow/reuse.py) through the addon's hooks in mitmproxy's test kit: a follower's
main request equal (masked) to its leader's of the same item and turn gets the leader's reply,
logged with `reuse_of` and booked nothing; a different request, another turn, another purpose
or a non-follower arm goes its usual way. Record mode and live mode (a fake vendor)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from proxy.app.addon import HarnessAddon
from proxy.flow.control import TurnRef
from proxy.flow.reuse import parse_reuse
from tests.fakevendor.server import FakeVendor
from tests.proxy.addon_kit import AddonKit, addon_context
from tests.proxy.live_helpers import STUDY_KEYS, live_options, settled_seqs

CHAT = "/openai/v1/chat/completions"
PORTS = {"C0": 8081, "C1": 8082, "Z": 8083}


def ask(text: str, **extra: Any) -> dict[str, Any]:
    return {"model": "gpt-4.1-mini", "messages": [{"role": "user", "content": text}], **extra}


def _turn(kit: AddonKit, item: str, turn: int) -> None:
    (addon,) = [a for a in kit.addons if isinstance(a, HarnessAddon)]
    for arm in PORTS:
        addon.turns.set(arm, TurnRef(item, turn))


async def _send(kit: AddonKit, arm: str, body: dict[str, Any], **headers: str) -> bytes:
    flow = await kit.send(kit.flow(CHAT, body, port=PORTS[arm], headers=headers))
    assert flow.response is not None and flow.response.status_code == 200
    return flow.response.content or b""


def _options(**extra: Any) -> dict[str, Any]:
    ports = [f"{port}={arm}" for arm, port in PORTS.items()]
    return {"harness_arm_ports": ports, "harness_reuse": ["C0=C1"], **extra}


async def _scenario(kit: AddonKit, stream: bool) -> None:
    extra = {"stream": True} if stream else {}
    _turn(kit, "i1", 1)
    leader = await _send(kit, "C0", ask("hello", **extra))
    assert await _send(kit, "C1", ask("hello", **extra)) == leader  # a hit: the same bytes
    await _send(kit, "C1", ask("hello there", **extra))  # another request: a miss
    await _send(kit, "Z", ask("hello", **extra))  # not a follower
    await _send(kit, "C1", ask("hello", **extra), **{"X-Harness-Purpose": "guard"})
    _turn(kit, "i1", 2)
    await _send(kit, "C1", ask("hello", **extra))  # the leader has not asked in this turn


def _check(calls: list[dict[str, Any]]) -> None:
    by_seq = {c["seq"]: c for c in calls}
    hits = [c for c in calls if c.get("reuse_of") is not None]
    assert len(hits) == 1, [(c["arm"], c.get("reuse_of")) for c in calls]
    (hit,) = hits
    leader = by_seq[hit["reuse_of"]]
    assert (leader["arm"], hit["arm"]) == ("C0", "C1")
    assert (hit["item"], hit["turn"]) == (leader["item"], leader["turn"]) == ("i1", 1)
    assert hit["request_hash"] == leader["request_hash"]
    assert hit["response_hash"] == leader["response_hash"]
    assert hit["cost_usd"] == "0" and hit["reserved_usd"] == "0"
    assert hit["tokens"]["input"] == hit["tokens"]["output"] == 0
    assert all("reuse_of" not in c for c in calls if c is not hit)  # the line is unchanged


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "streamed"])
async def test_record_mode_reuses_the_leaders_reply(tmp_path: Path, stream: bool) -> None:
    async with addon_context(tmp_path, **_options()) as kit:
        await _scenario(kit, stream)
        calls = kit.calls()
    _check(calls)
    assert len(calls) == 6


# Plain only: the test kit reads an upstream reply whole and never runs live mode's stream tap,
# which is what collects a streamed reply's bytes (record mode's streams are tested above; live
# streams through a real proxy process: tests/run/control/test_reuse_live_stream.py).
@pytest.mark.parametrize("stream", [False], ids=["plain"])
async def test_live_mode_reuses_without_a_vendor_call_or_booking(
    tmp_path: Path, stream: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, key in STUDY_KEYS.items():
        monkeypatch.setenv(name, key)
    with FakeVendor() as vendor:
        async with addon_context(tmp_path, **_options(**live_options(tmp_path, vendor))) as kit:
            await _scenario(kit, stream)
            calls = kit.calls()
        asked = len(vendor.requests)
    _check(calls)
    assert asked == 5  # six calls, one answered by the proxy from the leader's reply
    settled = settled_seqs(tmp_path / "ledger.jsonl")
    hit = next(c for c in calls if c.get("reuse_of") is not None)
    assert sorted(settled) == sorted(c["seq"] for c in calls if c is not hit)  # booked once


@pytest.mark.parametrize("entry", ["C0", "=C1", "C0=", "C0=C0"])
def test_a_bad_pair_is_refused(entry: str) -> None:
    with pytest.raises(ValueError, match="harness_reuse"):
        parse_reuse([entry])


def test_a_follower_of_two_leaders_is_refused() -> None:
    with pytest.raises(ValueError, match="two leaders"):
        parse_reuse(["C0=C1", "B=C1"])
