"""Engine parity across a real mem0 arm and the retrieval arm, in containers (issue 36 item 5):
under one `[parity]` block both arms' captured main requests name the same answer model and
output limit and recall at most the same top-k memories, though their own defaults differ
(mem0 recalls 5, retrieval 3); an arm whose environment overrides the block is refused at load."""

from __future__ import annotations

import json
from pathlib import Path

import docker
import pytest

from arms.recall import counted
from harness.errors import HarnessError
from harness.study import load_study
from rundir.calls.packread import PackReader
from tests.helpers.studies import harness, only_run, read_jsonl

pytestmark = [pytest.mark.integration, pytest.mark.timeout(1500)]

PARITY = {"arms": ["mem0", "retrieval"], "top_k": 2, "answer_model": "gpt-4.1-nano",
          "answer_max_tokens": 77}  # fmt: skip
TURNS = ["My cat is called Miso.", "My dog is called Tofu.", "My fish is called Nori.",
         "My bird is called Kiwi.", "What are my pets called?"]  # fmt: skip
COMPOSE = """services:
  proxy:
    image: harness-proxy
    networks: [mem0, retrieval]
  mem0:
    image: harness-mem0
    command: python -m arms.mem0
    environment: {SEAM_HOST: 0.0.0.0, MEM0_TELEMETRY: "false"%s}
    networks: [mem0]
  retrieval:
    image: harness-arm
    command: python -m arms.retrieval
    environment: {SEAM_HOST: 0.0.0.0}
    networks: [retrieval]
networks:
  mem0: {internal: true}
  retrieval: {internal: true}
"""


def _study(folder: Path, mem0_env: str = "") -> Path:
    folder.mkdir(parents=True)
    (folder / "compose.yaml").write_text(COMPOSE % mem0_env)
    item = {"id": "pets", "clock": "2024-05-01T10:00:00", "turns": [{"user": t} for t in TURNS]}
    (folder / "items.jsonl").write_text(json.dumps(item) + "\n")
    fields = "".join(f"{k} = {json.dumps(v)}\n" for k, v in PARITY.items())
    (folder / "study.toml").write_text(
        'name = "parity"\narms = ["mem0", "retrieval"]\nitems = "items.jsonl"\n'
        f'deadline_ms = 60000\nledger = "ledger.jsonl"\n\n[parity]\n{fields}'
    )
    return folder / "study.toml"


@pytest.fixture(scope="module")
def engine_images(docker_engine: docker.DockerClient) -> None:
    from harness.images.build import BuildOptions, build_images

    build_images(BuildOptions(offline=True, extras=("engines",)), lambda line: None)


def test_mem0_and_retrieval_hold_one_parity_block_in_their_requests(
    engine_images: None, tmp_path: Path
) -> None:
    study = _study(tmp_path / "study")
    runs = tmp_path / "runs"
    done = harness("record", str(study), "--run-dir", str(runs), "--isolation", "docker")
    assert done.returncode == 0, done.stdout + done.stderr[-4000:]
    run = only_run(runs)
    pack = PackReader.open(run)
    mains = [c for c in read_jsonl(run / "calls.jsonl") if c["purpose"] == "main"]
    recalled: dict[str, list[int]] = {"mem0": [], "retrieval": []}
    for call in sorted(mains, key=lambda c: c["seq"]):
        assert call["model_requested"] == "gpt-4.1-nano", call["arm"]
        body = json.loads(pack.get(call["request_body"]))
        assert body["max_completion_tokens"] == 77, call["arm"]
        system = body["messages"][0]["content"]
        top_k, shown = counted(system) or (2, 0)  # no section: nothing recalled
        assert top_k == 2, call["arm"]  # the block's, in the request the model was sent
        recalled[call["arm"]].append(shown)
    assert len(recalled["mem0"]) == len(recalled["retrieval"]) == len(TURNS)
    assert max(recalled["mem0"]) <= 2 and max(recalled["mem0"]) > 0  # top-k 2, not mem0's 5
    assert recalled["retrieval"] == [0, 1, 2, 2, 2]  # top-k 2, not retrieval's 3


def test_a_mem0_arm_overriding_the_block_is_refused(tmp_path: Path) -> None:
    with pytest.raises(HarnessError, match="ARM_TOP_K='8' but \\[parity\\] top_k = 2"):
        load_study(_study(tmp_path / "study", ', ARM_TOP_K: "8"'))
