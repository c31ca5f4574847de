"""The study file: every bad field fails before anything starts, saying what to fix."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.errors import HarnessError
from harness.study import load_study
from tests.helpers.studies import harness, toy_arm, write_study

pytestmark = pytest.mark.integration

ITEM = {"id": "i1", "clock": "2024-05-01T10:00:00", "turns": [{"user": "echo hi"}]}


def test_a_good_study_loads(tmp_path: Path) -> None:
    study = load_study(write_study(tmp_path, {"a": toy_arm(X="1")}, [ITEM], deadline_ms=500))
    assert study.deadline_ms == 500
    assert study.arms["a"].env == {"X": "1"}
    assert study.items[0].turns[0].user == "echo hi"
    assert len(study.study_sha256) == 64 and study.compose_sha256 is None


@pytest.mark.parametrize("deadline", [0, -5])
def test_a_bad_deadline_is_named(tmp_path: Path, deadline: int) -> None:
    path = write_study(tmp_path, {"a": toy_arm()}, [ITEM], deadline_ms=deadline)
    with pytest.raises(HarnessError) as e:
        load_study(path)
    assert str(path) in str(e.value) and "deadline_ms" in str(e.value)
    assert "greater than 0" in str(e.value)


@pytest.mark.parametrize(
    ("cap", "words"), [("1e3", "not an amount in USD"), ("$10", "no $ or USD")]
)
def test_a_stage_cap_is_read_as_every_cap_is(tmp_path: Path, cap: str, words: str) -> None:
    """The one USD reader (ledger/usd.py): what `--stage-cap` refuses, study.toml refuses too."""
    path = write_study(tmp_path, {"a": toy_arm()}, [ITEM], stage_cap=cap)
    with pytest.raises(HarnessError) as e:
        load_study(path)
    assert f"stage_cap {cap!r}" in str(e.value) and words in str(e.value)
    assert 'e.g. stage_cap = "10"' in str(e.value)
    closed = write_study(tmp_path / "closed", {"a": toy_arm()}, [ITEM], stage_cap="0")
    assert load_study(closed).file.stage_cap == "0"


def test_an_unreadable_items_file_is_named(tmp_path: Path) -> None:
    path = write_study(tmp_path, {"a": toy_arm()}, [ITEM])
    (tmp_path / "items.jsonl").unlink()
    with pytest.raises(HarnessError) as e:
        load_study(path)
    assert "'items'" in str(e.value) and "items.jsonl" in str(e.value)
    assert "create it or point items at an existing file" in str(e.value)


def test_a_bad_item_line_is_named(tmp_path: Path) -> None:
    path = write_study(tmp_path, {"a": toy_arm()}, [ITEM, {"id": "i2", "turns": []}])
    with pytest.raises(HarnessError) as e:
        load_study(path)
    assert "items.jsonl:2" in str(e.value) and "clock" in str(e.value)


def test_a_missing_compose_service_is_named(tmp_path: Path) -> None:
    path = write_study(tmp_path, {}, [ITEM])
    path.write_text(path.read_text() + 'arms = ["bare", "ghost"]\n')
    # TOML: the top-level key must come before any table; here there is none.
    (tmp_path / "compose.yaml").write_text(
        "services:\n  bare:\n    command: python -m arms.bare\n  proxy:\n    image: x\n"
    )
    with pytest.raises(HarnessError) as e:
        load_study(path)
    message = str(e.value)
    assert "'ghost' is not a service in" in message and "compose.yaml" in message
    assert "services: bare, proxy" in message and "add the service" in message


def test_compose_services_give_command_and_environment(tmp_path: Path) -> None:
    path = write_study(tmp_path, {}, [ITEM])
    path.write_text(path.read_text() + 'arms = ["bare"]\n')
    (tmp_path / "compose.yaml").write_text(
        "services:\n  bare:\n    command: python -m arms.bare\n"
        "    environment:\n      - ARM_MODEL=m1\n"
    )
    study = load_study(path)
    assert study.arms["bare"].command == ["python", "-m", "arms.bare"]
    assert study.arms["bare"].env == {"ARM_MODEL": "m1"}
    assert study.compose_sha256 is not None


def test_unknown_fields_and_bad_pins_are_named(tmp_path: Path) -> None:
    path = write_study(tmp_path, {"a": toy_arm()}, [ITEM], deadline=5)
    with pytest.raises(HarnessError, match="deadline: Extra inputs are not permitted"):
        load_study(path)
    path = write_study(tmp_path, {"a": toy_arm()}, [ITEM])
    path.write_text(path.read_text() + "[pins]\ntemperature = 9\n")
    with pytest.raises(HarnessError, match=r"pins\.temperature"):
        load_study(path)


def test_the_cli_fails_before_starting_anything(tmp_path: Path) -> None:
    path = write_study(tmp_path / "s", {"a": toy_arm()}, [ITEM], deadline_ms=0)
    runs = tmp_path / "runs"
    done = harness("record", str(path), "--run-dir", str(runs))
    assert done.returncode == 2, done.stderr
    assert "deadline_ms" in done.stderr and "hint:" in done.stderr
    assert "Traceback" not in done.stderr
    assert not runs.exists()  # no run directory, so no process was started


def test_live_refuses_without_a_passing_record_run(tmp_path: Path) -> None:
    path = write_study(tmp_path / "s", {"a": toy_arm()}, [ITEM])
    runs = tmp_path / "runs"
    done = harness("live", str(path), "--cap", "1", "--run-dir", str(runs))
    assert done.returncode == 2
    assert "no passing record run of this study" in done.stderr
    assert "harness record" in done.stderr


def test_docker_isolation_without_an_engine_says_what_to_do(tmp_path: Path) -> None:
    path = write_study(tmp_path / "s", {"a": toy_arm()}, [ITEM])
    done = harness(
        "record",
        str(path),
        "--isolation",
        "docker",
        "--run-dir",
        str(tmp_path),
        env={"DOCKER_HOST": "unix:///nonexistent/docker.sock"},
    )
    assert done.returncode == 2 and "no Docker engine answers" in done.stderr
    assert "ensure-docker" in done.stderr


def test_unknown_arm_selection_is_named(tmp_path: Path) -> None:
    path = write_study(tmp_path / "s", {"a": toy_arm()}, [ITEM])
    done = harness("record", str(path), "--arm", "zz", "--run-dir", str(tmp_path / "runs"))
    assert done.returncode == 2 and "--arm zz" in done.stderr and "choose among a" in done.stderr


def test_capabilities_join_the_studys_and_the_arms_own(tmp_path: Path) -> None:
    path = write_study(tmp_path, {"a": toy_arm(), "b": toy_arm()}, [ITEM], cap_add=["chown"])
    text = path.read_text().replace("[arms.b]\n", '[arms.b]\ncap_add = ["CAP_NET_RAW"]\n')
    path.write_text(text)
    study = load_study(path)
    assert study.capabilities("a") == ["CHOWN"]
    assert study.capabilities("b") == ["CHOWN", "NET_RAW"]
    assert study.file.on_stray == "halt"  # the default: the first stray stops the run


@pytest.mark.parametrize(
    ("caps", "says"), [(["NET_RAWW"], "unknown capability NET_RAWW"), (["ALL"], "ALL is not")]
)
def test_a_bad_capability_is_named_before_anything_starts(
    tmp_path: Path, caps: list[str], says: str
) -> None:
    path = write_study(tmp_path, {"a": toy_arm()}, [ITEM], cap_add=caps)
    with pytest.raises(HarnessError, match="cap_add") as e:
        load_study(path)
    assert says in str(e.value)


def test_on_stray_takes_halt_or_fail_only(tmp_path: Path) -> None:
    path = write_study(tmp_path, {"a": toy_arm()}, [ITEM], on_stray="ignore")
    with pytest.raises(HarnessError, match="on_stray"):
        load_study(path)
