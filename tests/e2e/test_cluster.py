"""The cluster examples (examples/cluster/) run as each engine would start them: three shards of a
study at once, live against a fake vendor, every shard charged to one PostgreSQL ledger and one
stage cap, then merged and audited by the examples' own merge step.

- Slurm: `slurm-array.sbatch` run by bash once per array task, with the variables Slurm sets
  (SLURM_ARRAY_TASK_ID 0..2 of an `--array=0-2`), then `slurm-merge.sbatch`;
- Kubernetes: the Indexed Job's container command from `indexed-job.yaml`, with its env and the
  JOB_COMPLETION_INDEX each pod gets, then the merge Job's command;
- Slurm for real: the same two scripts submitted with sbatch to a single-node Slurm the test
  starts (tests/slurm_cluster.py), the merge waiting on the array (afterok);
- GitHub Actions: the `shard` step of `github-matrix.yml` per matrix entry, each in its own copy
  of the gate's runs (as each runner downloads it), then the `merge` step over their artifacts.

What must hold: the merged run passes its audit (its calls found in the ledger under each
shard's run id), the report covers every item, the ledger's chain verifies, the stage's three
reservations all fit its cap, and a further run that would pass the cap is refused.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from harness.run.live.suite_record import SKIPPED
from ledger.ledger import Ledger, verify
from tests.fakevendor.server import FakeVendor
from tests.helpers.gate_studies import GATE_ARM
from tests.helpers.shard_runs import same_checkout
from tests.helpers.studies import REPO, harness, header, read_jsonl
from tests.pg_server import PgServer, running_server
from tests.proxy.live_helpers import STUDY_KEYS
from tests.slurm_cluster import Slurm, running_slurm
from tests.study_builder import StudyBuilder

pytestmark = pytest.mark.integration

EXAMPLES = REPO / "examples" / "cluster"
VENV_BIN = Path(sys.executable).parent
STAGE_CAP = Decimal("3.0")
SHARD_CAP = "1"  # three shards' reservations fill the stage exactly
ITEMS = [
    {"id": f"q{k}", "clock": f"2024-05-0{k}T10:00:00", "turns": [{"user": f"note {k}"}]}
    for k in range(1, 5)
] + [{"id": "q5", "clock": "2024-05-05T10:00:00", "turns": [{"user": "a"}, {"user": "b"}]}]
SHARD_TIMEOUT = 300


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """A study pointed at a fake vendor, its gate passed (live mode needs it), a PostgreSQL
    server for the ledgers."""
    base = tmp_path_factory.mktemp("cluster")
    with FakeVendor() as vendor:
        fields = {
            "deadline_ms": 20000,
            "vendors": {"openai": vendor.url},
            "stage": "cluster",
            "stage_cap": str(STAGE_CAP),
        }
        builder = StudyBuilder(name="cluster", items=ITEMS, fields=fields)
        study = builder.arm("toy", f"python {GATE_ARM}").write(base / "study")
        gate = base / "gate"
        done = harness("gate", str(study), "--run-dir", str(gate), "--isolation", "local")
        assert done.returncode == 0, done.stdout + done.stderr[-3000:]
        server_iter = running_server()
        server = next(server_iter)
        try:
            yield {"base": base, "study": study, "gate": gate, "pg": server}
        finally:
            server_iter.close()


@pytest.fixture(scope="module")
def slurm_node() -> Iterator[Slurm]:
    yield from running_slurm()


def env_for(url: str, **more: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HARNESS_", "SLURM_", "JOB_"))}
    return {
        **env,
        **STUDY_KEYS,
        "PATH": f"{VENV_BIN}:{env.get('PATH', '')}",
        "HARNESS_NO_PROGRESS": "1",
        "HARNESS_LEDGER_URL": url,
        # V0: the suite is what runs these shards, so no record of it passing exists yet; the
        # test's shards skip the check (each run.json records the deviation, asserted below).
        # The examples themselves are unchanged: a real cluster run still needs the record.
        "HARNESS_SKIP_SUITE": "1",
        **more,
    }


def run_all(commands: list[tuple[list[str], dict[str, str], Path]]) -> None:
    """Start every shard at once, as the engine would, and wait for all of them."""
    procs = [
        subprocess.Popen(
            cmd, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )
        for cmd, env, cwd in commands
    ]
    outputs = [p.communicate(timeout=SHARD_TIMEOUT)[0] for p in procs]
    for p, out in zip(procs, outputs, strict=True):
        assert p.returncode == 0, out[-4000:]


def check(cmd: list[str], env: dict[str, str], cwd: Path) -> str:
    done = subprocess.run(
        cmd, env=env, cwd=cwd, capture_output=True, text=True, timeout=SHARD_TIMEOUT
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return done.stdout


def slurm(c: dict[str, Any], url: str, work: Path) -> tuple[Path, str]:
    root = work / "runs"
    shutil.copytree(c["gate"], root)
    common = {"STUDY": str(c["study"]), "ROOT": str(root), "CAP": SHARD_CAP}
    common |= {"ISOLATION": "local", "SLURM_ARRAY_JOB_ID": "4242"}
    array = {"SLURM_ARRAY_TASK_MIN": "0", "SLURM_ARRAY_TASK_MAX": "2"}
    array["SLURM_ARRAY_TASK_COUNT"] = "3"
    run_all(
        [
            (
                ["bash", str(EXAMPLES / "slurm-array.sbatch")],
                env_for(url, **common, **array, SLURM_ARRAY_TASK_ID=str(task)),
                work,
            )
            for task in range(3)
        ]
    )
    out = work / "merged"
    said = check(
        ["bash", str(EXAMPLES / "slurm-merge.sbatch")],
        env_for(url, ROOT=str(root), OUT=str(out)),
        work,
    )
    return out, said


def kubernetes(c: dict[str, Any], url: str, work: Path) -> tuple[Path, str]:
    shards_job, merge_job = YAML(typ="safe").load_all((EXAMPLES / "indexed-job.yaml").read_text())
    spec = shards_job["spec"]
    assert spec["completionMode"] == "Indexed"
    (container,) = spec["template"]["spec"]["containers"]
    manifest_env = {e["name"]: str(e["value"]) for e in container["env"]}
    assert manifest_env["HARNESS_SHARD_COUNT"] == str(spec["completions"])
    root = work / "runs"
    shutil.copytree(c["gate"], root)
    # The cluster's own paths become this machine's; the rest is the manifest's.
    pod_env = manifest_env | {"STUDY": str(c["study"]), "ROOT": str(root), "CAP": SHARD_CAP}
    pod_env["HARNESS_LEDGER_URL"] = url
    run_all(
        [
            (
                [*container["command"], *container["args"]],
                env_for(url, **pod_env, JOB_COMPLETION_INDEX=str(index)),
                work,
            )
            for index in range(spec["completions"])
        ]
    )
    (merger,) = merge_job["spec"]["template"]["spec"]["containers"]
    said = check([*merger["command"], *merger["args"]], env_for(url, ROOT=str(root)), work)
    return Path(f"{root}.merged"), said


def github(c: dict[str, Any], url: str, work: Path) -> tuple[Path, str]:
    flow = YAML(typ="safe").load((EXAMPLES / "github-matrix.yml").read_text())
    jobs = flow["jobs"]
    shards = jobs["shard"]["strategy"]["matrix"]["shard"]
    (step,) = [s for s in jobs["shard"]["steps"] if s.get("name") == "shard"]
    (merge_step,) = [s for s in jobs["merge"]["steps"] if s.get("name") == "merge"]
    workflow_env = {"STUDY": str(c["study"]), "CAP": SHARD_CAP, "HARNESS_LEDGER_URL": url}
    commands = []
    for shard in shards:
        runner = work / f"runner-{shard}"  # each matrix job: its own checkout and runs
        root = runner / "runs"
        shutil.copytree(c["gate"], root)  # the gate artifact, downloaded
        env = {k: str(v).replace("${{ matrix.shard }}", str(shard)) for k, v in step["env"].items()}
        env = {k: v for k, v in env.items() if "secrets." not in v}
        run = step["run"].replace(".venv/bin/", f"{VENV_BIN}/")
        commands.append(
            (["bash", "-ec", run], env_for(url, **workflow_env, **env, ROOT="runs"), runner)
        )
    run_all(commands)
    merger = work / "merge-runner"
    for shard in shards:  # download-artifact, pattern shard-*: one folder per artifact
        shutil.copytree(work / f"runner-{shard}" / "runs", merger / "shards" / f"shard-{shard}")
    run = merge_step["run"].replace(".venv/bin/", f"{VENV_BIN}/")
    said = check(["bash", "-ec", run], env_for(url, **workflow_env), merger)
    return merger / "merged", said


def slurm_real(c: dict[str, Any], url: str, work: Path) -> tuple[Path, str]:
    """The same scripts submitted to a real single-node Slurm (tests/slurm_cluster.py): the
    array's tasks get their index from slurmd, the merge waits on them (afterok)."""
    cluster: Slurm = c["slurm"]
    root = work / "runs"
    shutil.copytree(c["gate"], root)
    env = env_for(url, STUDY=str(c["study"]), ROOT=str(root), CAP=SHARD_CAP, ISOLATION="local")
    # The test node is small: the command line's resources override the script's #SBATCH ones.
    small = ["--mem=256M", "--cpus-per-task=1"]
    array = cluster.sbatch(*small, str(EXAMPLES / "slurm-array.sbatch"), cwd=work, env=env)
    merge_env = env_for(url, ROOT=str(root), OUT=str(work / "merged"))
    after = cluster.sbatch(
        *small, f"--dependency=afterok:{array}", "--kill-on-invalid-dep=yes",
        str(EXAMPLES / "slurm-merge.sbatch"), cwd=work, env=merge_env,
    )  # fmt: skip
    cluster.wait(array, SHARD_TIMEOUT)
    tasks = sorted(work.glob(f"harness-{array}_*.out"))
    assert len(tasks) == 3, cluster.log()
    cluster.wait(after, SHARD_TIMEOUT)
    logs = "".join(p.read_text() for p in tasks)
    merged = work / f"harness-merge-{after}.out"
    assert merged.exists(), logs[-4000:] + cluster.log()
    return work / "merged", merged.read_text() + logs


