"""The study's paper trail in the report: the subject model and what the call log shows was called
(sections 1 and 3), the frozen protocol files' and the addendum's hashes with the deviations
(sections 1, 12 and 13), and the voided items (section 12).

The hashes are run.json's (`study.protocol`, rundir/runs/protocol.py). The addendum read is the
run's own copy; the study's as it is now, when its folder is at hand, adds only what it gained since
(a later deviation, a later or backdated amendment: harness/protocol/addendum.py).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from pathlib import Path
from typing import Any, Protocol, TypeVar

from harness.errors import HarnessError
from harness.protocol import Addendum, Deviation, load_addendum
from harness.protocol import run_deviations as deviations_of_run
from harness.report.context import Context
from harness.report.model import Table
from harness.report.reading import ADDENDUM_NOW, RunData
from rundir.network import PROBE_FILE, read_probe
from rundir.runs import addendum_copies
from rundir.turns import TurnRecord


def subject_line(ctx: Context) -> str:
    subject = ctx.data.study.get("subject")
    if not subject:
        return 'Subject model: not declared (the study gives no `subject = "<vendor>/<model>"`).'
    return f"Subject model: `{subject}` (the study's `subject`)."


def called_table(ctx: Context) -> Table:
    """Every vendor and model the call log shows was called, with counts (no price table
    needed): the model served when the reply named one, else the one requested."""
    calls: Counter[tuple[str, str]] = Counter()
    arms: dict[tuple[str, str], set[str]] = defaultdict(set)
    for call in ctx.data.calls:
        key = (call.vendor, call.model_served or call.model_requested or "-")
        calls[key] += 1
        arms[key].add(call.arm)
    rows = [
        [vendor, model, str(n), ", ".join(sorted(arms[(vendor, model)]))]
        for (vendor, model), n in sorted(calls.items())
    ]
    return Table(["vendor called", "model", "calls", "arms"], rows or [["none", "-", "0", "-"]])


def _protocol(header: dict[str, Any]) -> dict[str, Any] | None:
    study = header.get("study") or {}
    protocol = study.get("protocol")
    return dict(protocol) if protocol else None


def _addendum(ctx: Context, run_dir: Path, header: dict[str, Any]) -> tuple[Addendum, str] | None:
    """The run's own copy of the addendum (a merged run: its first shard's), as the run started
    under it: an entry deleted from the study's since stays the run's."""
    if not (_protocol(header) or {}).get("addendum"):
        return None
    copies = addendum_copies(run_dir)
    if copies:
        return load_addendum(copies[0]), "the run's copy of the addendum"
    return None


def _addendum_now(ctx: Context, header: dict[str, Any]) -> Addendum | None:
    """The study's addendum as it is now, when this report read it (entries added later)."""
    protocol = _protocol(header) or {}
    study_path = (header.get("study") or {}).get("study_path")
    if not protocol.get("addendum") or not study_path:
        return None
    now = Path(str(study_path)).parent / str(protocol["addendum"])
    for file in ctx.data.read:
        if file.kind == ADDENDUM_NOW and file.path == now:
            try:
                return load_addendum(now)
            except HarnessError:
                return None  # a damaged current addendum: the run's copy alone
    return None


def run_deviations(ctx: Context) -> list[tuple[str, Deviation]]:
    """(run, deviation) for every run with a protocol addendum: its copy's, and what the study's
    addendum gained since (harness/protocol/addendum.py, `run_deviations`)."""
    out = []
    for run_dir, header in zip(ctx.data.run_dirs, ctx.data.headers, strict=True):
        found = _addendum(ctx, run_dir, header)
        if found is None:
            continue
        run = ctx.anon.run(str(header.get("run_id")))
        started = str(header.get("started"))
        now = _addendum_now(ctx, header)
        found_devs = deviations_of_run(found[0], now, str(header.get("mode")), started)
        out += [(run, d) for d in found_devs]
    return out


def protocol_lines(ctx: Context) -> list[str]:
    """Section 1: each run's frozen files and addendum, by hash, and its deviations."""
    lines = []
    for header in ctx.data.headers:
        protocol = _protocol(header)
        if protocol is None:
            continue
        run = ctx.anon.run(str(header.get("run_id")))
        frozen = "; ".join(
            f"`{f['path']}` SHA-256 `{f['sha256']}` (frozen {f['frozen']})"
            for f in protocol.get("frozen") or []
        )
        addendum = (
            f"addendum `{protocol['addendum']}` SHA-256 `{protocol.get('addendum_sha256')}`"
            if protocol.get("addendum")
            else "no addendum"
        )
        lines.append(f"Protocol of run {run}: frozen files {frozen or 'none'}; {addendum}.")
    if not lines:
        return ["Protocol: the study declares no frozen protocol files (no `[protocol]` table)."]
    found = run_deviations(ctx)
    lines.append(
        f"Deviations: {len(found)}"
        + (": " + "; ".join(f"{d.entry.when} {d.entry.text} ({d.why})" for _, d in found))
        * bool(found)
        + (" (section 12)." if found else ".")
    )
    return lines


