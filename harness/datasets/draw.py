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
    strata = [memory.stratum(stratify) for memory in memories]
    histories = [memory.history.id for memory in memories]
    picked, available, taken = draw_indices(strata, histories, n, seed, per_conversation_max)
    return Drawn([memories[i] for i in picked], available, taken)


def draw_indices(
    stratum_of: list[str],
    history_of: list[str],
    n: int | None = None,
    seed: int = 0,
    per_conversation_max: int | None = None,
) -> tuple[list[int], Counter[str], Counter[str]]:
    """The draw on the questions' strata and histories alone (what a lazily read file's index
    holds): the drawn positions in the file's order, the questions per stratum in the file and
    drawn."""
    strata: dict[str, list[int]] = defaultdict(list)
    for index, name in enumerate(stratum_of):
        strata[name].append(index)
    available = Counter({name: len(indices) for name, indices in strata.items()})
    want = len(stratum_of) if n is None else min(n, len(stratum_of))
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
            history = history_of[index]
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
    return sorted(chosen), available, taken


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
