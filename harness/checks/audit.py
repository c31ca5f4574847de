"""`harness audit RUN_DIR`: recompute a run's money and hashes from its files, with no key.

Checks, each reported as a discrepancy naming where it is:
- prices: the table given (or the one the run names) is the table the run was priced with;
- cost: every call re-priced from its recorded tokens equals the cost it logged;
- body: every request and response body hash is in the pack and its content hashes to it;
- file: every file in run.json's manifest is there with its size and SHA-256, and none was added;
- ledger_chain: the ledger's hash chain holds, and still reaches the head the run ended at;
- ledger_sum: the run's settlements in the ledger equal the call log, seq by seq and in total;
- protocol: the frozen files' and the addendum's hashes in run.json hold (protocol_audit.py);
- model: each pinned purpose's served model, its wrong_model flag and turn (identity_audit.py);
- turn_context: each returned turn context hashes to its hash, and each receiver's hash is its
  source's for the same item and turn (context_audit.py);
- parity: each main call of an arm under the study's [parity] names its answer model, asks for
  its output limit and shows its recalled memories under its top-k (parity_audit.py);
- proxy_egress: proxy_egress.jsonl parses, run.json's proxy_refused is its count, and a run
  whose proxy was refused anything did not pass (proxy_egress_audit.py);
- guard: where the study has a [guard], every turn with text has its verdict, and the guard's
  calls are noted (priced and settled by the cost and ledger checks) (guard_audit.py);
- shard: a merged run's every shard is still the run the merge took (its id and manifest hash)
  and its files still hash as its manifest lists them (rundir/merge/checks.py).
Nothing in the run directory or the ledger is changed; audit.json is written next to run.json.
"""

from __future__ import annotations

import json
from collections import defaultdict
from decimal import Decimal
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from harness.checks.context_audit import turn_context_findings
from harness.checks.guard_audit import guard_findings
from harness.checks.identity_audit import identity_findings
from harness.checks.limits_audit import unequal_limits
from harness.checks.parity_audit import parity_findings
from harness.checks.protocol_audit import protocol_findings
from harness.checks.proxy_egress_audit import proxy_egress_findings
from harness.errors import HarnessError
from ledger.errors import LedgerError, PriceTableError, UnknownModelError
from ledger.ledger import (
    Location,
    as_location,
    display_name,
    entry_lines,
    exists,
    verify,
    where,
)
from ledger.prices import PriceTable, TokenCounts, UnpricedToolError, cost, load_prices
from rundir.atomic import write_atomic
from rundir.calls.calllog import UNSTORED_FLAGS, CallRecord
from rundir.calls.packread import PackReader
from rundir.merge.checks import shard_findings
from rundir.model import RunDirModel
from rundir.runs.header import RunHeader, now_iso, read_header
from rundir.runs.manifest import NOT_LISTED, file_sha256, tool_version

