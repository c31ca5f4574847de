"""`--isolation auto` on a machine with an engine and the images: docker, unless the study
cannot run in containers, and then local with the condition named."""

from __future__ import annotations

from pathlib import Path

import docker
import pytest

from harness.isolation.choose import choose_isolation
from harness.study import load_study
from tests.helpers.studies import read_jsonl
from tests.study_builder import StudyBuilder

REPO = Path(__file__).resolve().parents[2]
QUICKSTART = REPO / "examples" / "quickstart" / "study.toml"
QUICKSTART_ITEMS = read_jsonl(REPO / "examples" / "quickstart" / "items.jsonl")


@pytest.fixture(scope="module")
def images(docker_engine: docker.DockerClient) -> None:
    from harness.images.build import BuildOptions, build_images

    build_images(BuildOptions(offline=True), lambda line: None)


def test_the_quickstart_runs_in_docker_when_it_can(images: None) -> None:
    choice = choose_isolation(load_study(QUICKSTART))
    assert choice.isolation == "docker", choice.reason


def test_an_arm_outside_the_study_folder_keeps_the_study_local(
    images: None, tmp_path: Path
) -> None:
    study = StudyBuilder(name="outside", items=QUICKSTART_ITEMS)
    study.arm("toy", f"python {REPO / 'tests' / 'harness' / 'study_arm.py'}")
    choice = choose_isolation(load_study(study.write(tmp_path)))
    assert choice.isolation == "local"
    assert "arm 'toy' runs" in choice.reason and "outside the study folder" in choice.reason


def test_a_missing_image_keeps_the_study_local_and_says_how_to_build(
    images: None, tmp_path: Path
) -> None:
    (tmp_path / "compose.yaml").write_text(
        "services:\n  proxy:\n    image: harness-proxy\n"
        "  engine:\n    image: harness-test-never-built\n    command: python -m arms.bare\n"
    )
    study = StudyBuilder(name="missing", items=QUICKSTART_ITEMS, arms=["engine"])
    choice = choose_isolation(load_study(study.write(tmp_path)))
    assert choice.isolation == "local"
    assert "harness-test-never-built" in choice.reason and "harness images build" in choice.reason
