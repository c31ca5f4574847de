"""The audit's check of the arms' bounds: every arm that ran held the same bounds, and those are
the study's (run.json: `limits`, the study's table, and `arm_limits`, what each arm's backend
held as it read it back; rundir/runs/limits.py).

An arm that ran with more memory, more processes, more CPU or more disk than another had an
advantage the study does not show; a backend that held less than the study asked for (a bound
that was not applied) makes the study's bounds a claim it cannot back. Runs written before
bounds were recorded (no `limits`) are not checked.
"""

from __future__ import annotations

from rundir.runs import AppliedLimits, ResourceLimits, RunHeader


def _differences(held: AppliedLimits, study: ResourceLimits) -> list[str]:
    asked = {"pids": study.pids, "memory": study.memory, "disk": study.disk, "cpus": study.cpus}
    found = []
    for name, value in asked.items():
        applied = getattr(held, name)
        if applied is not None and applied != value:
            found.append(f"{name} {applied} (the study's: {value})")
    if held.memory_swap is not None and held.memory_swap != study.memory:
        found.append(f"memory with swap {held.memory_swap} (the study's: {study.memory}, no swap)")
    return found


def unequal_limits(header: RunHeader) -> list[tuple[str, str]]:
    """(where, what) for every arm whose bounds differ from another's or from the study's."""
    run = header.study
    if run is None or run.limits is None:
        return []
    found: list[tuple[str, str]] = []
    missing = [arm for arm in run.arms if arm not in run.arm_limits]
    ran = [arm for arm in run.arms if arm in run.arm_limits]
    if ran and missing:  # none recorded at all: the run stopped before an arm started
        for arm in missing:
            found.append((f"run.json arm_limits.{arm}", "no bounds recorded for this arm"))
    first = ran[0] if ran else None
    for arm in ran:
        held = run.arm_limits[arm]
        for difference in _differences(held, run.limits):
            found.append((f"run.json arm_limits.{arm}", f"held {difference}"))
        if first is not None and held != run.arm_limits[first]:
            found.append(
                (f"run.json arm_limits.{arm}", f"bounds differ from arm {first!r}'s: not equal")
            )
    return found
