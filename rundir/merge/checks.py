"""What `harness merge` checks before it writes anything, and what `harness audit` re-checks of a
merged run's shards.

Every directory is a finished shard (run.json with a manifest) whose files still hash as its
manifest lists them (a shard edited after its run would pass its numbers on to the merged run
with a clean audit); every shard was made by the same harness (commit and version: a changed
default stub reply gives other texts under the same study hash), of the same study, compose
file, items, stubs, price table, images, mode, arms, isolation, clock pinning and bounds, with
the same shard count; every index 1..N is there exactly once and no item is in two shards. A
shard that is missing, given twice, unfinished, edited or from another setup is refused, naming
it and what differs.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from rundir.errors import RunDirError
from rundir.runs import NOT_LISTED, Manifest, RunHeader, file_sha256, read_header

# A shard's fields that must be the same in every shard for the merged run to be one study run.
# ... and the bounds every arm held (rundir/runs/limits.py): a shard whose arms ran under other
# bounds is another setup, which the merged run's one `arm_limits` could not show.
SAME = (
    *("study_sha256", "compose_sha256", "items_sha256", "isolation", "clock_pinning", "arms"),
    *("limits", "arm_limits"),
)


def _refuse(message: str, hint: str) -> RunDirError:
    return RunDirError(message, hint=hint)


def changed_files(run_dir: Path, manifest: Manifest) -> list[str]:
    """The files of `run_dir` that differ from its manifest, each with how: missing, changed
    (size or SHA-256), or added after the run."""
    found: list[str] = []
    listed = set()
    for entry in manifest.files:
        listed.add(entry.path)
        path = run_dir / entry.path
        if not path.is_file():
            found.append(f"{entry.path}: listed in the manifest but missing")
        elif path.stat().st_size != entry.size or file_sha256(path) != entry.sha256:
            found.append(f"{entry.path}: changed since the run (its SHA-256 is not the manifest's)")
    for path in sorted(p for p in run_dir.rglob("*") if p.is_file()):
        relative = path.relative_to(run_dir).as_posix()
        if relative in listed or relative in NOT_LISTED or relative.endswith(".tmp"):
            continue
        found.append(f"{relative}: not in the manifest: added after the run")
    return found


def manifest_digest(header: RunHeader) -> str:
    """SHA-256 of a run's manifest as run.json holds it: what a merged run records of each
    shard, so a shard re-sealed after the merge no longer matches."""
    assert header.manifest is not None
    return hashlib.sha256(header.manifest.model_dump_json(by_alias=True).encode()).hexdigest()


def _sealed(run_dir: Path, header: RunHeader, label: str) -> None:
    study = header.study
    assert study is not None
    if header.manifest is None:
        raise _refuse(
            f"{run_dir} (shard {label}) has not finished: no manifest in its run.json",
            f"wait for the shard to end, or run shard {label} again",
        )
    if study.interrupted:
        raise _refuse(
            f"{run_dir} (shard {label}) was interrupted: it did not run all its items",
            f"run shard {label} again (`--shard {label}`)",
        )
    if study.resumed_from or study.skipped_pairs:
        raise _refuse(
            f"{run_dir} (shard {label}) resumes another run, which a merge cannot join yet",
            "run the shard again from the start",
        )
    changed = changed_files(run_dir, header.manifest)
    if changed:
        more = f" (and {len(changed) - 1} more)" if len(changed) > 1 else ""
        raise _refuse(
            f"{run_dir} (shard {label}) was edited after its run: {changed[0]}{more}",
            f"run `harness audit {run_dir}`; run shard {label} again, or restore its files",
        )


def _differs(header: RunHeader, first: RunHeader) -> str | None:
    """What of the harness or the study's inputs differs between two shards, or None."""
    study, base = header.study, first.study
    assert study is not None and base is not None and study.shard and base.shard
    for name in SAME:
        if getattr(study, name) != getattr(base, name):
            return f"its {name} is {getattr(study, name)!r}, not {getattr(base, name)!r}"
    mine, theirs = header.manifest, first.manifest
    assert mine is not None and theirs is not None
    pairs = (
        ("harness commit (tool_commit)", mine.tool_commit, theirs.tool_commit),
        ("harness version", mine.tool_version, theirs.tool_version),
        ("tool versions", header.versions, first.versions),
        ("stubs file (stubs_sha256)", header.stubs_sha256, first.stubs_sha256),
        ("price table (prices_sha256)", study.prices_sha256, base.prices_sha256),
        ("item count (--limit)", study.shard.of_items, base.shard.of_items),
        ("arm images", dict(mine.images), dict(theirs.images)),
    )
    for what, value, other in pairs:
        if value != other:
            return f"its {what} is {value!r}, not {other!r}"
    return None


