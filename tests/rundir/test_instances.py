"""A worker's copy of an arm (`A@k`) and the arm and worker a run's files name instead."""

from __future__ import annotations

import operator

from rundir.control.proxy_file import WORKER_MARK as PROXY_MARK
from rundir.control.proxy_file import instance_name
from rundir.instances import WORKER_MARK, by_arm, instance_of, join, split, worker_of


def test_a_copy_splits_into_its_arm_and_worker_and_joins_back() -> None:
    assert split("mem0@3") == ("mem0", 3) and join("mem0", 3) == "mem0@3"
    assert split("mem0") == ("mem0", None) and join("mem0", None) == "mem0" == join("mem0", 0)
    # Not an instance: kept whole, never half-read as one.
    assert split("a@") == ("a@", None) and split("a@x") == ("a@x", None)
    assert split("a@0") == ("a@0", None)


def test_the_mark_and_names_are_the_proxys() -> None:
    assert WORKER_MARK == PROXY_MARK
    assert all(join("a", k) == instance_name("a", k) for k in range(4))


def test_an_egress_entry_names_its_instance_and_worker() -> None:
    assert instance_of({"arm": "a", "worker": 2}) == "a@2" and worker_of({"arm": "a"}) == 0
    assert instance_of({"arm": "a"}) == "a" and worker_of({"arm": "a", "worker": 2}) == 2


def test_per_instance_maps_become_per_arm_once() -> None:
    dropped = {"a": 1, "a@1": 2, "a@2": 3, "b@1": 4}
    assert by_arm(dropped, operator.add) == {"a": 6, "b": 4}
    limits = {"a@1": "copy", "a": "first"}
    assert by_arm(limits, lambda first, _copy: first) == {"a": "first"}  # worker 0's kept
