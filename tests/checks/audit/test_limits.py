"""The audit flags an arm whose bounds differ from another's or from the study's
(harness/checks/audit/limits.py)."""

from __future__ import annotations

from harness.checks.audit.limits import unequal_limits
from rundir.runs.header import RunHeader, StudyRun
from rundir.runs.limits import MIB, AppliedLimits, ResourceLimits

STUDY = ResourceLimits(pids=64, memory=256 * MIB, cpus=1, disk=64 * MIB)
HELD = AppliedLimits(
    pids=64, memory=256 * MIB, memory_swap=256 * MIB, cpus=1.0, disk=64 * MIB, read_only_root=True
)


def header(
    arm_limits: dict[str, AppliedLimits], limits: ResourceLimits | None = STUDY
) -> RunHeader:
    study = StudyRun(
        name="s", study_path="s.toml", study_sha256="0", items_sha256="0", isolation="docker",
        clock_pinning="libfaketime", arms=["a", "b"], deadline_ms=1000, limits=limits,
        arm_limits=arm_limits,
    )  # fmt: skip
    return RunHeader(run_id="r", mode="record", kind="study", started="t", study=study)


def test_equal_bounds_that_are_the_studys_pass() -> None:
    assert unequal_limits(header({"a": HELD, "b": HELD})) == []


def test_an_arm_with_more_memory_is_named() -> None:
    roomier = HELD.model_copy(update={"memory": 512 * MIB, "memory_swap": 512 * MIB})
    found = unequal_limits(header({"a": HELD, "b": roomier}))
    assert [where for where, _ in found] == ["run.json arm_limits.b"] * 3
    assert any("memory 536870912 (the study's: 268435456)" in what for _, what in found)
    assert any("differ from arm 'a'" in what for _, what in found)


def test_swap_given_and_an_arm_without_bounds_are_named() -> None:
    swapping = HELD.model_copy(update={"memory_swap": -1})
    assert any("swap" in what for _, what in unequal_limits(header({"a": swapping, "b": swapping})))
    found = unequal_limits(header({"a": HELD}))
    assert found == [("run.json arm_limits.b", "no bounds recorded for this arm")]


def test_a_run_from_before_bounds_were_recorded_is_not_checked() -> None:
    assert unequal_limits(header({}, limits=None)) == []
