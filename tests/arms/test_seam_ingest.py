"""Seam v2 ingestion through the Python helper (arms/server.py) and the orchestrator's client
(arms/client.py), on a toy arm in its own process."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from datetime import datetime

import httpx
import pytest

from arms.client import SeamClient
from arms.seam import Ingest, IngestMessage, OpenSession, Turn
from tests.arms.arm_process import ArmProcess

DATE = datetime(2023, 5, 20, 2, 21)


@pytest.fixture(scope="module")
def toy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ArmProcess]:
    arm = ArmProcess("tests.arms.toy_arm", tmp_path_factory.mktemp("toy-ingest"))
    yield arm
    arm.stop()


def history(first: str, n: int = 3) -> Ingest:
    messages = [IngestMessage(role="user", content=first)]
    messages += [IngestMessage(role="assistant", content=f"reply {k}") for k in range(n - 1)]
    return Ingest(session_id="answer_1", date=DATE, messages=messages, deadline_ms=5000)


async def _events(client: SeamClient, session: str) -> str:
    turn = Turn(turn=0, user="events", deadline_ms=5000, clock=DATE)
    return (await client.collect(session, turn, 10)).text


def test_a_session_is_ingested_and_counted(toy: ArmProcess) -> None:
    async def go() -> None:
        async with SeamClient(toy.url) as client:
            await client.open_session(OpenSession(session_id="h1", item_id="q1", clock=DATE))
            result = await client.ingest("h1", history("I adopted a cat named Miso."), 10)
            assert (result.outcome, result.stored, result.error) == ("done", 3, None)
            assert "ingest h1 answer_1 3 at 2023-05-20" in await _events(client, "h1")

    asyncio.run(go())


def test_ingestion_past_its_deadline_is_cut_and_the_arms_work_stops(toy: ArmProcess) -> None:
    async def go() -> None:
        async with SeamClient(toy.url) as client:
            await client.open_session(OpenSession(session_id="h2", item_id="q2", clock=DATE))
            result = await client.ingest("h2", history("hang"), 0.5)
            assert result.outcome == "cut"  # at its deadline: the arm's ingestion hangs for good
            await asyncio.sleep(0.6)  # the helper polls the connection every 0.2 s
            assert "ingest answer_1 stopped" in await _events(client, "h2")

    asyncio.run(go())


def test_an_arm_that_does_not_ingest_is_refused_with_501_not_silence(toy: ArmProcess) -> None:
    with httpx.Client(base_url=toy.url, timeout=10, trust_env=False) as http:
        http.post("/sessions", json={"session_id": "h3", "item_id": "q", "clock": DATE.isoformat()})
        body = history("refuse").model_dump(mode="json")
        response = http.post("/sessions/h3/ingest", json=body)
        assert response.status_code == 501
        assert response.json()["error"] == "not_implemented"
        response = http.post("/sessions/h3/ingest", json=history("boom").model_dump(mode="json"))
        assert response.status_code == 500
        assert response.json()["message"] == "toy.ingest: RuntimeError: ingest broke"


@pytest.mark.parametrize(
    ("body", "named"),
    [
        ({"session_id": "s", "date": "2023-05-20T02:21:00", "messages": []}, "deadline_ms"),
        (
            {
                "session_id": "s",
                "date": "2023-05-20T02:21:00",
                "deadline_ms": 10,
                "messages": [{"role": "system", "content": "x"}],
            },
            "messages.0.role",
        ),
        (
            {
                "session_id": "s",
                "date": "yesterday",
                "deadline_ms": 10,
                "messages": [],
            },
            "date",
        ),
        (
            {
                "session_id": "s",
                "date": "2023-05-20T02:21:00",
                "deadline_ms": 10,
                "messages": [],
                "extra": 1,
            },
            "extra",
        ),
    ],
)
def test_a_bad_ingest_body_is_422_naming_the_field(toy: ArmProcess, body: dict, named: str) -> None:
    with httpx.Client(base_url=toy.url, timeout=10, trust_env=False) as http:
        http.post("/sessions", json={"session_id": "h4", "item_id": "q", "clock": DATE.isoformat()})
        response = http.post("/sessions/h4/ingest", json=body)
        assert response.status_code == 422
        assert named in response.json()["message"]
        unknown = http.post("/sessions/nope/ingest", json=history("x").model_dump(mode="json"))
        assert unknown.status_code == 404
