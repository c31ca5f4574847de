"""The coupled example (examples/coupled) on the docker backend, in record mode: `harness gate`
runs it twice, each arm in its own container. Shows the order per turn (every arm's turn t before
any arm's turn t+1, B, C0, C1 then Z, named in turns.jsonl and followed by the calls), B's turn
context reaching C0 and C1 (recorded and hashed, in their requests' system prompt), and the
cross-arm gate on C0 -> C1 passing on the right element; with a wrong element the pair fails,
and `harness live` drops C1 before any spend (run.json says why; `--arm C1` is refused)."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from harness.run.stages.prepare import RunRequest, prepare
from harness.study import load_study
from tests.helpers.studies import REPO, harness, header, read_jsonl

pytestmark = pytest.mark.integration
EXAMPLE = REPO / "examples" / "coupled"
ORDER = ["B", "C0", "C1", "Z"]


def _study(folder: Path, elements: str | None = None) -> Path:
    shutil.copytree(EXAMPLE, folder)
    study = folder / "study.toml"
    study.write_text(study.read_text().replace("../../ledger.jsonl", "ledger.jsonl"))
    if elements is not None:
        (folder / "elements.txt").write_text(elements)
    return study


def _gate(study: Path, runs: Path) -> dict[str, Any]:
    done = harness("gate", str(study), "--run-dir", str(runs), "--isolation", "docker")
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    [path] = runs.glob("*/gate.json")
    gate: dict[str, Any] = json.loads(path.read_text())
    gate["stdout"] = done.stdout
    return gate


@pytest.mark.usefixtures("images")
def test_the_coupled_example_in_docker(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The live refusals below come before any call leaves; the keys are checked first (they
    # must be set for a live run), so any value will do.
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-sent")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-not-sent")
    study, runs = _study(tmp_path / "right"), tmp_path / "runs-right"
    gate = _gate(study, runs)
    assert gate["passed"] and gate["counts"]["divergences"] == 0
    [pair] = gate["pairs"]
    assert (pair["leader"], pair["follower"], pair["passed"], pair["checked"]) == (
        "C0", "C1", True, 2,
    )  # fmt: skip
    assert "cross-arm pair C0 -> C1 (elements.txt): passed" in gate["stdout"]
    run = Path(gate["runs"][0]["run_dir"])
    assert header(run)["study"]["isolation"] == "docker"
    turns = read_jsonl(run / "turns.jsonl")
    assert all(r["outcome"] == "done" and r["order"] == ORDER for r in turns)
    ran = [(r["item"], r["turn"], r["arm"]) for r in turns]
    assert ran == [(i, t, a) for i, n in (("router", 3), ("garden", 2)) for t in range(n)
                   for a in ORDER]  # fmt: skip
    calls = sorted(read_jsonl(run / "calls.jsonl"), key=lambda c: c["seq"])
    assert [(c["item"], c["turn"], c["arm"]) for c in calls] == ran
    b = {(r["item"], r["turn"]): r for r in turns if r["arm"] == "B"}
    for r in (r for r in turns if r["arm"] in ("C0", "C1")):
        context = b[(r["item"], r["turn"])]["addon_returned"]
        assert context and r["addon_from"] == "B"
        assert r["addon_sha256"] == hashlib.sha256(context.encode()).hexdigest()

    wrong = _study(tmp_path / "wrong", 'router 0 "\\n\\nThe user sounded upset."\n')
    wrong_runs = tmp_path / "runs-wrong"
    gate = _gate(wrong, wrong_runs)
    assert gate["passed"]  # determinism holds; the pair does not
    [pair] = gate["pairs"]
    assert not pair["passed"] and "C1's request differs from C0's" in pair["failures"][0]
    assert "C1 is dropped from live runs before any spend; C0 is the candidate" in gate["stdout"]
    refused = harness("live", str(wrong), "--cap", "1", "--run-dir", str(wrong_runs),
                      "--isolation", "docker", "--arm", "C1")  # fmt: skip
    assert refused.returncode != 0 and "--arm C1: dropped before any spend" in refused.stderr
    request = RunRequest(load_study(wrong), "live", wrong_runs, cap="1", isolation="docker")
    plan = prepare(request)  # the live run as it would start: no arm, no proxy, no spend yet
    saved = header(plan.run_dir)["study"]
    assert saved["arms"] == ["B", "C0", "Z"]
    assert saved["dropped_arms"]["C1"].endswith("C0 is the candidate")
