"""The audit's ledger checks (harness/checks/audit/run.py runs them): the ledger's hash chain holds
and still reaches the head each run (or each merged shard) ended at (`ledger_chain`), and the
run's settlements in it equal the call log, seq by seq and in total (`ledger_sum`)."""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path

from harness.checks.audit.money import ZERO
from ledger.errors import LedgerError
from ledger.ledger import Location, display_name, entry_lines, exists, verify
from rundir.calls import CallRecord
from rundir.runs import RunHeader

Findings = list[tuple[str, str]]


@dataclass
class LedgerCheck:
    """What the ledger showed: the findings of each check and what the audit record keeps."""

    chain: Findings = field(default_factory=list)
    sums: Findings = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    entries: int | None = None
    head: str | None = None
    settlements: int = 0
    ledger_usd: Decimal | None = None


def check_ledger(
    path: Location | None,
    header: RunHeader,
    calls: list[tuple[int, CallRecord]],
    call_log_usd: Decimal,
) -> LedgerCheck:
    """The chain, the heads the run ended at, then the settlements against the call log."""
    out = LedgerCheck()
    if path is None or not exists(path) or (isinstance(path, Path) and not path.is_file()):
        missing = "the ledger is missing: pass --ledger with the ledger the run was charged to"
        out.chain.append((str(path or "(none)"), missing))
        return out
    name = display_name(path)
    try:
        report = verify(path)
        raw = entry_lines(path)
    except LedgerError as e:  # a PostgreSQL ledger that cannot be reached
        out.chain.append((name, f"cannot read the ledger: {e}"))
        return out
    out.entries, out.head = report.entries, report.head
    out.chain += [(f"{name}:{lineno}", problem) for lineno, problem in report.problems]
    if report.torn_tail:
        out.notes.append(f"{name}: {report.torn_tail}")
    lines = _ledger_lines(raw)
    out.chain += _head_findings(name, lines, header)
    booked, run_total = _settled(lines, _seq_offsets(header))
    out.settlements = sum(len(v) for v in booked.values())
    out.ledger_usd = sum((sum(v, ZERO) for v in booked.values()), ZERO)
    out.sums = _sum_findings(name, booked, calls)
    if out.ledger_usd != call_log_usd:
        detail = f"run total: call log {call_log_usd}, ledger settlements {out.ledger_usd}"
        out.sums.append((name, detail))
    if run_total is not None and run_total != call_log_usd:
        out.sums.append((f"{name} run_settled", f"run total {run_total}, call log {call_log_usd}"))
    return out


def _head_findings(name: str, lines: list[dict[str, object]], header: RunHeader) -> Findings:
    """Each end the run recorded (its own, and a merged run's every shard's) is still an entry
    of the ledger with that hash: lines removed from the ledger's end fail here."""
    ends: list[tuple[str, int | None, str | None]] = []
    if header.manifest is not None:
        ends.append(("the run", header.manifest.ledger_entries, header.manifest.ledger_head))
    if header.study is not None:  # a merged run: where each shard's run ended
        ends += [
            (f"shard {s.index}/{s.count}", s.ledger_entries, s.ledger_head)
            for s in header.study.merged_from
        ]
    found: Findings = []
    for who, seq, head in ends:
        if not seq:
            continue
        entry = next((e for e in lines if e.get("seq") == seq), None)
        if entry is None:
            found.append(
                (
                    name,
                    f"{who} ended at entry {seq} but the ledger has no entry {seq}: lines were "
                    "removed from its end",
                )
            )
        elif entry.get("hash") != head:
            detail = f"its hash is not the head {who} ended at ({head})"
            found.append((f"{name} entry {seq}", detail))
    return found


def _seq_offsets(header: RunHeader) -> dict[str, int]:
    """Run id -> what to add to its seqs. A merged run's calls were settled under each shard's
    run id and seq (rundir/merge/join.py: merged seq = the shard's seq_offset + its seq)."""
    offsets = {header.run_id: 0}
    if header.study is not None:
        offsets.update({shard.run_id: shard.seq_offset for shard in header.study.merged_from})
    return offsets


def _settled(
    lines: list[dict[str, object]], offsets: dict[str, int]
) -> tuple[dict[int, list[Decimal]], Decimal | None]:
    """Each merged seq's settled costs, and the run's own total: every shard's `run_settled`
    by its settlements, once each has settled (else None)."""
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
    shards = len(offsets) - 1 if len(offsets) > 1 else 1
    return booked, (sum(totals.values(), ZERO) if len(totals) == shards else None)


def _sum_findings(
    name: str, booked: dict[int, list[Decimal]], calls: list[tuple[int, CallRecord]]
) -> Findings:
    """Each logged call settled once at its logged cost, and nothing settled that was not logged."""
    found: Findings = []
    logged = {call.seq: (lineno, call) for lineno, call in calls}
    for seq, (lineno, call) in sorted(logged.items()):
        settled = booked.get(seq, [])
        where = f"calls.jsonl:{lineno} (seq {seq})"
        if not settled:
            if call.cost_usd != ZERO or call.reserved_usd != ZERO:
                found.append((where, f"cost {call.cost_usd}: no settlement in {name}"))
        elif len(settled) > 1:
            found.append((where, f"settled {len(settled)} times in {name}"))
        elif settled[0] != call.cost_usd:
            found.append((where, f"call log says {call.cost_usd}, {name} settled {settled[0]}"))
    for seq in sorted(set(booked) - set(logged)):
        found.append((f"{name} seq {seq}", "settled but not in the call log"))
    return found


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