ENGINES = {"slurm": slurm, "kubernetes": kubernetes, "github": github, "slurm-real": slurm_real}
ROOTS = {  # where each engine's shards found the gate: a new live run there passes live's check
    "slurm": Path("runs"),
    "slurm-real": Path("runs"),
    "kubernetes": Path("runs"),
    "github": Path("runner-1") / "runs",
}
SOURCES = {"slurm": "slurm", "kubernetes": "kubernetes", "github": "flag", "slurm-real": "slurm"}


@pytest.mark.parametrize("engine", sorted(ENGINES))
def test_shards_started_as_the_engine_starts_them_merge_under_one_stage_cap(
    cluster: dict[str, Any], tmp_path: Path, engine: str, request: pytest.FixtureRequest
) -> None:
    pg: PgServer = cluster["pg"]
    url = pg.new_database()
    if engine == "slurm-real":
        cluster = {**cluster, "slurm": request.getfixturevalue("slurm_node")}
    merged, said = ENGINES[engine](cluster, url, tmp_path)

    assert "audit merged: PASSED" in said or "PASSED" in said, said
    run = header(merged)["study"]
    assert run["passed"] and run["items"] == len(ITEMS)
    shards = run["merged_from"]
    assert [s["index"] for s in shards] == [1, 2, 3]
    for s in shards:
        shard_run = header(Path(s["run_dir"]))["study"]
        assert shard_run["shard"]["source"] == SOURCES[engine]
        assert shard_run["suite"] == SKIPPED  # the test's skip reached the shard, as a deviation
    calls = read_jsonl(merged / "calls.jsonl")
    assert calls and all(c["status"] == 200 for c in calls)

    # One stage, one cap, three reservations that fit it; every shard settled; a whole chain.
    with Ledger(url) as led:
        state = led.state()
    assert verify(url).ok
    stage = state.stages["cluster"]
    assert stage.cap_usd == STAGE_CAP and stage.refused == 0
    assert sorted(stage.runs) == sorted(s["run_id"] for s in shards)
    assert all(state.runs[r].settled for r in stage.runs)
    spent = sum((state.runs[r].computed_usd for r in stage.runs), Decimal(0))
    assert Decimal(0) < spent and state.stage_spend("cluster") <= STAGE_CAP

    # The report covers every item of every shard.
    report = tmp_path / "report"
    done = harness("report", str(merged), "--format", "md", "--out", str(report))
    assert done.returncode == 0, done.stdout + done.stderr[-2000:]
    records = read_jsonl(report / "records.jsonl")
    turns = {(r["item"], r["turn"]) for r in records if r["kind"] == "turn"}
    assert turns == {(item["id"], t) for item in ITEMS for t in range(len(item["turns"]))}

    # The settled shards' spend (at 1.5x until reconciled) leaves less than a full cap: another
    # machine's run asking for the whole stage is refused, and the refusal is recorded.
    again = harness(
        "live", str(cluster["study"]), "--cap", str(STAGE_CAP), "--shard", "1/3",
        "--run-dir", str(tmp_path / ROOTS[engine]),
        "--isolation", "local",
        env={**STUDY_KEYS, "HARNESS_LEDGER_URL": url},
    )  # fmt: skip
    assert again.returncode != 0 and "cap" in (again.stdout + again.stderr)
    with Ledger(url) as led:
        assert led.state().stages["cluster"].refused == 1


