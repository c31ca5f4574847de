"""`harness audit RUN_DIR`: recompute a run's money and hashes from its files, with no key.

Checks, each reported as a discrepancy naming where it is:
- prices: the table given (or the one the run names) is the table the run was priced with;
- cost: every call re-priced from its recorded tokens equals the cost it logged;
- body: every request and response body hash is in the pack and its content hashes to it;
- file: every file in run.json's manifest is there with its size and SHA-256, and none was added;
- ledger_chain: the ledger's hash chain holds, and still reaches the head the run ended at;
- ledger_sum: the run's settlements in the ledger equal the call log, seq by seq and in total;
- protocol: the frozen files' and the addendum's hashes in run.json hold (audit/protocol.py);
- model: each pinned purpose's served model, its wrong_model flag and turn (audit/identity.py);
- turn_context: each returned turn context hashes to its hash, and each receiver's hash is its
  source's for the same item and turn (audit/context.py);
- parity: each main call of an arm under the study's [parity] names its answer model, asks for
  its output limit and shows its recalled memories under its top-k (audit/parity.py);
- proxy_egress: proxy_egress.jsonl parses, run.json's proxy_refused is its count, and a run
  whose proxy was refused anything did not pass (audit/proxy_egress.py);
- guard: where the study has a [guard], every turn with text has its verdict, and the guard's
  calls are noted (priced and settled by the cost and ledger checks) (audit/guard.py);
- shard: a merged run's every shard is still the run the merge took (its id and manifest hash)
  and its files still hash as its manifest lists them (rundir/merge/checks.py).
Nothing in the run directory or the ledger is changed; audit.json is written next to run.json.
"""

from __future__ import annotations

from collections.abc import Iterable
from decimal import Decimal
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from harness.checks.audit.context import turn_context_findings
from harness.checks.audit.files import body_findings, manifest_findings, read_call_log
from harness.checks.audit.guard import guard_findings
from harness.checks.audit.identity import identity_findings
from harness.checks.audit.ledger import check_ledger
from harness.checks.audit.limits import unequal_limits
from harness.checks.audit.money import ZERO, price_table_findings, reprice
from harness.checks.audit.parity import parity_findings
from harness.checks.audit.protocol import protocol_findings
from harness.checks.audit.proxy_egress import proxy_egress_findings
from harness.errors import HarnessError
from ledger.errors import PriceTableError
from ledger.ledger import Location, as_location, where
from ledger.prices import PriceTable, load_prices
from rundir.atomic import write_atomic
from rundir.calls import CallRecord, PackReader
from rundir.merge import shard_findings
from rundir.model import RunDirModel
from rundir.runs import RunHeader, now_iso, read_header, tool_version

AUDIT_SCHEMA: Literal[1] = 1
AUDIT_FILE = "audit.json"

Check = Literal[
    "run",
    "call_log",
    "prices",
    "cost",
    "body",
    "file",
    "ledger_chain",
    "ledger_sum",
    "limits",
    "protocol",  # harness/checks/audit/protocol.py
    "model",  # harness/checks/audit/identity.py: served model against the purpose's pin
    "turn_context",  # harness/checks/audit/context.py: coupled arms' handed turn context
    "parity",  # harness/checks/audit/parity.py: main calls of arms under [parity] hold to it
    "judgments",  # harness/judge/audit.py: the judgment sets that judge the run
    "proxy_egress",  # harness/checks/audit/proxy_egress.py: the proxy's own refused traffic
    "guard",  # harness/checks/audit/guard.py: every turn's verdict where the study has a guard
    "shard",  # rundir/merge/checks.py: a merged run's shards, each re-hashed where it is
]


class Discrepancy(BaseModel):
    model_config = ConfigDict(extra="forbid")

    check: Check
    where: str  # e.g. "calls.jsonl:3 (seq 3)", "bodies/pack.bin", "ledger.jsonl:7"
    detail: str


class AuditCounts(BaseModel):
    model_config = ConfigDict(extra="forbid")

    calls: int = 0
    calls_repriced: int = 0
    bodies_checked: int = 0
    files_checked: int = 0
    settlements: int = 0


class AuditTotals(BaseModel):
    model_config = ConfigDict(extra="forbid")

    call_log_usd: Decimal = ZERO
    repriced_usd: Decimal = ZERO
    ledger_usd: Decimal | None = None


class AuditRecord(RunDirModel):
    schema_: Literal[1] = Field(AUDIT_SCHEMA, alias="schema")
    run_id: str
    run_dir: str
    mode: str
    audited: str
    tool_version: str
    passed: bool
    prices_path: str
    prices_sha256: str
    run_prices_sha256: str | None
    ledger_path: str | None = None
    ledger_entries: int | None = None
    ledger_head: str | None = None
    counts: AuditCounts = Field(default_factory=AuditCounts)
    totals: AuditTotals = Field(default_factory=AuditTotals)
    discrepancies: list[Discrepancy] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)