AUDIT_SCHEMA: Literal[1] = 1
AUDIT_FILE = "audit.json"
ZERO = Decimal(0)

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
    "protocol",  # harness/checks/protocol_audit.py
    "model",  # harness/checks/identity_audit.py: served model against the purpose's pin
    "turn_context",  # harness/checks/context_audit.py: coupled arms' handed turn context
    "parity",  # harness/checks/parity_audit.py: main calls of arms under [parity] hold to it
    "judgments",  # harness/judge/audit.py: the judgment sets that judge the run
    "proxy_egress",  # harness/checks/proxy_egress_audit.py: the proxy's own refused traffic
    "guard",  # harness/checks/guard_audit.py: every turn's verdict where the study has a guard
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
    named = manifest.prices_path if manifest else None
    prices_path = prices or (Path(named) if named else None)
    try:
        table = load_prices(prices_path)
    except PriceTableError as e:
        raise HarnessError(
            str(e), hint="pass --prices with the table the run was priced with"
        ) from None
    run_prices = manifest.prices_sha256 if manifest else None
    if run_prices is None and header.study is not None:
        run_prices = header.study.prices_sha256
    named = manifest.ledger_path if manifest else None
    ledger_path = ledger or (as_location(named) if named else None)
    record = AuditRecord(
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
    audit = _Audit(run_dir, header, record)
    audit.prices(table)
    calls = audit.call_log()
    audit.reprice(calls, table)
    audit.bodies(calls)
    audit.files()
    for where_, detail in shard_findings(header):  # a merged run: every shard re-checked
        audit.flag("shard", where_, detail)
    if ledger_path is not None or header.mode == "live":
        audit.ledger(ledger_path, calls)
    for where_, detail in unequal_limits(header):  # every arm under the same, the study's
        audit.flag("limits", where_, detail)
    found, notes = protocol_findings(run_dir, header)  # frozen files, addendum copy, voids
    for where_, detail in found:
        audit.flag("protocol", where_, detail)
    record.notes += notes
    found, notes = identity_findings(run_dir, header, calls)
    for where_, detail in found:
        audit.flag("model", where_, detail)
    record.notes += notes
    for where_, detail in turn_context_findings(run_dir):  # coupled studies' handed context
        audit.flag("turn_context", where_, detail)
    for where_, detail in parity_findings(header, calls, PackReader.open(run_dir)):
        audit.flag("parity", where_, detail)  # engine parity (V9) in the captured requests
    for where_, detail in proxy_egress_findings(run_dir, header):  # the proxy's own OS rule
        audit.flag("proxy_egress", where_, detail)
    found, notes = guard_findings(run_dir, header, calls)  # the study's output guard
    for where_, detail in found:
        audit.flag("guard", where_, detail)
    record.notes += notes
    from harness.judge.audit import judgment_set_findings  # the judging stage's own re-check

    sets, findings = judgment_set_findings(run_dir, header.run_id, judgments)
    for where_, detail in findings:
        audit.flag("judgments", where_, detail)
    if sets:
        record.notes.append("judgment sets re-checked: " + ", ".join(str(p) for p in sets))
    record.passed = not record.discrepancies
    write_atomic(run_dir / AUDIT_FILE, record.model_dump_json(by_alias=True, indent=2) + "\n")
    return record


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
    """What the proxy should have charged (proxy/live.py's settle rule). Raises
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


class _Audit:
    def __init__(self, run_dir: Path, header: RunHeader, record: AuditRecord) -> None:
        self.run_dir = run_dir
        self.header = header
        self.record = record

    def flag(self, check: Check, where: str, detail: str) -> None:
        self.record.discrepancies.append(Discrepancy(check=check, where=where, detail=detail))

    def prices(self, table: PriceTable) -> None:
        run_sha = self.record.run_prices_sha256
        if run_sha is None:
            if self.header.mode == "live":
                self.flag("prices", "run.json", "the run does not say which price table it used")
            return
        if run_sha != table.sha256:
            self.flag(
                "prices",
                table.source,
                f"the run was priced with the table of SHA-256 {run_sha}; this table's is "
                f"{table.sha256}: pass --prices with the table the run used",
            )

    def call_log(self) -> list[tuple[int, CallRecord]]:
        path = self.run_dir / "calls.jsonl"
        if not path.exists():
            return []
        calls: list[tuple[int, CallRecord]] = []
        seen: set[int] = set()
        with open(path, encoding="utf-8") as f:
            for lineno, line in enumerate(f, 1):
                if not line.strip():
                    continue
                try:
                    call = CallRecord.model_validate_json(line)
                except ValidationError as e:
                    self.flag("call_log", f"calls.jsonl:{lineno}", f"not a call record: {e}")
                    continue
                if call.run_id != self.header.run_id:
                    self.flag("call_log", f"calls.jsonl:{lineno}", f"run_id {call.run_id!r}")
                if call.seq in seen:
                    self.flag("call_log", f"calls.jsonl:{lineno}", f"seq {call.seq} twice")
                seen.add(call.seq)
                calls.append((lineno, call))
        self.record.counts.calls = len(calls)
        return calls

    def reprice(self, calls: list[tuple[int, CallRecord]], table: PriceTable) -> None:
        totals = self.record.totals
        for lineno, call in calls:
            where = f"calls.jsonl:{lineno} (seq {call.seq})"
            totals.call_log_usd += call.cost_usd
            try:
                expected = expected_cost(call, table)
            except UnknownModelError:
                self.flag("cost", where, f"model {call.model_requested!r} is not in the table")
                continue
            except UnpricedToolError as e:
                self.flag("cost", where, f"server tool {e.tool!r} has no fee in the table")
                continue
            totals.repriced_usd += expected
            self.record.counts.calls_repriced += 1
            if expected != call.cost_usd:
                self.flag(
                    "cost",
                    where,
                    f"logged cost_usd {call.cost_usd} but its tokens re-price to {expected}",
                )

    def bodies(self, calls: list[tuple[int, CallRecord]]) -> None:
        pack = PackReader.open(self.run_dir)
        if pack.damage is not None:
            at, why = pack.damage
            self.flag("body", "bodies/pack.bin", f"unreadable from byte {at}: {why}")
        for lineno, call in calls:
            for field, digest in (
                ("request_body", call.request_body),
                ("response_hash", call.response_hash),
            ):
                where = f"calls.jsonl:{lineno} (seq {call.seq}) {field}"
                if UNSTORED_FLAGS[field] in call.flags:
                    self.flag("body", where, "the proxy could not store this body (a full disk?)")
                if digest is None:
                    continue
                self.record.counts.bodies_checked += 1
                if digest not in pack:
                    self.flag("body", where, f"body {digest} is not in bodies/pack.bin")
                    continue
                try:
                    pack.get(digest)
                except ValueError as e:
                    self.flag("body", where, f"body {digest} was altered: {e}")

    def files(self) -> None:
        manifest = self.header.manifest
        if manifest is None:
            self.flag("file", "run.json", "no manifest: the run did not finish, or predates it")
            return
        listed = set()
        for entry in manifest.files:
            listed.add(entry.path)
            path = self.run_dir / entry.path
            self.record.counts.files_checked += 1
            if not path.is_file():
                self.flag("file", entry.path, "listed in the manifest but missing")
            elif path.stat().st_size != entry.size or file_sha256(path) != entry.sha256:
                self.flag(
                    "file",
                    entry.path,
                    f"changed since the run: manifest says {entry.size} bytes, SHA-256 "
                    f"{entry.sha256}; now {path.stat().st_size} bytes, {file_sha256(path)}",
                )
        for path in sorted(p for p in self.run_dir.rglob("*") if p.is_file()):
            relative = path.relative_to(self.run_dir).as_posix()
            if relative in listed or relative in NOT_LISTED or relative.endswith(".tmp"):
                continue
            self.flag("file", relative, "not in the manifest: added after the run")

    def ledger(self, path: Location | None, calls: list[tuple[int, CallRecord]]) -> None:
        if path is None or not exists(path) or (isinstance(path, Path) and not path.is_file()):
            self.flag(
                "ledger_chain",
                str(path or "(none)"),
                "the ledger is missing: pass --ledger with the ledger the run was charged to",
            )
            return
        name = display_name(path)
        try:
            report = verify(path)
            raw = entry_lines(path)
        except LedgerError as e:  # a PostgreSQL ledger that cannot be reached
            self.flag("ledger_chain", name, f"cannot read the ledger: {e}")
            return
        self.record.ledger_entries, self.record.ledger_head = report.entries, report.head
        for lineno, problem in report.problems:
            self.flag("ledger_chain", f"{name}:{lineno}", problem)
        if report.torn_tail:
            self.record.notes.append(f"{name}: {report.torn_tail}")
        lines = _ledger_lines(raw)
        self._ledger_head(name, lines)
        self._settlements(name, lines, calls)

    def _ledger_head(self, name: str, lines: list[dict[str, object]]) -> None:
        manifest = self.header.manifest
        ends: list[tuple[str, int | None, str | None]] = []
        if manifest is not None:
            ends.append(("the run", manifest.ledger_entries, manifest.ledger_head))
        if self.header.study is not None:  # a merged run: where each shard's run ended
            ends += [
                (f"shard {s.index}/{s.count}", s.ledger_entries, s.ledger_head)
                for s in self.header.study.merged_from
            ]
        for who, seq, head in ends:
            if not seq:
                continue
            entry = next((e for e in lines if e.get("seq") == seq), None)
            if entry is None:
                self.flag(
                    "ledger_chain",
                    name,
                    f"{who} ended at entry {seq} but the ledger has no entry {seq}: lines were "
                    "removed from its end",
                )
            elif entry.get("hash") != head:
                self.flag(
                    "ledger_chain",
                    f"{name} entry {seq}",
                    f"its hash is not the head {who} ended at ({head})",
                )

    def _settlements(
        self, name: str, lines: list[dict[str, object]], calls: list[tuple[int, CallRecord]]
    ) -> None:
        # A merged run's calls were settled under each shard's run id and seq: map them to the
        # merged call numbers (rundir/merge/join.py: merged seq = the shard's seq_offset + its seq).
        study = self.header.study
        offsets = {self.header.run_id: 0}
        if study is not None:
            offsets.update({shard.run_id: shard.seq_offset for shard in study.merged_from})
        booked: dict[int, list[Decimal]] = defaultdict(list)
        totals: dict[str, Decimal] = {}
        for entry in lines:
            fields = entry.get("fields")
            if not isinstance(fields, dict):
                continue
            if entry.get("kind") == "calls_settled":
                for settled in fields.get("calls") or []:
                    owner = settled.get("run_id") if isinstance(settled, dict) else None
                    if isinstance(owner, str) and owner in offsets:
                        seq = offsets[owner] + int(settled["seq"])
                        booked[seq].append(Decimal(str(settled["cost_usd"])))
            elif (
                entry.get("kind") == "run_settled"
                and fields.get("run_id") in offsets
                and fields.get("basis") == "settlements"
            ):
                totals[str(fields["run_id"])] = Decimal(str(fields["total_usd"]))
        # The run's own total: every shard's, once each has settled by its settlements.
        shards = len(offsets) - 1 if len(offsets) > 1 else 1
        run_total = sum(totals.values(), ZERO) if len(totals) == shards else None
        self.record.counts.settlements = sum(len(v) for v in booked.values())
        ledger_usd = sum((sum(v, ZERO) for v in booked.values()), ZERO)
        self.record.totals.ledger_usd = ledger_usd
        logged = {call.seq: (lineno, call) for lineno, call in calls}
        for seq, (lineno, call) in sorted(logged.items()):
            settled = booked.get(seq, [])
            where = f"calls.jsonl:{lineno} (seq {seq})"
            if not settled:
                if call.cost_usd != ZERO or call.reserved_usd != ZERO:
                    self.flag("ledger_sum", where, f"cost {call.cost_usd}: no settlement in {name}")
            elif len(settled) > 1:
                self.flag("ledger_sum", where, f"settled {len(settled)} times in {name}")
            elif settled[0] != call.cost_usd:
                self.flag(
                    "ledger_sum",
                    where,
                    f"call log says {call.cost_usd}, {name} settled {settled[0]}",
                )
        for seq in sorted(set(booked) - set(logged)):
            self.flag("ledger_sum", f"{name} seq {seq}", "settled but not in the call log")
        call_total = self.record.totals.call_log_usd
        if ledger_usd != call_total:
            self.flag(
                "ledger_sum",
                name,
                f"run total: call log {call_total}, ledger settlements {ledger_usd}",
            )
        if run_total is not None and run_total != call_total:
            self.flag(
                "ledger_sum",
                f"{name} run_settled",
                f"run total {run_total}, call log {call_total}",
            )


def _ledger_lines(lines: list[bytes]) -> list[dict[str, object]]:
    """Every line that parses, chain or not: the sums are checked even on a broken chain."""
    out = []
    for raw in lines:
        try:
            entry = json.loads(raw)
        except ValueError:
            continue
        if isinstance(entry, dict):
            out.append(entry)
    return out