def deviation_lines(ctx: Context) -> list[str]:
    """Section 12: each deviation with its run, date, text and why it counts."""
    return (
        [
            f"Deviation of run {run} ({d.why}), {d.entry.when}: {d.entry.text}"
            + (f" Reason: {d.entry.reason}" if d.entry.reason else "")
            for run, d in run_deviations(ctx)
        ]
        + suite_lines(ctx)
        + probe_lines(ctx)
    )


def suite_lines(ctx: Context) -> list[str]:
    """A live run started without V0's record of the integration suite passing (--skip-suite,
    harness/run/live/suite_record.py): its code was not shown to pass the suite."""
    lines = []
    for header in ctx.data.headers:
        suite = str((header.get("study") or {}).get("suite") or "")
        if suite.startswith("not checked"):
            run = ctx.anon.run(str(header.get("run_id")))
            lines.append(f"Deviation of run {run} (V0): the integration suite was {suite}")
    return lines


def probe_lines(ctx: Context) -> list[str]:
    """A compatibility probe that fell back to the Messages API (`harness probe`, probe.json in
    the run directory, else next to the study): the arm did not use the planned route."""
    lines = []
    for run_dir, header in zip(ctx.data.run_dirs, ctx.data.headers, strict=True):
        if header.get("mode") != "live":
            continue  # the probe is of the vendor's live route; stubs always serve it
        study_path = (header.get("study") or {}).get("study_path")
        places = [run_dir / PROBE_FILE]
        if study_path:
            places.append(Path(str(study_path)).parent / PROBE_FILE)
        found = next((p for p in places if p.is_file()), None)
        decision = read_probe(found) if found is not None else None
        if decision is not None and decision.fell_back:
            run = ctx.anon.run(str(header.get("run_id")))
            lines.append(
                f"Deviation of run {run} (compatibility probe), {decision.probed}: Anthropic's "
                f"OpenAI-compatible route failed the day's probe for {decision.model}, so the "
                f"arm used the Messages API instead. Reason: {decision.reasons()}"
            )
    return lines


def protocol_tables(ctx: Context) -> list[Table]:
    """Section 13: the frozen files and addendum by hash, and every addendum entry."""
    files, entries = [], []
    for run_dir, header in zip(ctx.data.run_dirs, ctx.data.headers, strict=True):
        protocol = _protocol(header)
        if protocol is None:
            continue
        run = ctx.anon.run(str(header.get("run_id")))
        for f in protocol.get("frozen") or []:
            files.append([run, str(f["path"]), "frozen", str(f["sha256"]), str(f["frozen"])])
        if protocol.get("addendum"):
            sha = str(protocol.get("addendum_sha256"))
            files.append([run, str(protocol["addendum"]), "addendum", sha, "-"])
        found = _addendum(ctx, run_dir, header)
        if found is not None:
            addendum, which = found
            for e in addendum.entry:
                entries.append([run, which, e.when, e.kind, e.file or "-", e.text, e.reason or "-"])
    if not files:
        return []
    columns = ["run", "protocol file", "kind", "SHA-256", "frozen"]
    tables = [Table(columns, files)]
    if entries:
        columns = ["run", "read from", "date", "kind", "file", "text", "reason"]
        tables.append(Table(columns, entries))
    return tables


def _outcomes(turns: list[TurnRecord]) -> str:
    per_arm: dict[str, Counter[str]] = defaultdict(Counter)
    for t in turns:
        per_arm[t.arm][t.outcome] += 1
    return "; ".join(
        f"{arm}: " + ", ".join(f"{k} {v}" for k, v in sorted(c.items()))
        for arm, c in sorted(per_arm.items())
    )


def voids_table(ctx: Context) -> Table | None:
    """Section 12: each voided item, its run and reason, its set-aside outcomes per arm, and
    the rerun's (a later run directory given to this report), with how many replies changed."""
    if not ctx.data.voided:
        return None
    kept: dict[str, list[TurnRecord]] = defaultdict(list)
    for t in ctx.data.turns:
        kept[t.item].append(t)
    rows = []
    for v in ctx.data.voided:
        rerun = kept.get(v.item, [])
        before = {(t.arm, t.turn): t.text for t in v.turns}
        changed = sum(before.get((t.arm, t.turn)) != t.text for t in rerun)
        rows.append(
            [
                ctx.anon.item(v.item),
                ctx.anon.run(v.run_id),
                v.reason,
                _outcomes(v.turns) or "-",
                (_outcomes(rerun) + f" ({changed} of {len(rerun)} replies differ)")
                if rerun
                else "not rerun",
            ]
        )
    columns = ["voided item", "run", "reason", "set aside (outcomes per arm)", "rerun"]
    return Table(columns, rows)


class _OfItem(Protocol):
    @property
    def item(self) -> str: ...


J = TypeVar("J", bound=_OfItem)


def without_voided(data: RunData, judgments: list[J] | None) -> list[J] | None:
    """Judgments of the report's items only: those of an item voided and not rerun are left out
    of every statistic as its turns are (a judgment names an item, not the run it judged)."""
    if judgments is None:
        return None
    gone = {v.item for v in data.voided} - {t.item for t in data.turns}
    return [j for j in judgments if j.item not in gone]