def audit_run(
    run_dir: Path,
    prices: Path | None = None,
    ledger: Location | None = None,
    judgments: list[Path] | None = None,
) -> AuditRecord:
    """Audit `run_dir`; writes audit.json there and returns the record."""
    header = read_header(run_dir)
    manifest = header.manifest
    named = manifest.ledger_path if manifest else None
    ledger_path = ledger or (as_location(named) if named else None)
    table = _price_table(header, prices)
    record = _new_record(run_dir, header, table, ledger_path)
    flag = _Flagger(record)
    flag.all("prices", price_table_findings(record.run_prices_sha256, header.mode, table))
    calls = _money_and_files(run_dir, header, table, flag)
    flag.all("shard", shard_findings(header))  # a merged run: every shard re-checked
    if ledger_path is not None or header.mode == "live":
        _ledger(ledger_path, header, calls, flag)
    _study_checks(run_dir, header, calls, flag)
    _judgment_sets(run_dir, header, judgments, flag)
    record.passed = not record.discrepancies
    write_atomic(run_dir / AUDIT_FILE, record.model_dump_json(by_alias=True, indent=2) + "\n")
    return record


class _Flagger:
    """Adds each finding of a check to the record as a discrepancy named by that check."""

    def __init__(self, record: AuditRecord) -> None:
        self.record = record

    def all(self, check: Check, findings: Iterable[tuple[str, str]]) -> None:
        for where_, detail in findings:
            self.record.discrepancies.append(Discrepancy(check=check, where=where_, detail=detail))

    def noted(self, check: Check, found: tuple[Iterable[tuple[str, str]], list[str]]) -> None:
        """A check that also returns notes (what it could not check, and why)."""
        findings, notes = found
        self.all(check, findings)
        self.record.notes += notes


def _price_table(header: RunHeader, prices: Path | None) -> PriceTable:
    """The table given, else the one the run's manifest names; unreadable is the user's error."""
    named = header.manifest.prices_path if header.manifest else None
    try:
        return load_prices(prices or (Path(named) if named else None))
    except PriceTableError as e:
        raise HarnessError(
            str(e), hint="pass --prices with the table the run was priced with"
        ) from None


def _new_record(
    run_dir: Path, header: RunHeader, table: PriceTable, ledger_path: Location | None
) -> AuditRecord:
    run_prices = header.manifest.prices_sha256 if header.manifest else None
    if run_prices is None and header.study is not None:
        run_prices = header.study.prices_sha256
    return AuditRecord(
        run_id=header.run_id,
        run_dir=str(run_dir),
        mode=header.mode,
        audited=now_iso(),
        tool_version=tool_version(),
        passed=False,
        prices_path=table.source,
        prices_sha256=table.sha256,
        run_prices_sha256=run_prices,
        ledger_path=where(ledger_path) if ledger_path else None,
    )


def _money_and_files(
    run_dir: Path, header: RunHeader, table: PriceTable, flag: _Flagger
) -> list[tuple[int, CallRecord]]:
    """The call log read and re-priced, its bodies and the manifest's files re-hashed."""
    counts, totals = flag.record.counts, flag.record.totals
    calls, found = read_call_log(run_dir, header.run_id)
    flag.all("call_log", found)
    counts.calls = len(calls)
    repriced = reprice(calls, table)
    flag.all("cost", repriced.findings)
    totals.call_log_usd, totals.repriced_usd = repriced.call_log_usd, repriced.repriced_usd
    counts.calls_repriced = repriced.calls_repriced
    found, counts.bodies_checked = body_findings(run_dir, calls)
    flag.all("body", found)
    found, counts.files_checked = manifest_findings(run_dir, header)
    flag.all("file", found)
    return calls


def _ledger(
    path: Location | None, header: RunHeader, calls: list[tuple[int, CallRecord]], flag: _Flagger
) -> None:
    record = flag.record
    checked = check_ledger(path, header, calls, record.totals.call_log_usd)
    flag.all("ledger_chain", checked.chain)
    flag.all("ledger_sum", checked.sums)
    record.notes += checked.notes
    if checked.entries is not None:
        record.ledger_entries, record.ledger_head = checked.entries, checked.head
    if checked.ledger_usd is not None:
        record.counts.settlements = checked.settlements
        record.totals.ledger_usd = checked.ledger_usd


def _study_checks(
    run_dir: Path, header: RunHeader, calls: list[tuple[int, CallRecord]], flag: _Flagger
) -> None:
    """The checks of what the study asked of every arm, each in its own module."""
    flag.all("limits", unequal_limits(header))  # every arm under the same, the study's
    flag.noted("protocol", protocol_findings(run_dir, header))  # frozen files, addendum, voids
    flag.noted("model", identity_findings(run_dir, header, calls))
    flag.all("turn_context", turn_context_findings(run_dir))  # coupled studies' handed context
    # engine parity (V9) in the captured requests
    flag.all("parity", parity_findings(header, calls, PackReader.open(run_dir)))
    flag.all("proxy_egress", proxy_egress_findings(run_dir, header))  # the proxy's own OS rule
    flag.noted("guard", guard_findings(run_dir, header, calls))  # the study's output guard


def _judgment_sets(
    run_dir: Path, header: RunHeader, judgments: list[Path] | None, flag: _Flagger
) -> None:
    from harness.judge import judgment_set_findings  # the judging stage's own re-check

    sets, findings = judgment_set_findings(run_dir, header.run_id, judgments)
    flag.all("judgments", findings)
    if sets:
        flag.record.notes.append("judgment sets re-checked: " + ", ".join(str(p) for p in sets))