def check_shards(dirs: list[Path]) -> list[tuple[Path, RunHeader]]:
    """The shards in index order, or RunDirError naming the first one that does not belong."""
    if not dirs:
        raise _refuse("no shards to merge", "give the shards' run directories")
    shards: list[tuple[Path, RunHeader]] = []
    for run_dir in dirs:
        header = read_header(run_dir)
        study = header.study
        if study is None or study.shard is None:
            raise _refuse(
                f"{run_dir} is not a shard of a study run",
                "merge the run directories of `harness record|live STUDY --shard I/N`",
            )
        _sealed(run_dir, header, study.shard.label)
        shards.append((run_dir, header))
    first_dir, first = shards[0]
    base = first.study
    assert base is not None and base.shard is not None
    for run_dir, header in shards[1:]:
        study = header.study
        assert study is not None and study.shard is not None
        if header.mode != first.mode or study.shard.count != base.shard.count:
            raise _refuse(
                f"{run_dir} is shard {study.shard.label} of a {header.mode} run; {first_dir} "
                f"is shard {base.shard.label} of a {first.mode} run",
                "merge only the shards of one run of one study",
            )
        what = _differs(header, first)
        if what is not None:
            raise _refuse(
                f"{run_dir} (shard {study.shard.label}) is from another study, setup or harness "
                f"than {first_dir}: {what}",
                "run every shard with one harness checkout, the same study files and --limit, "
                "and the same images (built once and loaded on every node)",
            )
    _one_each(shards)
    shards.sort(key=lambda pair: pair[1].study.shard.index)  # type: ignore[union-attr]
    return shards


def _one_each(shards: list[tuple[Path, RunHeader]]) -> None:
    by_index: dict[int, Path] = {}
    owner: dict[str, Path] = {}
    for run_dir, header in shards:
        assert header.study is not None and header.study.shard is not None
        shard = header.study.shard
        if shard.index in by_index:
            raise _refuse(
                f"shard {shard.label} is given twice: {by_index[shard.index]} and {run_dir}",
                "give each shard once (or give their folder: the latest run that passed is taken)",
            )
        by_index[shard.index] = run_dir
        for item in shard.items:
            if item in owner:
                raise _refuse(
                    f"item {item!r} is in two shards: {owner[item]} and {run_dir}",
                    "merge only the shards of one run of one study",
                )
            owner[item] = run_dir
    base = shards[0][1].study
    assert base is not None and base.shard is not None
    count = base.shard.count
    missing = [i for i in range(1, count + 1) if i not in by_index]
    if missing:
        names = ", ".join(f"{i}/{count}" for i in missing)
        raise _refuse(
            f"shard {names} of study {base.name} ({base.study_sha256[:12]}) is missing",
            "give every shard's run directory (or run the missing shard first)",
        )


def shard_findings(header: RunHeader) -> list[tuple[str, str]]:
    """A merged run's shards re-checked where they are (audit): each shard's run directory is
    still the run the merge took (its id and manifest) and its files still hash as listed."""
    found: list[tuple[str, str]] = []
    study = header.study
    for shard in study.merged_from if study else []:
        where = f"shard {shard.index}/{shard.count}"
        run_dir = Path(shard.run_dir)
        try:
            own = read_header(run_dir)
        except RunDirError as e:
            found.append((where, f"{run_dir}: cannot read the shard's run.json: {e}"))
            continue
        if own.run_id != shard.run_id or own.manifest is None:
            found.append((where, f"{run_dir} is no longer the run {shard.run_id} merged"))
            continue
        if shard.manifest_sha256 and manifest_digest(own) != shard.manifest_sha256:
            found.append((where, f"{run_dir}: its manifest changed since the merge"))
        found += [
            (where, f"{run_dir}: {change}") for change in changed_files(run_dir, own.manifest)
        ]
    return found
