"""A reproducible, stratified draw of a study's questions.

`n` questions (all of them when `n` is not given), allocated to the strata in proportion to their
size (largest remainders, ties to the stratum named first), each stratum's questions taken in an
order shuffled by `random.Random(f"{seed}:{stratum}")` (seeded by a string, so the order is the
same on every platform and Python), skipping a question whose conversation already gave
`per_conversation_max`. A stratum that runs short passes what it could not fill to the others.
The drawn questions keep the file's order.
"""

from __future__ import annotations

import random
from collections import Counter, defaultdict
from dataclasses import dataclass

from harness.datasets.model import Memory


@dataclass(frozen=True)
class Drawn:
    memories: list[Memory]
    available: Counter[str]  # questions per stratum in the file
    drawn: Counter[str]  # questions per stratum drawn


def draw(
    memories: list[Memory],
    n: int | None = None,
    seed: int = 0,
    stratify: str | None = None,
    per_conversation_max: int | None = None,
) -> Drawn:
    strata: dict[str, list[int]] = defaultdict(list)
    for index, memory in enumerate(memories):
        strata[memory.stratum(stratify)].append(index)
    available = Counter({name: len(indices) for name, indices in strata.items()})
    want = len(memories) if n is None else min(n, len(memories))
    quota = _allocate(available, want)
    order = {name: _shuffled(indices, f"{seed}:{name}") for name, indices in strata.items()}
    per_history: Counter[str] = Counter()
    chosen: set[int] = set()
    taken: Counter[str] = Counter()

    def take(name: str, count: int) -> int:
        got = 0
        for index in order[name]:
            if got == count:
                break
            if index in chosen:
                continue
            history = memories[index].history.id
            if per_conversation_max is not None and per_history[history] >= per_conversation_max:
                continue
            chosen.add(index)
            per_history[history] += 1
            got += 1
        taken[name] += got
        return got

    short = 0
    for name in sorted(quota):
        short += quota[name] - take(name, quota[name])
    # What a stratum could not fill goes to the others, in their names' order.
    for name in sorted(quota):
        if short <= 0:
            break
        short -= take(name, short)
    picked = [memories[i] for i in sorted(chosen)]
    return Drawn(picked, available, taken)


def _allocate(sizes: Counter[str], want: int) -> dict[str, int]:
    total = sum(sizes.values())
    if not total:
        return {}
    exact = {name: want * size / total for name, size in sizes.items()}
    quota = {name: int(share) for name, share in exact.items()}
    rest = want - sum(quota.values())
    by_remainder = sorted(exact, key=lambda name: (-(exact[name] - quota[name]), name))
    for name in by_remainder[:rest]:
        quota[name] += 1
    return quota


def _shuffled(indices: list[int], key: str) -> list[int]:
    shuffled = list(indices)
    random.Random(key).shuffle(shuffled)
    return shuffled
