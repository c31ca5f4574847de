"""The ceilings in the report's cost section: candidates against the reference (from --header
[ceilings] or the study's [coupling] order), every call of an item's turn charged to it, the
latency and failure bounds, the sentiment call's share of latency, the caching counterfactual of
the main calls, and "not run" when the study declares no reference."""

from __future__ import annotations

import hashlib
from decimal import Decimal
from pathlib import Path

from harness.report.context import Context
from harness.report.figures.perarm import build_report
from harness.report.generate import build_sections
from harness.report.model import Section, Table
from harness.report.public import Anonymizer
from harness.report.reading.inputs import load_inputs
from harness.report.reading.rundata import load_runs
from harness.report.sections import money
from ledger.prices import load_prices
from rundir.calls.calllog import Timing, Tokens
from tests.helpers.report_runs import call, turn, write_run

PRICES = Path(__file__).resolve().parents[3] / "ledger" / "prices.toml"
RUN = "r-ceil"


def _cost_section(
    run_dir: Path, header: str | None, tmp_path: Path, prices: bool = True
) -> Section:
    head = None
    if header is not None:
        head = tmp_path / "header.toml"
        head.write_text(header)
    inputs = load_inputs(header=head, prices=PRICES if prices else None)
    data = load_runs([run_dir])
    ctx = Context(data, inputs, build_report(data, resamples=50), Anonymizer(False), 50, 0)
    return money.cost_section(ctx, False)


def _rows(table: Table) -> dict[tuple[str, str], list[str]]:
    return {(r[0], r[1]): r for r in table.rows}


def _tables(s: Section, first_column: str) -> list[Table]:
    return [t for t in s.tables if t.columns[0] == first_column]


def _study(tmp_path: Path) -> tuple[Path, list[str]]:
    """B, C0 and C1 over 20 items of one turn each; C1 fails once, C0 is slow at p95."""
    turns, calls, seq = [], [], 0
    for n in range(20):
        item = f"i{n}"
        turns.append(turn(RUN, "B", item, 1, first=0.5, last=1.0))
        turns.append(turn(RUN, "C0", item, 1, first=0.6 if n < 18 else 2.0, last=1.1))
        turns.append(
            turn(RUN, "C1", item, 1, first=0.65, last=1.2)
            if n
            else turn(RUN, "C1", item, 1, outcome="error", first=None, last=None)
        )
        for arm, cost in (("B", "0.010"), ("C0", "0.012"), ("C1", "0.013")):
            seq += 1
            calls.append(call(RUN, seq, arm, item, 1, cost=cost, timing=Timing(start=10.0,
                              first_byte=10.4, end=10.9)))  # fmt: skip
        # C1's sentiment call: 0.2 s, of which 0.1 s before the main reply's first byte.
        seq += 1
        calls.append(call(RUN, seq, "C1", item, 1, cost="0.0005", purpose="sentiment",
                          timing=Timing(start=10.3, first_byte=10.35, end=10.5)))  # fmt: skip
        # An ingestion call of B's item is the item's: charged to its turn.
        seq += 1
        calls.append(call(RUN, seq, "B", item, None, cost="0.001", purpose="memory"))
    seq += 1
    calls.append(call(RUN, seq, "C0", None, None, cost="1"))  # no item: charged to no turn
    run_dir = write_run(tmp_path / "runs", RUN, ["B", "C0", "C1"], turns, calls)
    return run_dir, ["B", "C0", "C1"]


HEADER = '[ceilings]\nreference = "B"\ncandidates = ["C0", "C1"]\n'


def test_each_candidate_is_read_against_the_references_ceilings(tmp_path: Path) -> None:
    run_dir, _ = _study(tmp_path)
    s = _cost_section(run_dir, HEADER, tmp_path)
    (readings,) = _tables(s, "candidate")[:1]
    rows = _rows(readings)
    # B: 0.010 + 0.001 (its item's memory call) per turn; C1: 0.013 + 0.0005.
    assert rows[("C0", "mean $ per turn")][2:] == [
        "$0.011",
        "$0.012",
        "≤ $0.0143 (1.30x)",
        "within",
    ]
    assert rows[("C1", "mean $ per turn")][3] == "$0.0135"
    # C0's p95 first token interpolates into its two 2.0 s turns: far above B's 0.5 s + 500 ms.
    assert rows[("C0", "first token p50")][2:] == ["500 ms", "600 ms", "≤ 700 ms (+ 200 ms)",
                                                   "within"]  # fmt: skip
    assert rows[("C0", "first token p95")][5] == "ABOVE"
    assert rows[("C1", "first token p95")][5] == "within"
    assert rows[("C1", "last token p95")][2:] == ["1000 ms", "1200 ms", "≤ 1250 ms (1.25x)",
                                                  "within"]  # fmt: skip
    # One failed turn in 20 is 5 points above B's 0%.
    assert rows[("C1", "failure rate")][2:] == ["0.0%", "5.0%", "≤ 1.0%", "ABOVE"]
    assert rows[("C0", "failure rate")][5] == "within"
    assert any("C0 1" in p and "not in the mean" in p for p in s.paragraphs)
    assert any("--header [ceilings]" in p for p in s.paragraphs)
    assert any("header" in r for r in s.read) and any("calls.jsonl" in r for r in s.read)


