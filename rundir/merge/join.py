"""`harness merge`: join the shards of one study into one run directory that every reader (gate,
audit, replay, scan, report) reads as if the study had run on one machine.

What is checked first, so nothing is written for a wrong set (rundir/merge/checks.py): every
directory is a finished shard whose files still hash as its manifest lists them, of the same
study, inputs and harness commit, with every index 1..N there exactly once; else it is refused,
naming the shard and what differs. A folder of runs stands for the latest run of each shard that
passed (rundir/merge/pick.py); the runs it leaves out are named.

What the merged run holds:
- `calls.jsonl`: every shard's calls, in shard order, as one run: `run_id` is the merged run's
  and `seq` is renumbered (the shard's seq plus its `seq_offset`, recorded per shard in
  `merged_from`), so a call is still found in the ledger by its shard's run id and seq;
- `turns.jsonl`, `egress.jsonl`, `rtt.jsonl` and any other top-level JSONL file: the shards'
  lines in shard order, their run named as the merged run (`reservations.jsonl` renumbered like
  the calls);
- `bodies/pack.bin`: every body of every shard, each stored once;
- `snapshots/<arm>/<history>/` (a memory study's stores, harness/run/memory/snapshot.py): every
  shard's, where its `snapshot` line in turns.jsonl names it; a history two shards both ingested
  (LoCoMo questions of one conversation split across shards) is kept once when both hash the same,
  else the later shard's goes to `shards/<I>/snapshots/...` and its line names that path. Ingestion
  lines and `questions.jsonl` are top-level JSONL, merged as above;
- `shards/<I>/...`: every other file of shard I as it was (logs, the proxy's settings, clocks);
- `run.json`: shard 1's header with the run's own id, the shards' counts summed, passed only if
  every shard passed, each arm's failures named by shard (`arm_failures`), and `merged_from`
  (per shard: its run, manifest hash, whether it passed and why not); then the manifest of the
  merged files.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from rundir.calls import BodyStore, PackReader
from rundir.errors import RunDirError
from rundir.jsonlines import read_lines
from rundir.merge.checks import check_shards, manifest_digest
from rundir.merge.pick import failure_reason, pick_runs
from rundir.runs import MergedShard, RunHeader, StudyRun, read_header, write_manifest

# Files the merge writes itself at the top of the merged run (not copied under shards/).
HEADER_FILES = {"run.json", "audit.json", "gate.json", "replay.json"}
RENUMBERED = {"calls.jsonl", "reservations.jsonl"}


def _refuse(message: str, hint: str) -> RunDirError:
    return RunDirError(message, hint=hint)


def expand(dirs: list[Path]) -> list[Path]:
    """The run directories to merge, a folder of runs standing for the shard runs it holds (the
    latest run of each shard that passed: rundir/merge/pick.py)."""
    return pick_runs(dirs)[0]


def merge_shards(dirs: list[Path], out: Path) -> RunHeader:
    """Join the shards into `out` (a new directory); returns the merged header."""
    shards = check_shards(expand(dirs))
    if out.exists() and any(out.iterdir()):
        if not _earlier_merge(out, shards[0][1]):
            raise _refuse(f"{out} exists and is not empty", "give --out a new directory")
        shutil.rmtree(out)  # an earlier merge of this study's shards: merged again, afresh
    out.mkdir(parents=True, exist_ok=True)
    run_id = out.name
    merged: list[MergedShard] = []
    offset = 0
    lines: dict[str, list[str]] = {}
    placed: dict[str, str] = {}  # a snapshot's path in the merged run -> its sha256
    for run_dir, header in shards:
        study = header.study
        assert study is not None and study.shard is not None and header.manifest is not None
        calls = _jsonl(run_dir / "calls.jsonl")
        top = max((int(c["seq"]) for c in calls), default=-1)
        manifest = header.manifest
        merged.append(
            MergedShard(
                index=study.shard.index,
                count=study.shard.count,
                run_id=header.run_id,
                run_dir=str(run_dir.resolve()),
                items=list(study.shard.items),
                seq_offset=offset,
                calls=len(calls),
                ledger_entries=manifest.ledger_entries,
                ledger_head=manifest.ledger_head,
                manifest_sha256=manifest_digest(header),
                passed=bool(study.passed),
                failure=None if study.passed else failure_reason(header),
            )
        )
        for path in sorted(run_dir.glob("*.jsonl")):
            renumber = path.name in RENUMBERED
            out_lines = lines.setdefault(path.name, [])
            for record in _jsonl(path):
                if path.name == "turns.jsonl" and record.get("kind") == "snapshot":
                    _place_snapshot(record, run_dir, out, study.shard.index, placed)
                out_lines.append(_rewrite(record, run_id, offset if renumber else None))
        _copy_bodies(run_dir, out)
        _copy_rest(run_dir, out / "shards" / str(study.shard.index))
        offset += top + 1
    for name, texts in lines.items():
        (out / name).write_text("".join(texts), encoding="utf-8")
    header = _merged_header(run_id, [h for _, h in shards], merged)
    first_manifest = shards[0][1].manifest
    assert first_manifest is not None
    prices = Path(first_manifest.prices_path) if first_manifest.prices_path else None
    ends = [m for m in merged if m.ledger_entries is not None and m.ledger_head is not None]
    last = max(ends, key=lambda m: m.ledger_entries or 0, default=None)
    write_manifest(
        out,
        header,
        prices=prices if prices is not None and prices.is_file() else None,
        ledger=first_manifest.ledger_path,
        ledger_chain=(last.ledger_entries, last.ledger_head)  # type: ignore[arg-type]
        if last is not None
        else None,
        images=dict(first_manifest.images),
    )
    return header


def _earlier_merge(out: Path, first: RunHeader) -> bool:
    """`out` holds a run merged from shards of the same study (and mode): merging again after a
    shard was re-run replaces it, so recovery needs no hand deletion."""
    try:
        earlier = read_header(out)
    except RunDirError:
        return False
    study, base = earlier.study, first.study
    return (
        study is not None
        and base is not None
        and bool(study.merged_from)
        and earlier.mode == first.mode
        and study.study_sha256 == base.study_sha256
    )


def _jsonl(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    out = []
    for lineno, line in enumerate(read_lines(path), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError:
            raise _refuse(
                f"{path}:{lineno} is not JSON", "run `harness audit` on that shard"
            ) from None
        if not isinstance(record, dict):
            raise _refuse(f"{path}:{lineno} is not a JSON object", "run `harness audit` on it")
        out.append(record)
    return out


def _rewrite(record: dict[str, Any], run_id: str, offset: int | None) -> str:
    for key in ("run_id", "run"):
        if key in record:
            record[key] = run_id
    if offset is not None and isinstance(record.get("seq"), int):
        record["seq"] = record["seq"] + offset
    return json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n"


def _copy_bodies(run_dir: Path, out: Path) -> None:
    if not (run_dir / "bodies").is_dir():
        return
    reader = PackReader.open(run_dir)
    if reader.damage is not None:
        raise _refuse(
            f"{run_dir}/bodies: {reader.damage[1]} at byte {reader.damage[0]}",
            "run `harness audit` on that shard",
        )
    store = BodyStore(out / "bodies")
    try:
        for digest in reader.index:
            if digest in store:
                continue
            try:
                store.put(reader.get(digest))  # get() re-hashes the body against its name
            except ValueError as e:
                raise _refuse(
                    f"{run_dir}: body {digest[:12]}: {e}", "run `harness audit` on that shard"
                ) from None
        store.sync()
    finally:
        store.close()


def _place_snapshot(
    record: dict[str, Any], run_dir: Path, out: Path, index: int, placed: dict[str, str]
) -> None:
    """Copy the snapshot a shard's `snapshot` line names into the merged run; the line is made
    to name where it now is."""
    path, sha = record.get("path"), record.get("sha256")
    parts = Path(path).parts if isinstance(path, str) else ()
    source = run_dir / path if isinstance(path, str) else run_dir
    if len(parts) < 2 or parts[0] != "snapshots" or ".." in parts or not source.is_dir():
        raise _refuse(
            f"{run_dir}/turns.jsonl: a snapshot line names {path!r}, not a folder under "
            "snapshots/ of that shard",
            "run `harness audit` on that shard",
        )
    assert isinstance(path, str)
    if placed.get(path, sha) != sha:  # another shard's copy of this history differs
        path = f"shards/{index}/{path}"
    if path not in placed:
        target = out / path
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copytree(source, target, symlinks=True)  # the arm's links stay links
        placed[path] = str(sha)
    record["path"] = path


def _copy_rest(run_dir: Path, dest: Path) -> None:
    for path in sorted(run_dir.rglob("*")):
        relative = path.relative_to(run_dir)
        if path.is_dir() or relative.parts[0] in ("bodies", "snapshots"):
            continue
        if len(relative.parts) == 1 and (path.suffix == ".jsonl" or path.name in HEADER_FILES):
            continue
        target = dest / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, target)


def _sum(dicts: list[dict[str, int]]) -> dict[str, int]:
    out: dict[str, int] = {}
    for d in dicts:
        for key, value in d.items():
            out[key] = out.get(key, 0) + value
    return out


def _sum2(dicts: list[dict[str, dict[str, int]]]) -> dict[str, dict[str, int]]:
    keys = {k for d in dicts for k in d}
    return {k: _sum([d.get(k, {}) for d in dicts]) for k in sorted(keys)}


def _merged_header(run_id: str, headers: list[RunHeader], merged: list[MergedShard]) -> RunHeader:
    studies: list[StudyRun] = [h.study for h in headers if h.study is not None]
    first = studies[0]
    study = first.model_copy(
        update={
            "items": sum(s.items for s in studies),
            "passed": all(s.passed for s in studies),
            "interrupted": any(s.interrupted for s in studies),
            "outcomes": _sum([s.outcomes for s in studies]),
            "infra_failures": sum(s.infra_failures for s in studies),
            "stray_connections": sum(s.stray_connections for s in studies),
            "memory_miss": _sum([s.memory_miss for s in studies]),
            "arm_outcomes": _sum2([s.arm_outcomes for s in studies]),
            "arm_failures": _arm_failures(merged, studies),
            "refused": _sum2([s.refused for s in studies]),
            "teardown_strays": _sum2([s.teardown_strays for s in studies]),
            "egress_dropped": _sum([s.egress_dropped for s in studies]),
            "halted": next((s.halted for s in studies if s.halted), None),
            "shard": None,
            "merged_from": merged,
        }
    )
    return headers[0].model_copy(
        update={
            "run_id": run_id,
            "started": min(h.started for h in headers),
            "ended": max((h.ended for h in headers if h.ended), default=None),
            "study": study,
            "manifest": None,
        }
    )


def _arm_failures(merged: list[MergedShard], studies: list[StudyRun]) -> dict[str, str]:
    """Each arm's failures in the shards that failed it, named by shard: the merged run fails
    for the same reasons its shards did."""
    out: dict[str, list[str]] = {}
    for shard, study in zip(merged, studies, strict=True):
        for arm, why in study.arm_failures.items():
            out.setdefault(arm, []).append(f"in shard {shard.index}/{shard.count}: {why}")
    return {arm: "; ".join(whys) for arm, whys in out.items()}