def test_a_resubmitted_slurm_task_runs_its_own_shard_and_the_merge_takes_it(
    cluster: dict[str, Any], tmp_path: Path, slurm_node: Slurm
) -> None:
    """`sbatch --array=1 slurm-array.sbatch` (re-running one task) runs shard 2 of the script's
    declared 3, not shard 1 of 1 (every item, and in live mode every item paid again); a merge
    of the folder then takes the re-run and names the run it replaced. Record mode: the shard
    index is the point here; the live path is the test above."""
    root = tmp_path / "runs"
    env = env_for("", STUDY=str(cluster["study"]), ROOT=str(root), MODE="record")
    env["ISOLATION"] = "local"
    small = ["--mem=256M", "--cpus-per-task=1"]
    first = slurm_node.sbatch(*small, str(EXAMPLES / "slurm-array.sbatch"), cwd=tmp_path, env=env)
    slurm_node.wait(first, SHARD_TIMEOUT)
    runs = {p.name for p in root.iterdir()}
    assert len(runs) == 3, slurm_node.log()
    again = slurm_node.sbatch(
        *small, "--array=1", str(EXAMPLES / "slurm-array.sbatch"), cwd=tmp_path, env=env
    )
    slurm_node.wait(again, SHARD_TIMEOUT)
    (rerun,) = [p for p in root.iterdir() if p.name not in runs]
    shard = header(rerun)["study"]["shard"]
    assert (shard["index"], shard["count"], shard["source"]) == (2, 3, "slurm")
    (earlier,) = [
        p for p in root.iterdir() if p != rerun and header(p)["study"]["shard"]["index"] == 2
    ]
    assert shard["items"] == header(earlier)["study"]["shard"]["items"] != []
    assert len(shard["items"]) < len(ITEMS)

    same_checkout([root])
    done = harness("merge", str(root), "--out", str(tmp_path / "merged"))
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    assert f"left out: {earlier} (shard 2/3, passed; {rerun.name} taken: passed)" in done.stdout
    merged = header(tmp_path / "merged")["study"]
    assert [Path(s["run_dir"]).name for s in merged["merged_from"]][1] == rerun.name
