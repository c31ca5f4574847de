"""The report's optional inputs, each read once and hashed: gate, ledger, prices, judgments,
provenance, header. An input not given is None, and its sections say "not run".

Formats (all owned by the study, not by a run):
- `--gate gate.json`: `harness gate`'s record (rundir/runs/gate_record.py).
- `--ledger ledger.jsonl`: the spend ledger (ledger/ledger.py), read under its lock, unchanged.
- `--prices prices.toml`: a price table (ledger/prices.py).
- `--judgments SET` (a folder `harness judge` wrote, with `--seal`, default `SET.seal.json`) or
  `--judgments FILE.jsonl`, one line per judged answer: `{"item", "arm", "run"?, "turn"?,
  "family"?, "metric"?, "correct": bool}` or `"score": number` with `"scale"?`, plus `"judge"?` and
  `"rubric_sha256"?` (harness/report/reading/judged.py).
- `--analysis FILE.toml`: the frozen analysis plan (harness/report/reading/analysis.py): verdicts.
- `--pack FILE.jsonl`: the T1 pack, items with their history and question type
  (harness/report/reading/pack.py): clusters and families for sections 6 and 7.
- `--provenance FILE.jsonl`: one line per study material: `{"name", "kind"?, "sha256", "source"?}`.
- `--gold FILE.jsonl`: gold answers, `{"item", "turn", "gold": str | [str], "family"?}`, scored
  judge-free (harness/report/reading/gold.py).
- `--scan scan.json`: `harness scan RUN_DIR --out FILE`'s result: every arm it voids (a canary
  served before its event) is marked VOID and left out of the verdicts.
- `--header FILE.toml`: what the study says about itself: `question`, `limitations = [...]`,
  `metrics = [...]`, `purpose` (whose share of calls to show), `static_prefix_tokens`,
  `deny = [...]` (words a public copy must never contain), `[pairs]`/`family` for verdicts.
"""

from __future__ import annotations

import json
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.errors import HarnessError
from harness.report.reading.judged import Judgment, PairJudgment, load_judged
from harness.report.reading.rundata import ReadFile, read_file
from harness.stats import Judgement
from ledger.prices import PriceTable, load_prices
from rundir.jsonlines import read_lines
from rundir.judgments import MANIFEST_FILE, JudgmentSet

if TYPE_CHECKING:
    from harness.report.reading.analysis import Analysis
from ledger.state import LedgerState


@dataclass
class Inputs:
    gate: dict[str, Any] | None = None
    ledger: LedgerState | None = None
    ledger_problems: list[str] = field(default_factory=list)
    prices: PriceTable | None = None
    judgments: list[Judgment] | None = None
    pairs: list[PairJudgment] | None = None  # pairwise judgments (a judgment set's)
    judgment_set: JudgmentSet | None = None  # the manifest, when --judgments is a set
    set_aside: list[str] = field(default_factory=list)
    seal: Path | None = None  # --seal: the judgment set's seal (default SET.seal.json)
    analysis: Analysis | None = None  # --analysis: endpoints, margins and decision rules
    clusters: dict[str, str] | None = None  # --pack: item -> cluster (its history)
    families: dict[str, str] | None = None  # --pack: item -> family (its question type)
    provenance: list[dict[str, Any]] | None = None
    header: dict[str, Any] = field(default_factory=dict)
    void_arms: dict[str, list[str]] | None = None  # from --scan: arm -> why it is void
    gold: list[dict[str, Any]] | None = None
    net: dict[tuple[str, str], list[Judgement]] | None = None  # (family, arm) -> verdicts
    read: dict[str, ReadFile] = field(default_factory=dict)  # kind -> the file

    def given(self, kind: str) -> ReadFile | None:
        return self.read.get(kind)


