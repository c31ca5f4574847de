"""Docker names of a worker's copy of an arm: `A-w<k>`, the study's arm as its host name, and a
study whose names would collide refused in one line (harness/isolation/docker/names.py)."""

from __future__ import annotations

import pytest

from harness.isolation.base import InfraError
from harness.isolation.docker.names import MAX_INSTANCES, check_names, docker_name, host_name
from harness.run.stages.worker_names import instances


def test_a_copy_gets_a_name_docker_accepts_and_its_arms_host_name() -> None:
    assert docker_name("mem0") == "mem0" and docker_name("mem0@2") == "mem0-w2"
    assert host_name("mem0@2") == "mem0" == host_name("mem0")
    check_names(instances(["bare", "mem0"], 4))  # nothing collides


@pytest.mark.parametrize(
    ("arms", "workers", "said"),
    [
        (["a", "a-w1"], 2, "'a@1' would both be named 'a-w1'"),
        (["proxy"], 1, "rename arm 'proxy'"),
        (["ctl"], 2, "rename arm 'ctl'"),
        ([f"arm{n}" for n in range(26)], 4, "more than the proxy's"),
    ],
)
def test_names_that_would_collide_are_refused(arms: list[str], workers: int, said: str) -> None:
    with pytest.raises(InfraError) as refused:
        check_names(instances(arms, workers))
    assert said in str(refused.value)
    assert len(instances([f"arm{n}" for n in range(25)], 4)) == MAX_INSTANCES  # the most: fine
    check_names(instances([f"arm{n}" for n in range(25)], 4))
