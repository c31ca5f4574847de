"""`--isolation auto` without an engine: local, and the run says why."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from harness.isolation.choose import choose_isolation
from harness.study import load_study
from tests.helpers.studies import harness, header, only_run, toy_arm, write_study

pytestmark = pytest.mark.integration

ITEM = {"id": "i1", "clock": "2024-05-01T10:00:00", "turns": [{"user": "echo hi"}]}


def test_no_engine_means_local_with_the_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A socket nobody listens on: the docker CLI finds no engine, as on a machine without one.
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path / 'no-engine.sock'}")
    study = load_study(write_study(tmp_path / "s", {"a": toy_arm()}, [ITEM]))
    choice = choose_isolation(study)
    assert choice.isolation == "local"
    assert "no Docker engine answers" in choice.reason


def test_the_run_header_and_summary_say_why_local_was_chosen(tmp_path: Path) -> None:
    study = write_study(tmp_path / "s", {"a": toy_arm()}, [ITEM])
    runs = tmp_path / "runs"
    done = harness("record", str(study), "--run-dir", str(runs), env={"HARNESS_ISOLATION": "auto"})
    assert done.returncode == 0, done.stderr[-3000:]
    run = header(only_run(runs))["study"]
    # The toy arm runs a host path outside the study folder, or there is no engine/image: either
    # way local, with the condition named.
    assert run["isolation"] == "local"
    assert run["isolation_reason"].startswith("auto: ")
    assert f"isolation: local ({run['isolation_reason']})" in done.stdout


def test_a_host_without_loop_devices_or_a_kernel_log_is_named(tmp_path: Path) -> None:
    from harness.isolation.choose import host_problem

    present = tmp_path / "present"
    present.write_text("")
    missing = tmp_path / "missing"
    assert "loop devices" in (host_problem(loop_control=missing, kmsg=present) or "")
    unreadable = host_problem(loop_control=present, kmsg=missing) or ""
    assert "kernel log" in unreadable and str(missing) in unreadable
    if shutil.which("mkfs.ext4"):
        assert host_problem(loop_control=present, kmsg=present) is None


def test_make_backend_gives_the_named_backend_with_the_study_limits_and_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from harness.isolation.choose import make_backend
    from harness.isolation.local import LocalBackend

    study = load_study(write_study(tmp_path / "s", {"a": toy_arm()}, [ITEM]))
    named = make_backend("local", tmp_path / "run", study)
    assert isinstance(named, LocalBackend)
    assert named.isolation_reason == "--isolation local"
    assert named.limits == study.file.limits
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path / 'no-engine.sock'}")
    auto = make_backend("auto", tmp_path / "run2", study)
    assert isinstance(auto, LocalBackend)
    assert auto.isolation_reason.startswith("auto: no Docker engine answers")
