"""The run pipeline's stages on their own: prepare checks before anything exists, start always
stops what it started, finish writes the verdict before it raises; and the flow bench's count."""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path

import pytest

from bench.flow_bench import Flow, FlowTracer
from harness.errors import HarnessError
from harness.isolation.base import PROXY_READY
from harness.isolation.local import LocalBackend
from harness.run.stages.drive import Driven
from harness.run.stages.finish import finish
from harness.run.stages.prepare import RunRequest, prepare
from harness.run.stages.start import running
from harness.study import load_study
from rundir.runs.header import read_header
from tests.helpers.studies import REPO

QUICKSTART = REPO / "examples" / "quickstart" / "study.toml"


def _request(run_root: Path, **changes: object) -> RunRequest:
    request = RunRequest(
        study=load_study(QUICKSTART), mode="record", run_root=run_root, isolation="local"
    )
    for name, value in changes.items():
        setattr(request, name, value)
    return request


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"limit": 0}, "--limit must be a positive number"),
        ({"arms": ["nobody"]}, "--arm nobody: not an arm"),
        ({"mode": "live"}, "live mode needs a cap"),
        ({"mode": "live", "cap": "1"}, "no passing record run"),
    ],
)
def test_prepare_refuses_before_it_creates_anything(
    tmp_path: Path, changes: dict[str, object], message: str
) -> None:
    with pytest.raises(HarnessError, match=message):
        prepare(_request(tmp_path, **changes))
    assert list(tmp_path.iterdir()) == []


def test_prepare_writes_the_header_and_hands_on_what_the_run_needs(tmp_path: Path) -> None:
    plan = prepare(_request(tmp_path, arms=["retrieval"], limit=2))
    header = read_header(plan.run_dir)
    assert header.study is not None and header.study.isolation == "local"
    assert header.study.arms == ["retrieval"] and header.study.items == 2
    assert header.study.passed is None and header.ended is None  # finish decides
    assert plan.turns_to_run == sum(len(item.turns) for item in plan.items) == 6
    assert plan.settings.run_id == header.run_id and plan.settings.arms == ["retrieval"]
    assert not (plan.run_dir / "turns.jsonl").exists()  # drive's file, not prepare's


def test_start_stops_the_proxy_when_the_run_fails_inside(tmp_path: Path) -> None:
    plan = prepare(_request(tmp_path))
    backend = plan.backend
    assert isinstance(backend, LocalBackend)
    started: list[subprocess.Popen[bytes]] = []

    async def fail_inside() -> None:
        async with running(backend, plan.settings):
            assert backend.proxy is not None
            started.append(backend.proxy)
            raise RuntimeError("the drive failed")

    with pytest.raises(RuntimeError, match="the drive failed"):
        asyncio.run(fail_inside())
    assert started and started[0].poll() is not None and backend.proxy is None


def test_finish_records_an_infrastructure_failure_then_raises(tmp_path: Path) -> None:
    plan = prepare(_request(tmp_path))
    # A proxy that had started (its log says ready) and then died: an infrastructure failure,
    # recorded in the run (one that never got ready is a refusal, which leaves nothing).
    (plan.run_dir / "logs").mkdir(parents=True, exist_ok=True)
    (plan.run_dir / "logs" / "proxy.log").write_text(f"{PROXY_READY}\n")
    with pytest.raises(HarnessError, match="the run stopped: the proxy died"):
        finish(plan, Driven(fatal="the proxy died", infra_failures=1))
    run = read_header(plan.run_dir).study
    assert run is not None and not run.passed and run.infra_failures == 1
    assert run.outcomes == {}  # no turn ran, and turns.jsonl does not exist


def test_a_proxy_that_never_got_ready_is_a_refusal_that_leaves_nothing(tmp_path: Path) -> None:
    plan = prepare(_request(tmp_path))
    with pytest.raises(HarnessError, match="refused before it started"):
        finish(plan, Driven(fatal="the stage cap is reached", infra_failures=1))
    assert not plan.run_dir.exists()


def test_flow_counts_visits_and_returns_per_level() -> None:
    tracer = FlowTracer("run_study", set())
    tracer.calls = [(0, "a"), (1, "b"), (2, "c"), (1, "b"), (1, "a"), (2, "b"), (1, "d")]
    top = tracer.flow(1)
    assert top.visits == ["a", "b", "a", "d"] and top.files == 3 and top.returns == 1
    assert tracer.flow(2).visits == ["a", "b", "c", "b", "a", "b", "d"]
    assert Flow(["x", "y", "x", "x"]).per_file() == {"x": 3, "y": 1}
