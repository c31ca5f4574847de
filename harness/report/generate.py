"""Write a study's report (markdown, HTML, PDF, report.json, records.jsonl) into a folder of its
own, never into a run directory: a run's manifest lists its files, and anything added to it
afterwards fails `harness audit`. The generator reads files and computes; it calls no model."""

from __future__ import annotations

import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from harness.errors import HarnessError
from harness.report.confirmatory import verdicts_section
from harness.report.context import Context
from harness.report.figures import RunReport, build_report
from harness.report.formats import (
    ReportFile,
    print_pdf,
    records,
    render_html,
    render_markdown,
    report_file,
    write_drilldown,
    write_records,
)
from harness.report.model import Section
from harness.report.public import Anonymizer, Private, check_public, host_names
from harness.report.reading import (
    Inputs,
    Progress,
    RunData,
    check_inputs,
    load_runs,
    no_duplicates,
    progress,
    refuse_unless_partial,
    score_gold,
)
from harness.report.sections import first_screen, frame, judging, money, verdicts, without_voided
from rundir.atomic import write_atomic
from rundir.runs import tool_version

FORMATS = ("md", "html", "pdf")
PAPERS = {"a4": "A4", "letter": "letter"}


@dataclass
class Generated:
    report: RunReport
    out: Path
    files: list[Path]


def default_out(run_dirs: list[Path], public: bool) -> Path:
    return Path("reports") / (run_dirs[0].resolve().name + ("-public" if public else ""))


def generate(
    run_dirs: list[Path],
    inputs: Inputs,
    *,
    out: Path | None = None,
    formats: tuple[str, ...] = ("md", "html"),
    public: bool = False,
    resamples: int = 10_000,
    seed: int = 0,
    partial: bool = False,
    paper: str = "a4",
    step: Callable[[str], None] = lambda _: None,
) -> Generated:
    unknown = set(formats) - set(FORMATS)
    if unknown:
        raise HarnessError(f"unknown --format {sorted(unknown)}", hint="use md, html and/or pdf")
    if paper.lower() not in PAPERS:
        raise HarnessError(f"unknown --paper {paper!r}", hint="use a4 or letter")
    if not run_dirs:
        raise HarnessError("no run directory given", hint="harness report runs/<run-id>")
    out = out or default_out(run_dirs, public)
    _outside_runs(out, run_dirs)
    step("reading the runs")
    data = load_runs(run_dirs)
    done = progress(data)
    refuse_unless_partial(done, partial)
    check_inputs(data, inputs)  # refuses, in one line, an input that is not of these runs
    if inputs.gold is not None:
        scored, inputs.net = score_gold(data, inputs.gold)
        inputs.judgments = (inputs.judgments or []) + scored
        no_duplicates(inputs.judgments)  # a gold score never overwrites a judged one
    inputs.judgments = without_voided(data, inputs.judgments)  # voided items are set aside
    anon = Anonymizer(public)
    done.run_id = anon.run(done.run_id)
    step("per-arm figures")
    report = build_report(data, resamples=resamples, seed=seed)
    ctx = Context(data, inputs, report, anon, resamples, seed)
    built = build_sections(ctx, with_charts="html" in formats or "pdf" in formats, step=step)
    screen = first_screen(ctx, built, done)
    _mark_unfinished(built, done)
    out.mkdir(parents=True, exist_ok=True)
    title = str(data.study.get("name") or anon.run(report.run_id))
    intro = (
        f"Written by harness report {tool_version()} from {len(run_dirs)} run director"
        f"{'y' if len(run_dirs) == 1 else 'ies'} ({', '.join(anon.run(r) for r in report.run_ids)})"
        f"{', public copy' if public else ''}. The generator calls no model; every figure is "
        "computed from the files each section lists, and records.jsonl holds the raw rows."
    )
    whole = report_file(report, screen, ctx.confirmed, done, built)
    files = [_write(out / "report.json", _public_json(whole, anon))]
    write_records(out / "records.jsonl", records(data, anon))
    files.append(out / "records.jsonl")
    drill = write_drilldown(ctx, out / "drilldown.html", title)
    files += [drill] if drill else []
    if "md" in formats:
        files.append(_write(out / "report.md", render_markdown(title, intro, built, screen)))
    if "html" in formats or "pdf" in formats:
        page = render_html(title, intro, built, screen, PAPERS[paper.lower()])
        html = _write(out / "report.html", page)
        files.append(html)
        if "pdf" in formats:
            step("printing the PDF")
            print_pdf(html, out / "report.pdf")
            files.append(out / "report.pdf")
    if public:
        findings = check_public(out, private_words(data, inputs))
        if findings:
            for path in files:  # fail closed: a leaking public copy is not left behind
                path.unlink(missing_ok=True)
            shown = "; ".join(map(str, findings[:5]))
            raise HarnessError(
                f"the public copy names private data ({len(findings)} finding(s)): {shown}",
                hint="report this as a bug in harness report; nothing was written",
            )
    return Generated(report, out, files)


