"""Resource bounds of every arm: the study's `[limits]` table, and what each backend applied.

    [limits]
    pids = 512        # processes and threads in the arm (docker: PidsLimit)
    memory = "2g"     # RAM; swap is set equal to it, so the arm gets none (Memory, MemorySwap)
    cpus = 1.0        # CPU time as a number of cores (NanoCpus)
    disk = "2g"       # everything the arm can write: its log and egress folders and its /tmp

Sizes are bytes, or a number with k, m, g (KiB, MiB, GiB, as docker reads them; `KiB`, `MB`
and the like are accepted too). The defaults keep one arm from taking a small host (2 cores,
a few GiB) with it: a fork bomb, a memory balloon or a disk filler stops at its own bound and is
named as the arm's `resource_limit`.

run.json keeps the study's table (`limits`) and, per arm, what the backend applied as it reads
it back (`arm_limits`: docker's HostConfig of the running container, the local backend's
rlimits), so an audit sees that every arm ran under the same bounds.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgt]?)(i?b?)\s*$", re.IGNORECASE)
_UNITS = {"": 1, "k": 1024, "m": 1024**2, "g": 1024**3, "t": 1024**4}
MIB = 1024**2
# Names of the bounds, as turns.jsonl's `resource_limit` errors and run.json name them.
LIMIT_NAMES = ("pids", "memory", "cpus", "disk")


def parse_size(value: Any) -> int:
    """Bytes from 1073741824, "1g", "1GiB", "512m", "512MB" (binary units, as docker's)."""
    if isinstance(value, bool):
        raise ValueError('a size is a number of bytes or a string such as "512m"')
    if isinstance(value, int):
        return value
    match = _SIZE.match(str(value))
    if not match:
        raise ValueError(f'{value!r} is not a size; write bytes or e.g. "512m", "2g"')
    return int(float(match[1]) * _UNITS[match[2].lower()])


class ResourceLimits(BaseModel):
    """The study's bounds for every arm (one table: every arm gets the same)."""

    model_config = ConfigDict(extra="forbid")

    pids: int = Field(512, ge=8, le=1_000_000)
    memory: int = Field(2 * 1024 * MIB, ge=32 * MIB)
    cpus: float = Field(1.0, gt=0, le=1024)
    disk: int = Field(2 * 1024 * MIB, ge=8 * MIB)

    @field_validator("memory", "disk", mode="before")
    @classmethod
    def _size(cls, value: Any) -> int:
        return parse_size(value)


class AppliedLimits(BaseModel):
    """What a backend enforces on one arm, read back where it can be (None: not enforced)."""

    model_config = ConfigDict(extra="forbid")

    pids: int | None = None
    memory: int | None = None
    memory_swap: int | None = None  # RAM + swap as docker counts it: equal to memory, no swap
    cpus: float | None = None
    disk: int | None = None
    read_only_root: bool | None = None  # docker: the image's own files cannot be written
    how: str = ""  # one line: the mechanism ("docker HostConfig, ext4 loop image", "rlimits")
    not_enforced: list[str] = Field(default_factory=list)  # what the backend cannot bound
