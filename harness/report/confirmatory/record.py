"""Section 7's outcome as data (`Context.confirmed`), for the first screen and report.json.

At an interim look that does not stop, the design reveals only "stop" or "continue": the rows
then carry no effect, interval or status, so neither the first screen nor report.json can show
more than section 7 does.
"""

from __future__ import annotations

from harness.report.confirmatory.decision import EndpointResult, Reading
from harness.report.context import Confirmed, ConfirmedRow


def confirmed_record(
    verdict: str,
    why: str,
    results: list[EndpointResult],
    gates: list[Reading],
    ceilings: list[Reading],
) -> Confirmed:
    if why.endswith(": continue"):
        return Confirmed(verdict, why)
    rows = [
        ConfirmedRow(
            contrast=r.contrast,
            endpoint=r.endpoint.name,
            metric=r.endpoint.metric,
            estimate=r.estimate,
            low=r.low,
            high=r.high,
            status=r.status,
            n=r.n,
            planned_n=r.endpoint.planned_n,
        )
        for r in results
    ]
    return Confirmed(
        verdict,
        why,
        rows,
        gates={g.name: g.state for g in gates},
        ceilings={c.name: c.state for c in ceilings},
    )