def test_the_sentiment_share_counts_only_what_came_before_the_first_main_byte(
    tmp_path: Path,
) -> None:
    run_dir, _ = _study(tmp_path)
    s = _cost_section(run_dir, HEADER, tmp_path)
    share = next(t for t in s.tables if "`sentiment` calls" in t.columns)
    rows = {r[0]: r for r in share.rows}
    assert rows["C0"][2] == "0"  # no sentiment calls: no share
    # 19 completed turns, each 0.1 s of sentiment before 10.4 of a 0.65 s first token, and
    # 0.2 s of a 1.2 s last token.
    assert rows["C1"][1:] == ["19", "19", f"{0.1 / 0.65:.1%}", f"{0.2 / 1.2:.1%}"]


def test_the_counterfactual_reprices_the_candidates_main_calls_without_the_cache(
    tmp_path: Path,
) -> None:
    run_dir, _ = _study(tmp_path)
    s = _cost_section(run_dir, HEADER, tmp_path)
    table = next(t for t in s.tables if "without caching" in t.columns)
    rates = load_prices(PRICES).model("gpt-4.1-mini")
    t = Tokens(input=100, output=20, cache_read=30, reasoning=5)  # report_runs' default tokens
    billed = (t.input * rates.input + t.cache_read * rates.cread + t.output * rates.output) / 10**6
    flat = ((t.input + t.cache_read) * rates.input + t.output * rates.output) / 10**6
    c0 = next(r for r in table.rows if r[0] == "C0")
    assert c0[1] == "21" and c0[2] == str(21 * 30)  # its item-less main call is one of them
    assert Decimal(c0[3].lstrip("$")) == billed * 21
    assert Decimal(c0[4].lstrip("$")) == flat * 21
    no_prices = _cost_section(run_dir, HEADER, tmp_path, prices=False)
    assert any("main` calls: not run (no --prices)" in p for p in no_prices.paragraphs)


def test_the_roles_come_from_the_studys_coupling_order_when_the_header_names_none(
    tmp_path: Path,
) -> None:
    study = tmp_path / "study.toml"
    study.write_text('name = "s"\n[coupling]\norder = ["B", "C1"]\n')
    run_dir, _ = _study(tmp_path)
    header = (run_dir / "run.json").read_text()
    digest = hashlib.sha256(study.read_bytes()).hexdigest()
    header = header.replace("/srv/private-studies/study.toml", str(study))
    (run_dir / "run.json").write_text(header.replace("a" * 64, digest))
    s = _cost_section(run_dir, None, tmp_path)
    rows = _rows(_tables(s, "candidate")[0])
    assert {k[0] for k in rows} == {"C1"}
    assert any("the study's [coupling] order" in p for p in s.paragraphs)
    assert f"{study} (SHA-256 {digest}" in " ".join(s.read)  # traced to the study file
    # The same file changed since the run: its order is not the run's, so not used.
    study.write_text('name = "s"\n[coupling]\norder = ["C1", "B"]\n')
    s = _cost_section(run_dir, None, tmp_path)
    assert any("ceilings of the candidates against the reference: not run" in p
               for p in s.paragraphs)  # fmt: skip


def test_no_reference_declared_is_not_run_and_the_report_is_still_written(tmp_path: Path) -> None:
    run_dir, _ = _study(tmp_path)
    s = _cost_section(run_dir, 'question = "q"\n', tmp_path)
    assert any("not run (the study declares no reference" in p for p in s.paragraphs)
    assert not [t for t in s.tables if t.columns[:2] == ["candidate", "ceiling"]]
    data = load_runs([run_dir])
    inputs = load_inputs()
    ctx = Context(data, inputs, build_report(data, resamples=50), Anonymizer(False), 50, 0)
    assert len(build_sections(ctx, False)) == 13
