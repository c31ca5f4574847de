"""The TypeScript seam helper (arms/node/seam.ts, compiled) served for real by Node.js, driven by
the orchestrator's own client (arms/client.py) and raw HTTP: it keeps the seam's promises as
the Python helper does.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import httpx
import pytest

from arms.client import SeamClient, SeamError
from arms.seam import OpenSession, Turn
from arms.server import parse_ready_line
from tests.arms.arm_process import STARTUP_TIMEOUT
from tests.child_process import ChildProcess

TOY = Path(__file__).with_name("node_toy_arm.js")
CLOCK = datetime(2024, 5, 1, 10, 0, 0)


class NodeArm(ChildProcess):
    def __init__(self, script: Path, log_dir: Path, env: dict[str, str]) -> None:
        super().__init__(["node", str(script)], log_dir / f"{script.stem}.stderr", env)
        assert self.proc.stdout is not None
        deadline = time.monotonic() + STARTUP_TIMEOUT
        url = None
        while url is None and time.monotonic() < deadline:
            line = self.proc.stdout.readline().decode()
            if not line:
                break
            url = parse_ready_line(line.strip())
        if url is None:
            self.stop()
            raise RuntimeError(f"node arm did not get ready:\n{self.log()}")
        self.url = url


@pytest.fixture(scope="module")
def toy(node_dist: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[NodeArm]:
    env = {"HARNESS_SEAM_JS": str(node_dist / "dist" / "seam.js")}
    arm = NodeArm(TOY, tmp_path_factory.mktemp("node-toy"), env)
    yield arm
    assert arm.stop() == 0  # SIGTERM: a clean stop, exit 0


def _turn(user: str, number: int = 0, addon: str = "") -> Turn:
    return Turn(turn=number, user=user, addon=addon, deadline_ms=60_000, clock=CLOCK)


def _session(session_id: str, item: str = "item-1") -> OpenSession:
    return OpenSession(session_id=session_id, item_id=item, clock=CLOCK)


async def test_health_sessions_and_a_streamed_turn(toy: NodeArm) -> None:
    async with SeamClient(toy.url) as client:
        health = await client.health()
        assert (health.seam, health.arm) == (2, "node-toy")
        await client.open_session(_session("s1"))
        with pytest.raises(SeamError) as duplicate:
            await client.open_session(_session("s1"))
        assert duplicate.value.status == 409
        result = await client.collect("s1", _turn("echo one two three"), 10)
        assert (result.outcome, result.text) == ("done", "one two three ")
        assert result.timing.first_token_s is not None
        addon = await client.collect("s1", _turn("addon", 1, addon="Answer briefly."), 10)
        assert addon.text == "addon\n\nAnswer briefly."
        await client.close_session("s1")
        with pytest.raises(SeamError) as gone:
            await client.close_session("s1")
        assert gone.value.status == 404


async def test_an_arm_that_throws_gets_an_error_line_and_keeps_serving(toy: NodeArm) -> None:
    async with SeamClient(toy.url) as client:
        await client.open_session(_session("s2"))
        failed = await client.collect("s2", _turn("throw"), 10)
        assert failed.outcome == "error" and failed.text == "about to fail "
        assert failed.error == "Error: the engine broke"  # one line, no stack
        bad = await client.collect("s2", _turn("bad", 1), 10)
        assert bad.outcome == "error" and "expected string" in (bad.error or "")
        assert (await client.collect("s2", _turn("echo ok", 2), 10)).text == "ok "
        with pytest.raises(SeamError) as refused:
            await client.open_session(_session("s3", item="refuse"))
        assert refused.value.status == 500 and "this item is refused" in str(refused.value)
        await client.open_session(_session("s3"))  # the failed id is free again


async def test_a_cut_turn_aborts_the_arms_work(toy: NodeArm) -> None:
    async with SeamClient(toy.url) as client:
        await client.open_session(_session("s4"))
        cut = await client.collect("s4", _turn("hang"), 1.0)
        assert (cut.outcome, cut.text) == ("cut", "waiting ")
        # The next turn of the session runs (within its own deadline, not cut), and the cut
        # one's finally has run.
        after = await client.collect("s4", _turn("closed", 1), 10)
        assert (after.outcome, after.text) == ("done", "true")


async def test_an_arm_that_ignores_the_cut_does_not_hold_up_the_next_turn(toy: NodeArm) -> None:
    async with SeamClient(toy.url) as client:
        await client.open_session(_session("s5"))
        cut = await client.collect("s5", _turn("stuck"), 1.0)
        assert (cut.outcome, cut.text) == ("cut", "stuck ")
        after = await client.collect("s5", _turn("echo after", 1), 10)
        assert (after.outcome, after.text) == ("done", "after ")  # not held up to its deadline


@pytest.mark.parametrize(
    ("body", "words"),
    [
        (
            {"session_id": "x", "item_id": "i", "clock": "2024-05-01T10:00:00", "deadline": 1},
            ["deadline: extra inputs are not permitted"],
        ),
        ({"session_id": "bad id!", "item_id": "i", "clock": "2024-05-01T10:00:00"}, ["session_id"]),
        ({"session_id": "x", "item_id": "i", "clock": "not a time"}, ["clock"]),
        ({"session_id": "x", "clock": "2024-05-01T10:00:00"}, ["item_id: field required"]),
    ],
)
def test_a_bad_session_body_is_refused_with_a_problem(
    toy: NodeArm, body: dict[str, object], words: list[str]
) -> None:
    response = httpx.post(f"{toy.url}/sessions", json=body, trust_env=False)
    assert response.status_code == 422
    problem = response.json()
    assert problem["error"] == "bad_request"
    for word in words:
        assert word in problem["message"]


def test_unknown_routes_methods_and_sessions_get_the_seams_problems(toy: NodeArm) -> None:
    with httpx.Client(base_url=toy.url, trust_env=False) as http:
        assert http.get("/nowhere").json()["error"] == "not_found"
        assert http.get("/sessions").status_code == 405
        turn = {"turn": 0, "user": "x", "deadline_ms": 1000, "clock": "2024-05-01T10:00:00"}
        missing = http.post("/sessions/ghost/turns", json=turn)
        assert missing.status_code == 404 and missing.json()["error"] == "unknown_session"
        huge = http.post("/sessions", content=b"{" + b" " * (2 << 20) + b"}")
        assert huge.status_code == 422
        assert http.get("/health").json() == {"seam": 2, "arm": "node-toy", "state_dir": None}


async def test_ingest_is_refused_with_501_by_an_arm_that_does_not_ingest(toy: NodeArm) -> None:
    from arms.seam import Ingest, IngestMessage

    async with SeamClient(toy.url) as client:
        await client.open_session(_session("s-ingest"))
        body = Ingest(
            session_id="answer_1",
            date=CLOCK,
            messages=[IngestMessage(role="user", content="I adopted a cat.", speaker="Ann")],
            deadline_ms=5000,
        )
        result = await client.ingest("s-ingest", body, 10)
        assert result.outcome == "error"
        assert "501" in (result.error or "") and "does not ingest" in (result.error or "")
    with httpx.Client(base_url=toy.url, timeout=10, trust_env=False) as http:
        bad = body.model_dump(mode="json") | {"messages": [{"role": "system", "content": "x"}]}
        response = http.post("/sessions/s-ingest/ingest", json=bad)
        assert response.status_code == 422 and "messages" in response.json()["message"]


async def test_a_handed_turn_context_is_a_system_prompt_in_node_too(toy: NodeArm) -> None:
    """A coupled study's turn (addon_from set, docs/coupled.md): the Node helper accepts it and
    keeps the context out of the user message, as the Python helper does."""
    async with SeamClient(toy.url) as client:
        await client.open_session(_session("s-ctx"))
        handed = Turn(
            turn=0, user="system", addon="B's context", addon_from="B", deadline_ms=60_000,
            clock=CLOCK,
        )  # fmt: skip
        assert (await client.collect("s-ctx", handed, 10)).text == "system|B's context"
        scripted = await client.collect("s-ctx", _turn("system", 1, addon="Be brief."), 10)
        assert scripted.text == "system\n\nBe brief.|"
