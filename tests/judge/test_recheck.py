"""A judgment set that proves itself: the seal binds the manifest's hash, and `harness judge
--verify` and the report recompute every derived field (bars, the running watch, stability,
A/A, set-asides, axis statuses) from the tasks and votes by the stage's own flow, refusing a
manifest that differs and naming the field."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from harness.errors import HarnessError
from harness.judge.plan import Settings
from harness.judge.stage import StageOptions, run_stage
from harness.judge.verify import verify_set
from harness.report.reading.judged import load_judged
from rundir.errors import RunDirError
from rundir.judgments.seal import bind_seal, open_seal, read_seal
from tests.judge.runs import judge_entry, write_judges, write_rubrics, write_run, write_study
from tests.judge.test_cli_judge import harness


@pytest.fixture(scope="module")
def short_aa(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An honest stage whose A/A control is short of pairs: its axis is "incomplete"."""
    root = tmp_path_factory.mktemp("short_aa")
    study = write_study(root / "study", items=4)
    first = write_run(root / "runs", study, "run-a")
    second = write_run(root / "runs", study, "run-b")
    judges = write_judges(
        root / "judges.toml", alpha=judge_entry("rules-a"), beta=judge_entry("rules-b", "high")
    )
    options = StageOptions(
        seed=3,
        aa_run=second,
        aa_arm="bare",
        aa_pairs=1000,  # more than the study has: the A/A control cannot pass
        settings=Settings(controls_per_kind=3),
        jobs=2,
        resamples=500,
    )
    run_stage([first], write_rubrics(root / "rubrics", flag=False), judges, root / "set", options)
    return root / "set"


def _copy(set_dir: Path, tmp_path: Path) -> Path:
    copied = tmp_path / "set"
    shutil.copytree(set_dir, copied)
    shutil.copy(set_dir.with_name("set.seal.json"), tmp_path / "set.seal.json")
    return copied


def _edit(set_dir: Path, change: dict[str, object]) -> None:
    path = set_dir / "judgments.json"
    manifest = json.loads(path.read_text())
    for key, value in change.items():
        manifest[key] = value
    path.write_text(json.dumps(manifest, indent=2))


def _passed(set_dir: Path) -> dict[str, object]:
    """The manifest's A/A and axes, all set to "passed" by hand."""
    manifest = json.loads((set_dir / "judgments.json").read_text())
    aa = [{**a, "status": "passed"} for a in manifest["aa"]]
    axes = [{**a, "status": "passed", "reasons": []} for a in manifest["axes"]]
    return {"aa": aa, "axes": axes}


def test_a_fresh_set_rechecks_and_its_seal_binds_its_manifest(short_aa: Path) -> None:
    assert verify_set(short_aa) == []
    manifest = json.loads((short_aa / "judgments.json").read_text())
    assert [a["status"] for a in manifest["axes"]] == ["incomplete"]
    assert manifest["aa"][0]["status"] == "incomplete"
    seal = read_seal(short_aa, short_aa.with_name("set.seal.json"))
    assert seal.manifest_sha256 is not None


def test_a_hand_edited_manifest_is_refused_naming_the_field(short_aa: Path, tmp_path: Path) -> None:
    copied = _copy(short_aa, tmp_path)
    _edit(copied, _passed(copied))
    problems = verify_set(copied)
    assert problems[0].startswith("judgments.json is not the manifest its seal binds")
    named = " ".join(problems)
    assert "aa[0] (better_reply).status is 'passed', recomputed 'incomplete'" in named
    assert "axes[0] (better_reply).status is 'passed', recomputed 'incomplete'" in named
    # `harness judge --verify` says so and exits 1; the report refuses the set in one line.
    done = harness("judge", "--verify", str(copied))
    assert done.returncode == 1 and "aa[0] (better_reply).status" in done.stdout
    with pytest.raises(HarnessError, match=r"seal binds"):
        load_judged(copied)
    with pytest.raises(RunDirError, match="not the manifest its seal binds"):
        open_seal(copied, tmp_path / "set.seal.json")


def test_an_edit_with_the_seal_bound_again_is_still_named(short_aa: Path, tmp_path: Path) -> None:
    """Whoever can rewrite the seal too gets past the hash, not past the recomputation."""
    copied = _copy(short_aa, tmp_path)
    _edit(copied, _passed(copied))
    bind_seal(tmp_path / "set.seal.json", copied)
    problems = verify_set(copied)
    assert problems and all(p.startswith("judgments.json: ") for p in problems)
    assert any("axes[0] (better_reply).status is 'passed'" in p for p in problems)
    with pytest.raises(HarnessError, match=r"aa\[0\] \(better_reply\)\.status"):
        load_judged(copied)


@pytest.mark.parametrize(
    ("field", "named"),
    [
        ("calibration", "calibration[0]"),
        ("stability", "stability[0]"),
        ("running", "running[0]"),
        ("set_aside", "set_aside lists"),
        ("halts", "halts lists 1, recomputed 0"),
        ("aa_pairs", "aa[0]"),  # an input: the A/A control it gives is not the one recorded
    ],
)
def test_every_derived_field_is_recomputed(
    short_aa: Path, tmp_path: Path, field: str, named: str
) -> None:
    copied = _copy(short_aa, tmp_path)
    manifest = json.loads((copied / "judgments.json").read_text())
    change: object
    if field == "halts":
        change = ["halted: judge alpha caught 0 of 10 mixed-in controls"]
    elif field == "set_aside":
        change = [{"judgment": "j0", "rubric": "better_reply", "missing": ["alpha/first"]}]
    elif field == "aa_pairs":
        change = 1
    else:
        first = {**manifest[field][0], "status": "failed", "value": 0.123}
        change = [first, *manifest[field][1:]]
    _edit(copied, {field: change})
    bind_seal(tmp_path / "set.seal.json", copied)
    problems = verify_set(copied)
    assert any(named in p for p in problems), problems
