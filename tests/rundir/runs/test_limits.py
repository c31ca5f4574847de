"""The study's [limits] table: sizes as docker writes them, safe defaults, nonsense refused."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from rundir.runs.limits import MIB, ResourceLimits, parse_size


@pytest.mark.parametrize(
    ("text", "size"),
    [
        ("512m", 512 * MIB),
        ("2g", 2048 * MIB),
        ("2GiB", 2048 * MIB),
        ("64MB", 64 * MIB),
        ("1.5g", 1536 * MIB),
        ("4096k", 4 * MIB),
        (1048576, MIB),
        ("1048576", MIB),
    ],
)
def test_sizes_read_as_docker_reads_them(text: object, size: int) -> None:
    assert parse_size(text) == size


@pytest.mark.parametrize("text", ["", "lots", "2x", "-1g", "1e9", True])
def test_a_size_that_is_not_one_is_refused(text: object) -> None:
    with pytest.raises(ValueError):
        parse_size(text)


def test_defaults_bound_every_resource() -> None:
    limits = ResourceLimits()
    assert (limits.pids, limits.memory, limits.cpus, limits.disk) == (
        512,
        2048 * MIB,
        1.0,
        2048 * MIB,
    )


@pytest.mark.parametrize(
    "table",
    [{"pids": 0}, {"memory": "1m"}, {"cpus": 0}, {"disk": "1k"}, {"swap": "1g"}, {"pids": -5}],
)
def test_a_bound_too_small_or_unknown_is_refused(table: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        ResourceLimits.model_validate(table)


def test_a_study_table_is_read_with_its_sizes() -> None:
    limits = ResourceLimits.model_validate(
        {"pids": 64, "memory": "256m", "cpus": 0.5, "disk": "64m"}
    )
    assert limits.model_dump() == {"pids": 64, "memory": 256 * MIB, "cpus": 0.5, "disk": 64 * MIB}
