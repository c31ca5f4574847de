"""Replay mode through the addon's hooks in mitmproxy's test kit (tests/proxy/addon_kit.py).

A run is recorded in-process, then replayed from its call log: a recorded request gets the
recorded bytes back, and anything else (another request, one repeat too many, another arm) is a
loud miss in the vendor's error shape that nothing ever forwards.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from mitmproxy import exceptions

from tests.proxy.addon_kit import HAIKU, addon_context

ANTHROPIC = "/anthropic/v1/messages"
CHAT = "/openai/v1/chat/completions"
MESSAGE = {"model": HAIKU, "max_tokens": 64, "messages": [{"role": "user", "content": "Hello"}]}
ASK = {"model": "gpt-4.1-mini", "messages": [{"role": "user", "content": "Hello"}]}


async def record(run: Path, calls: list[tuple[str, dict[str, Any]]], **options: Any) -> list[Any]:
    async with addon_context(run, **options) as proxy:
        return [(await proxy.call(path, body))[1] for path, body in calls]


async def test_a_recorded_request_gets_the_recorded_reply(tmp_path: Path) -> None:
    recorded = await record(
        tmp_path / "source",
        [(ANTHROPIC, MESSAGE), (CHAT, ASK), (ANTHROPIC, {**MESSAGE, "stream": True})],
    )
    async with addon_context(
        tmp_path / "replay", harness_mode="replay", harness_replay_from=str(tmp_path / "source")
    ) as proxy:
        order = [(CHAT, ASK), (ANTHROPIC, MESSAGE), (ANTHROPIC, {**MESSAGE, "stream": True})]
        served = [(await proxy.call(path, body))[1] for path, body in order]
    assert served == [recorded[1], recorded[0], recorded[2]]  # matched by request, not by order
    calls = proxy.calls()
    assert [c["mode"] for c in calls] == ["replay"] * 3
    assert [c["outcome"] for c in calls] == ["ok"] * 3
    assert [c["flags"] for c in calls] == [["replay_of=2"], ["replay_of=1"], ["replay_of=3"]]


@pytest.mark.parametrize(
    "case",
    ["another request", "one repeat too many", "another arm"],
)
async def test_a_miss_fails_closed_in_the_vendors_error_shape(tmp_path: Path, case: str) -> None:
    await record(tmp_path / "source", [(CHAT, ASK)], harness_arm="alpha")
    sent = {"another request": {**ASK, "seed": 7}}.get(case, ASK)
    async with addon_context(
        tmp_path / "replay",
        harness_mode="replay",
        harness_replay_from=str(tmp_path / "source"),
        harness_arm="beta" if case == "another arm" else "alpha",
    ) as proxy:
        if case == "one repeat too many":
            first, _, _ = await proxy.call(CHAT, ASK)
            assert first == 200
        flow = proxy.flow(CHAT, sent)
        await proxy.send(flow)
    assert flow.response is not None and flow.response.status_code == 409
    assert flow.response.headers["x-should-retry"] == "false"  # a retry can only miss again
    error = flow.response.json()["error"]
    assert error["type"] == "invalid_request_error"
    assert "no recorded response" in error["message"]
    # Answered in the request hook: the request was never re-targeted at any upstream.
    assert (flow.request.host, flow.request.path) == ("127.0.0.1", CHAT)
    miss = proxy.calls()[-1]
    assert (miss["mode"], miss["status"], miss["outcome"]) == ("replay", 409, "replay_miss")


async def test_a_miss_in_anthropic_shape(tmp_path: Path) -> None:
    await record(tmp_path / "source", [(ANTHROPIC, MESSAGE)])
    async with addon_context(
        tmp_path / "replay", harness_mode="replay", harness_replay_from=str(tmp_path / "source")
    ) as proxy:
        status, reply, _ = await proxy.call(ANTHROPIC, {**MESSAGE, "max_tokens": 65})
    assert status == 409
    assert reply["type"] == "error" and set(reply["error"]) == {"type", "message"}
    assert reply["error"]["type"] == "conflict_error"  # Anthropic's 409, not a 500's api_error
    assert "no recorded response" in reply["error"]["message"]


async def test_masked_fields_do_not_break_a_match(tmp_path: Path) -> None:
    """The replay matches on the masked request: what the study masks may differ, nothing else."""
    options = {"harness_masks": ["metadata.trace"]}
    (recorded,) = await record(
        tmp_path / "source", [(CHAT, {**ASK, "user": "a", "metadata": {"trace": "1"}})], **options
    )
    async with addon_context(
        tmp_path / "replay",
        harness_mode="replay",
        harness_replay_from=str(tmp_path / "source"),
        **options,
    ) as proxy:
        status, served, _ = await proxy.call(CHAT, {**ASK, "user": "b", "metadata": {"trace": "2"}})
    assert status == 200 and served == recorded


@pytest.mark.parametrize("source", ["missing", "not a run", "itself"])
async def test_a_replay_source_that_cannot_serve_is_refused_at_start(
    tmp_path: Path, source: str
) -> None:
    run = tmp_path / "replay"
    where = {"missing": tmp_path / "nowhere", "not a run": tmp_path, "itself": run}[source]
    if source == "itself":
        await record(run, [(CHAT, ASK)])
    with pytest.raises(exceptions.OptionsError):
        async with addon_context(run, harness_mode="replay", harness_replay_from=str(where)):
            pass
    # The call log it had opened is closed now, not left for the garbage collector (whose
    # ResourceWarning would fail whichever test ran then). Open descriptors are asked, not
    # warnings: a warning may surface in a later test, or be a stranger's (CI saw one).
    assert [fd for fd in open_files() if fd.startswith(str(run))] == []


def open_files() -> list[str]:
    """What this process holds open, by path (Linux)."""
    held = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            held.append(os.readlink(f"/proc/self/fd/{fd}"))
        except OSError:  # the listing's own descriptor, closed by now
            continue
    return held
