"""The harness's seam client speaks to a real arm (tests/toy_arms/study_arm.py, started as the
backends start arms) over plain HTTP without building TLS machinery: the same health, session
and turn as `arms.client.SeamClient`, for a small fraction of its CPU per client."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest

from arms.client import SeamClient
from arms.seam import OpenSession, Turn
from arms.server import parse_ready_line
from harness.isolation.seam_http import PlainSeamClient, seam_client
from tests.helpers.studies import TOY_ARM


@pytest.fixture(scope="module")
def arm_url() -> Iterator[str]:
    arm = subprocess.Popen(
        [sys.executable, str(TOY_ARM), "--port", "0", "--host", "127.0.0.1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert arm.stdout is not None
    try:
        for line in arm.stdout:
            if url := parse_ready_line(line.strip()):
                yield url
                break
        else:
            pytest.fail("the toy arm never said it was ready")
    finally:
        arm.terminate()
        arm.wait()


async def test_a_plain_client_runs_a_turn_on_a_real_arm(arm_url: str) -> None:
    async with seam_client(arm_url) as client:
        assert isinstance(client, PlainSeamClient)
        health = await client.health()
        await client.open_session(
            OpenSession(session_id="s1", item_id="i1", clock=datetime(2024, 5, 1, tzinfo=UTC))
        )
        result = await client.collect(
            "s1", Turn(turn=0, user="echo plain seam", deadline_ms=10_000, clock=datetime.now(UTC))
        )
    assert health.arm == "study-toy"
    assert result.outcome == "done" and result.text.strip() == "plain seam"


def test_a_plain_client_costs_a_small_fraction_of_a_default_ones_cpu() -> None:
    def cpu(make: type[SeamClient], n: int = 30) -> float:
        started = time.process_time()
        for _ in range(n):
            make("http://127.0.0.1:9")
        return time.process_time() - started

    cpu(PlainSeamClient, 3)  # imports and the one shared context, outside the count
    assert cpu(PlainSeamClient) * 20 < cpu(SeamClient)


def test_a_tls_seam_keeps_the_default_client() -> None:
    assert type(seam_client("https://127.0.0.1:9")) is SeamClient
    with pytest.raises(ValueError, match="plain HTTP"):
        PlainSeamClient("https://127.0.0.1:9")
