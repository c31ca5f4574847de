"""The audit's money checks (harness/checks/audit/run.py runs them): the price table given is
the one the run was priced with (`prices`), and every call re-priced from its recorded tokens
costs what it logged (`cost`). Each finding is (where, detail); the audit names its check."""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal

from ledger.errors import UnknownModelError
from ledger.prices import PriceTable, TokenCounts, UnpricedToolError, cost
from rundir.calls import CallRecord

ZERO = Decimal(0)


def token_counts(call: CallRecord) -> TokenCounts:
    """The call log's split back into the price table's (cache_write holds both lifetimes)."""
    t = call.tokens
    return TokenCounts(
        input=t.input,
        output=t.output,
        cache_read=t.cache_read,
        cache_write_5m=t.cache_write - t.cache_write_1h,
        cache_write_1h=t.cache_write_1h,
        reasoning=t.reasoning,
    )


def expected_cost(call: CallRecord, table: PriceTable) -> Decimal:
    """What the proxy should have charged (proxy/live/settle.py). Raises
    UnknownModelError for a model the table does not price."""
    if call.mode != "live" or call.reserved_usd == ZERO:
        return ZERO  # record/replay calls, free routes, calls refused before a reservation
    if call.tokens.source == "reservation":
        return call.reserved_usd  # no usage could be established: billed at the worst case
    if call.model_requested is None:
        raise UnknownModelError("(none)", table.source)
    # Server-tool fees are booked per use at the table's fees (a tool it cannot price raises).
    fees = table.fees(call.tokens.tool_uses)
    return cost(table.model(call.model_requested), token_counts(call)) + fees


def price_table_findings(
    run_sha: str | None, mode: str, table: PriceTable
) -> list[tuple[str, str]]:
    """The table's SHA-256 against the one the run recorded (a live run must have recorded one)."""
    if run_sha is None:
        if mode == "live":
            return [("run.json", "the run does not say which price table it used")]
        return []
    if run_sha != table.sha256:
        return [
            (
                table.source,
                f"the run was priced with the table of SHA-256 {run_sha}; this table's is "
                f"{table.sha256}: pass --prices with the table the run used",
            )
        ]
    return []


@dataclass
class Repricing:
    """Every call of the log re-priced: the totals both ways and where they differ."""

    findings: list[tuple[str, str]] = field(default_factory=list)
    call_log_usd: Decimal = ZERO
    repriced_usd: Decimal = ZERO
    calls_repriced: int = 0


def reprice(calls: list[tuple[int, CallRecord]], table: PriceTable) -> Repricing:
    """Each (line number, call) re-priced from its tokens; a model or tool the table lacks is a
    finding, not a crash: the audit goes on with the other calls."""
    out = Repricing()
    for lineno, call in calls:
        where = f"calls.jsonl:{lineno} (seq {call.seq})"
        out.call_log_usd += call.cost_usd
        try:
            expected = expected_cost(call, table)
        except UnknownModelError:
            out.findings.append((where, f"model {call.model_requested!r} is not in the table"))
            continue
        except UnpricedToolError as e:
            out.findings.append((where, f"server tool {e.tool!r} has no fee in the table"))
            continue
        out.repriced_usd += expected
        out.calls_repriced += 1
        if expected != call.cost_usd:
            out.findings.append(
                (where, f"logged cost_usd {call.cost_usd} but its tokens re-price to {expected}")
            )
    return out
