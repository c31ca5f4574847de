"""The judgment sets a run's audit re-checks (`harness audit RUN_DIR [--judgments SET]...`).

A set judges a run when its manifest lists the run's id. `harness audit` re-checks the sets it
is given, and those it finds beside the run (a folder holding judgments.json, inside the run's
folder or its parent's, one level deep: where `harness judge --out` is usually pointed) that
judge it. Each is checked by `verify_set` (every vote traced to its planned prompt and its kept
reply), and against the run: the turns it judged must be the run's turns.jsonl as it is now (an
answer edited after judging would leave the votes describing other text). A set given by name
that does not judge this run is itself a finding: the audit was pointed at the wrong thing.
"""

from __future__ import annotations

from pathlib import Path

from harness.judge.verify import verify_set
from rundir.errors import RunDirError
from rundir.judgments import MANIFEST_FILE, read_manifest, sha256_bytes


def _judges(set_dir: Path, run_id: str) -> bool:
    try:
        return any(ref.run_id == run_id for ref in read_manifest(set_dir).runs)
    except RunDirError:
        return False


def _where(set_dir: Path, problem: str) -> str:
    """The file a problem names first (verify_set starts with it), else the set."""
    head = problem.split(" ", 1)[0].rstrip(":")
    if head.endswith((".jsonl", ".json", ".txt")):
        return str(set_dir / head)
    return str(set_dir)


def sets_beside(run_dir: Path, run_id: str) -> list[Path]:
    """Judgment sets in the run's folder or beside it that judge `run_id`."""
    found = []
    for folder in (run_dir, run_dir.parent):
        try:
            children = sorted(p for p in folder.iterdir() if p.is_dir())
        except OSError:
            continue
        found += [p for p in children if (p / MANIFEST_FILE).is_file() and _judges(p, run_id)]
    return found


def judgment_set_findings(
    run_dir: Path, run_id: str, given: list[Path] | None = None
) -> tuple[list[Path], list[tuple[str, str]]]:
    """The sets re-checked, and (where, what) for every problem found; [] when all re-check."""
    findings: list[tuple[str, str]] = []
    sets = list(given or [])
    for set_dir in sets:
        try:
            manifest = read_manifest(set_dir)
        except RunDirError as e:
            findings.append((str(set_dir / MANIFEST_FILE), e.message))
            continue
        if not any(ref.run_id == run_id for ref in manifest.runs):
            findings.append((str(set_dir), f"this judgment set does not judge run {run_id}"))
    seen = {p.resolve() for p in sets}
    sets += [p for p in sets_beside(run_dir, run_id) if p.resolve() not in seen]
    turns = run_dir / "turns.jsonl"
    now = sha256_bytes(turns.read_bytes()) if turns.exists() else sha256_bytes(b"")
    for set_dir in sets:
        try:
            manifest = read_manifest(set_dir)
        except RunDirError:
            continue  # named above
        findings += [(_where(set_dir, problem), problem) for problem in verify_set(set_dir)]
        for ref in manifest.runs:
            if ref.run_id == run_id and ref.turns_sha256 != now:
                findings.append(
                    (
                        str(turns),
                        f"judgment set {set_dir} judged other turns than these (SHA-256 "
                        f"{ref.turns_sha256[:12]}, now {now[:12]}): answers changed after judging",
                    )
                )
    return sets, findings