def build_sections(
    ctx: Context, with_charts: bool, step: Callable[[str], None] = lambda _: None
) -> list[Section]:
    """The sections in their order; `step` is told each before it is computed (the progress a
    terminal shows for a large run's report)."""
    builders: list[Callable[[], Section]] = [
        lambda: frame.identity(ctx),
        lambda: frame.question(ctx),
        lambda: frame.arms(ctx),
        lambda: frame.families(ctx),
        lambda: judging.metrics(ctx),
        lambda: verdicts.results(ctx, with_charts),
        lambda: verdicts.verdicts(ctx, with_charts),
        lambda: money.cost_section(ctx, with_charts),
        lambda: money.latency_section(ctx, with_charts),
        lambda: money.gate_section(ctx),
        lambda: money.ledger_section(ctx, with_charts),
        *([lambda: verdicts_section(ctx, with_charts)] if ctx.inputs.analysis else []),
        lambda: frame.limitations(ctx),
        lambda: frame.appendix(ctx),
    ]
    built = []
    for n, build in enumerate(builders, 1):
        step(f"section {n} of {len(builders)}")
        built.append(build())
    return built


def private_words(data: RunData, inputs: Inputs) -> Private:
    """What a public copy of this report must not name (harness/report/public.py)."""
    private = Private()
    private.add(*{t.item for t in data.turns}, *{c.item for c in data.calls if c.item})
    private.add(*(str(h.get("run_id")) for h in data.headers), *(t.run for t in data.turns))
    for run_dir in data.run_dirs:
        private.add(str(run_dir), str(run_dir.resolve()))
    private.add(*(str(f.path) for f in data.read), *(str(f.path) for f in inputs.read.values()))
    private.add(*(str(f.path.resolve()) for f in inputs.read.values()), str(Path.home()))
    study_path = data.study.get("study_path")
    if study_path:
        private.add(str(study_path))
        private.add(*_arm_internals(Path(str(study_path))))
    vendors = _study_table(data, "vendors")
    private.add(*(h for h in host_names([str(u) for u in vendors.values()]) if h != "localhost"))
    private.add(*(str(w) for w in inputs.header.get("deny") or []))
    return private


def _arm_internals(study: Path) -> list[str]:
    # The command and image behind each arm's public name (its internals, not its name).
    try:
        arms = tomllib.loads(study.read_text(encoding="utf-8")).get("arms")
    except (OSError, ValueError):
        return []
    if not isinstance(arms, dict):
        return []
    out = []
    for spec in arms.values():
        if isinstance(spec, dict):
            out += [str(spec.get("command") or ""), str(spec.get("image") or "")]
    return out


def _study_table(data: RunData, name: str) -> dict[str, object]:
    study_path = data.study.get("study_path")
    try:
        table = tomllib.loads(Path(str(study_path)).read_text(encoding="utf-8")).get(name)
    except (OSError, ValueError, TypeError):
        return {}
    return dict(table) if isinstance(table, dict) else {}


def _mark_unfinished(built: list[Section], done: Progress) -> None:
    # Section 12 says it too, so a reader who skips the first screen still sees it.
    if not done.finished:
        for section in built:
            if section.number == 12:
                section.paragraphs.insert(0, done.sentence())


def _public_json(report: ReportFile, anon: Anonymizer) -> str:
    if anon.public:
        report = report.model_copy(
            update={
                "run_id": anon.run(report.run_id),
                "run_ids": [anon.run(r) for r in report.run_ids],
                "dropped_items": [anon.item(i) for i in report.dropped_items],
            }
        )
    return report.model_dump_json(by_alias=True, indent=2) + "\n"


def _outside_runs(out: Path, run_dirs: list[Path]) -> None:
    target = out.resolve()
    for run_dir in run_dirs:
        if target == run_dir.resolve() or run_dir.resolve() in target.parents:
            raise HarnessError(
                f"--out {out} is inside the run directory {run_dir}: files added to a run "
                "fail `harness audit`",
                hint="write the report elsewhere, e.g. --out reports/<run-id>",
            )


def _write(path: Path, text: str) -> Path:
    write_atomic(path, text)
    return path
