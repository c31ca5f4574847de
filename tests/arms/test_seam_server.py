"""The seam helper (arms/seam_app.py, served by arms/server.py) for real: a toy arm in its own
process, raw HTTP."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from arms.seam import SEAM_VERSION
from tests.arms.arm_process import ArmProcess
from tests.arms.toy_arm import SLOW_GAP_S

CLOCK = "2024-05-01T10:00:00"


@pytest.fixture(scope="module")
def toy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ArmProcess]:
    arm = ArmProcess("tests.arms.toy_arm", tmp_path_factory.mktemp("toy"))
    yield arm
    arm.stop()


@pytest.fixture
def http(toy: ArmProcess) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=toy.url, timeout=30, trust_env=False) as client:
        yield client


def open_session(http: httpx.Client, session_id: str, **extra: Any) -> httpx.Response:
    body = {"session_id": session_id, "item_id": "item-1", "clock": CLOCK, **extra}
    return http.post("/sessions", json=body)


def turn_body(user: str, turn: int = 0) -> dict[str, Any]:
    return {"turn": turn, "user": user, "addon": "", "deadline_ms": 60_000, "clock": CLOCK}


def stream_turn(
    http: httpx.Client, session_id: str, user: str
) -> list[tuple[float, dict[str, Any]]]:
    """Every line of a turn with the monotonic time it arrived."""
    lines = []
    with http.stream("POST", f"/sessions/{session_id}/turns", json=turn_body(user)) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("application/x-ndjson")
        for raw in response.iter_lines():
            lines.append((time.monotonic(), json.loads(raw)))
    return lines


def test_health_names_the_arm_and_seam_version(http: httpx.Client) -> None:
    response = http.get("/health")
    assert response.status_code == 200
    assert response.json() == {"seam": SEAM_VERSION, "arm": "toy", "state_dir": None}


def test_turn_streams_deltas_then_done_with_full_text(http: httpx.Client) -> None:
    assert open_session(http, "echo").status_code == 201
    lines = [line for _, line in stream_turn(http, "echo", "echo one two three")]
    assert lines == [
        {"type": "delta", "text": "one "},
        {"type": "delta", "text": "two "},
        {"type": "delta", "text": "three "},
        {"type": "done", "text": "one two three "},
    ]


def test_first_line_arrives_before_the_arm_finishes(http: httpx.Client) -> None:
    open_session(http, "slow")
    sent = time.monotonic()
    lines = stream_turn(http, "slow", "slow")
    (first_at, first), (_, second), (done_at, done) = lines
    assert first == {"type": "delta", "text": "first "} and second["text"] == "second"
    assert done == {"type": "done", "text": "first second"}
    # The first line was flushed on its own, not held back until the reply was complete.
    assert first_at - sent < SLOW_GAP_S / 2
    assert done_at - first_at >= SLOW_GAP_S * 0.9


def test_exception_becomes_an_error_line_without_traceback(http: httpx.Client) -> None:
    open_session(http, "boom")
    with http.stream("POST", "/sessions/boom/turns", json=turn_body("boom")) as response:
        body = response.read().decode()
    assert response.status_code == 200
    lines = [json.loads(raw) for raw in body.splitlines()]
    assert lines == [
        {"type": "delta", "text": "partial "},
        {"type": "error", "message": "RuntimeError: kaboom"},
    ]
    assert "Traceback" not in body and "secret" not in body


def test_non_text_delta_is_an_error_line(http: httpx.Client) -> None:
    open_session(http, "bad")
    [(_, line)] = stream_turn(http, "bad", "bad")
    assert line["type"] == "error" and "yielded int" in line["message"]


def test_unknown_session_is_404(http: httpx.Client) -> None:
    response = http.post("/sessions/nobody/turns", json=turn_body("echo hi"))
    assert response.status_code == 404
    assert response.json()["error"] == "unknown_session"
    assert "POST /sessions first" in response.json()["message"]
    assert http.delete("/sessions/nobody").status_code == 404


def test_duplicate_session_is_409(http: httpx.Client) -> None:
    assert open_session(http, "twice").status_code == 201
    response = open_session(http, "twice")
    assert response.status_code == 409
    assert response.json()["error"] == "duplicate_session"


def test_bad_bodies_are_422_naming_the_field(http: httpx.Client) -> None:
    missing = http.post("/sessions", json={"session_id": "x", "item_id": "i"})
    assert missing.status_code == 422
    assert missing.json()["error"] == "bad_request" and "clock" in missing.json()["message"]

    misspelt = open_session(http, "typo", deadline=5)
    assert misspelt.status_code == 422 and "deadline" in misspelt.json()["message"]

    not_json = http.post(
        "/sessions", content=b"{nope", headers={"content-type": "application/json"}
    )
    assert not_json.status_code == 422 and not_json.json()["error"] == "bad_request"

    open_session(http, "valid")
    bad_turn = http.post("/sessions/valid/turns", json={**turn_body("x"), "deadline_ms": 0})
    assert bad_turn.status_code == 422 and "deadline_ms" in bad_turn.json()["message"]


def test_unknown_route_is_json_404(http: httpx.Client) -> None:
    response = http.get("/nowhere")
    assert response.status_code == 404 and response.json()["error"] == "not_found"
    wrong_method = http.get("/sessions")
    assert wrong_method.status_code == 405 and wrong_method.json()["error"] == "bad_method"


def test_failed_open_is_500_and_the_id_stays_free(http: httpx.Client) -> None:
    response = open_session(http, "fails", context="fail")
    assert response.status_code == 500
    assert response.json() == {
        "error": "arm_failed",
        "message": "toy.open_session: ValueError: cannot open this one",
    }
    assert open_session(http, "fails").status_code == 201


def test_delete_closes_then_the_session_is_gone(http: httpx.Client) -> None:
    open_session(http, "short")
    response = http.delete("/sessions/short")
    assert response.status_code == 200 and response.json() == {"session_id": "short"}
    assert http.post("/sessions/short/turns", json=turn_body("echo x")).status_code == 404
    assert open_session(http, "short").status_code == 201  # the id can be used again


def test_arm_stops_on_sigterm(tmp_path: Path) -> None:
    arm = ArmProcess("tests.arms.toy_arm", tmp_path)
    assert arm.stop() == 0