def load_inputs(
    *,
    gate: Path | None = None,
    ledger: Path | None = None,
    prices: Path | None = None,
    judgments: Path | None = None,
    provenance: Path | None = None,
    header: Path | None = None,
    scan: Path | None = None,
    gold: Path | None = None,
    seal: Path | None = None,
    analysis: Path | None = None,
    pack: Path | None = None,
) -> Inputs:
    inputs = Inputs(seal=seal)
    for kind, path in (
        ("gate", gate),
        ("ledger", ledger),
        ("prices", prices),
        ("judgments", judgments),
        ("provenance", provenance),
        ("header", header),
        ("scan", scan),
        ("gold", gold),
        ("analysis", analysis),
        ("pack", pack),
    ):
        if path is None:
            continue
        if kind == "judgments" and path.is_dir():
            # A judgment set: its manifest holds the hashes of its tasks, votes and seal.
            inputs.read[kind] = read_file(kind, path / MANIFEST_FILE)
        elif not path.is_file():
            raise HarnessError(f"--{kind} {path}: no such file", hint=f"pass an existing {kind}")
        else:
            inputs.read[kind] = read_file(kind, path)
        try:
            _LOADERS[kind](inputs, path)
        except HarnessError:
            raise
        except (OSError, ValueError, KeyError, TypeError) as e:
            raise HarnessError(
                f"--{kind} {path}: cannot read it: {e}", hint=f"check the {kind} file's format"
            ) from None
    return inputs


def _gate(inputs: Inputs, path: Path) -> None:
    inputs.gate = dict(json.loads(path.read_text(encoding="utf-8")))


def _ledger(inputs: Inputs, path: Path) -> None:
    from ledger.ledger import Ledger, verify

    report = verify(path)
    inputs.ledger_problems = [f"line {n}: {p}" for n, p in report.problems]
    if report.problems:
        return  # totals from a broken chain cannot be trusted with money: shown as problems only
    led = Ledger(path)
    try:
        inputs.ledger = led.state()
    finally:
        led.close()


def _prices(inputs: Inputs, path: Path) -> None:
    inputs.prices = load_prices(path)


def _judgments(inputs: Inputs, path: Path) -> None:
    judged = load_judged(path, inputs.seal)
    inputs.judgments = judged.judgments
    inputs.pairs = judged.pairs
    inputs.judgment_set = judged.manifest
    inputs.set_aside = judged.set_aside


def _provenance(inputs: Inputs, path: Path) -> None:
    rows = [json.loads(line) for line in read_lines(path) if line]
    for lineno, row in enumerate(rows, 1):
        if "name" not in row or "sha256" not in row:
            raise ValueError(f"line {lineno}: every material needs `name` and `sha256`")
    inputs.provenance = rows


def _header(inputs: Inputs, path: Path) -> None:
    inputs.header = tomllib.loads(path.read_text(encoding="utf-8"))


def _gold(inputs: Inputs, path: Path) -> None:
    rows = [json.loads(line) for line in read_lines(path) if line]
    for lineno, row in enumerate(rows, 1):
        if "item" not in row or "turn" not in row or not row.get("gold"):
            raise ValueError(f"line {lineno}: every gold answer needs `item`, `turn` and `gold`")
    inputs.gold = rows


def _scan(inputs: Inputs, path: Path) -> None:
    from harness.checks import ScanResult

    result = ScanResult.model_validate_json(path.read_text(encoding="utf-8"))
    inputs.void_arms = {name: result.arms[name].reasons for name in result.void_arms}


def _analysis(inputs: Inputs, path: Path) -> None:
    from harness.report.reading.analysis import load_analysis

    inputs.analysis = load_analysis(path)


def _pack(inputs: Inputs, path: Path) -> None:
    from harness.report.reading.pack import load_pack

    inputs.clusters, inputs.families = load_pack(path)


_LOADERS = {
    "gate": _gate,
    "ledger": _ledger,
    "prices": _prices,
    "judgments": _judgments,
    "provenance": _provenance,
    "header": _header,
    "scan": _scan,
    "gold": _gold,
    "analysis": _analysis,
    "pack": _pack,
}
