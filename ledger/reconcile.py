"""Vendor usage exports, in one simple CSV format, for `harness ledger reconcile`.

Vendors' own exports differ and change; rather than parse each, the harness reads one documented
CSV that a vendor export is easily turned into (a spreadsheet or a few lines of Python):

    date,model,input_tokens,output_tokens,cache_read_tokens,cache_write_5m_tokens,
        cache_write_1h_tokens,cost_usd,run_id

- `date` and `model` are required columns; every other column is optional.
- A row's charge is its `cost_usd` when that cell is filled (the vendor's own figure, preferred);
  otherwise its tokens priced with the price table (`input_tokens` excludes cache tokens, as in
  the ledger's TokenCounts; `output_tokens` includes reasoning). A row with neither is an error.
- `run_id`, when filled, says which run the row belongs to. Rows without one are charged to the
  runs named with `--run` (an export filtered to the study's key and dates), as one group.
Lines starting with `#` are comments.
"""

from __future__ import annotations

import csv
import hashlib
import io
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from pathlib import Path

from ledger.errors import LedgerError
from ledger.prices import PriceTable, TokenCounts, cost

REQUIRED = ("date", "model")
TOKEN_COLUMNS = {
    "input_tokens": "input",
    "output_tokens": "output",
    "cache_read_tokens": "cache_read",
    "cache_write_5m_tokens": "cache_write_5m",
    "cache_write_1h_tokens": "cache_write_1h",
}


class UsageExportError(LedgerError, ValueError):
    def __init__(self, path: Path, line: int, problem: str) -> None:
        super().__init__(f"{path}:{line}: {problem} (see `harness ledger reconcile --help`)")


@dataclass(frozen=True)
class UsageRow:
    line: int
    date: str
    model: str
    cost_usd: Decimal
    run_id: str | None
    priced_by_table: bool  # True when the cost came from tokens, not the vendor's figure


@dataclass(frozen=True)
class UsageExport:
    path: Path
    sha256: str
    rows: list[UsageRow]


def read_usage_export(path: Path, prices: PriceTable) -> UsageExport:
    try:
        data = path.read_bytes()
    except OSError as e:
        raise UsageExportError(path, 0, f"cannot read: {e.strerror or e}") from e
    text = data.decode("utf-8-sig")  # spreadsheets like to add a BOM
    lines = [ln for ln in text.splitlines() if not ln.lstrip().startswith("#")]
    reader = csv.DictReader(io.StringIO("\n".join(lines)))
    header = [h.strip() for h in reader.fieldnames or []]
    for col in REQUIRED:
        if col not in header:
            raise UsageExportError(path, 1, f"missing the required column {col!r}")
    rows = []
    for n, raw in enumerate(reader, start=2):
        cells = {(k or "").strip(): (v or "").strip() for k, v in raw.items()}
        rows.append(_row(path, n, cells, prices))
    if not rows:
        raise UsageExportError(path, 1, "no usage rows")
    return UsageExport(path, hashlib.sha256(data).hexdigest(), rows)


def _row(path: Path, line: int, cells: dict[str, str], prices: PriceTable) -> UsageRow:
    if not cells.get("model"):
        raise UsageExportError(path, line, "empty model")
    if cells.get("cost_usd"):
        try:
            amount = Decimal(cells["cost_usd"])
        except InvalidOperation as e:
            raise UsageExportError(path, line, f"cost_usd {cells['cost_usd']!r}") from e
        if not amount.is_finite() or amount < 0:
            raise UsageExportError(path, line, f"cost_usd {cells['cost_usd']!r}")
        by_table = False
    else:
        if not cells.get("input_tokens") or not cells.get("output_tokens"):
            raise UsageExportError(path, line, "needs cost_usd, or input_tokens and output_tokens")
        counts: dict[str, int] = {}
        for column, name in TOKEN_COLUMNS.items():
            try:
                counts[name] = int(cells.get(column) or 0)
            except ValueError as e:
                raise UsageExportError(path, line, f"{column} {cells[column]!r}") from e
        try:
            amount = cost(prices.model(cells["model"]), TokenCounts(**counts))
        except (LedgerError, ValueError) as e:
            raise UsageExportError(path, line, str(e)) from e
        by_table = True
    return UsageRow(
        line, cells["date"], cells["model"], amount, cells.get("run_id") or None, by_table
    )


def group_by_runs(
    rows: Sequence[UsageRow], default_runs: Sequence[str], path: Path
) -> dict[tuple[str, ...], Decimal]:
    """Vendor USD per group of runs: one group per labelled run, one for `default_runs`.

    A labelled row of a run that is also in `default_runs` joins that group, so no run is
    reconciled twice by one export.
    """
    groups: dict[tuple[str, ...], Decimal] = {}
    default = tuple(dict.fromkeys(default_runs))
    for row in rows:
        if row.run_id is None or row.run_id in default:
            if not default:
                raise UsageExportError(
                    path, row.line, "row has no run_id: name the runs it covers with --run"
                )
            key = default
        else:
            key = (row.run_id,)
        groups[key] = groups.get(key, Decimal(0)) + row.cost_usd
    return groups
