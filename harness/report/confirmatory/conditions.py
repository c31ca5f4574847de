"""A decision rule's conditions read against the endpoints' verdicts, for the report
(harness/report/confirmatory/decision.py) and the plan simulation
(harness/report/confirmatory/simulate.py) alike.

A condition is `any|all|no CONTRAST STATUS[|STATUS...]`, optionally `on NAME[,NAME...]` or
`except NAME[,NAME...]`, or `gates passed|failed`, or `ceiling NAME held|broken`
(harness/report/reading/analysis.py holds the grammar). Without `on`, a contrast's condition
reads its family endpoints; `on` names the endpoints read (guards outside the family
included), `except` takes names out of the family. `BELOW-SIZING` matches an endpoint whose upper
95% bound is below its sizing margin. `any` and `all` need at least one endpoint to read; `no`
holds on none.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from harness.report.reading import CONDITION


@dataclass(frozen=True)
class Verdict:
    """What a condition reads of one contrast on one endpoint."""

    contrast: str
    endpoint: str
    family: bool
    status: str
    below_sizing: bool = False


def holds(
    condition: str,
    verdicts: Sequence[Verdict],
    gates_passed: bool,
    ceilings: Mapping[str, str],
) -> bool:
    found = CONDITION.match(condition)
    if found is None:  # load_analysis refuses such a plan; a caller passing one is a bug
        raise ValueError(f"cannot read condition {condition!r}")
    if found["gates"]:
        return gates_passed if found["gates"] == "passed" else not gates_passed
    if found["ceiling"]:
        return ceilings.get(found["ceiling"], "not read") == found["held"]
    names = set((found["names"] or "").split(",")) - {""}
    read = [v for v in verdicts if v.contrast == found["contrast"]]
    if found["scope"] == "on":
        read = [v for v in read if v.endpoint in names]
    else:
        read = [v for v in read if v.family and v.endpoint not in names]
    wanted = set(found["status"].split("|"))
    matches = [v.status in wanted or ("BELOW-SIZING" in wanted and v.below_sizing) for v in read]
    if found["quant"] == "no":
        return not any(matches)
    if found["quant"] == "all":
        return bool(matches) and all(matches)
    return any(matches)
