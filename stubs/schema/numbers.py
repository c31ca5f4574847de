"""Numbers for the schema walker: inside `minimum`/`maximum` (inclusive or exclusive), on a
`multipleOf` that validators accept in floating point, or taken from the request's own text.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import Any

from stubs.schema.support import Unsat

_PLAUSIBLE = 1e9


def number_for(
    schema: dict[str, Any],
    integer: bool,
    pick: Callable[[int], int],
    grounded: Iterable[int | float],
) -> int | float:
    """A number `schema` accepts. `pick(n)` is the walker's deterministic choice in range(n) for
    this path; `grounded` are integers the request's text gives for it, tried first."""
    lo, hi, lo_open, hi_open = _bounds(schema)
    step = schema.get("multipleOf")
    for found in grounded:
        on_open_bound = (lo_open and found == lo) or (hi_open and found == hi)
        on_step = not step or (found / step).is_integer()
        if lo <= found <= hi and not on_open_bound and on_step:
            return found if integer or isinstance(found, float) else float(found)
    # Bounds past any plausible value (zod writes +-2**53 for every int) give no hint of one:
    # choose near zero inside them, as a model would, not at the far bound.
    lo, hi = _plausible(lo, hi)
    if integer:
        step = _lcm_step(step)
    if step:
        k_lo = math.ceil(lo / step) if lo > -math.inf else -50
        k_hi = math.floor(hi / step) if hi < math.inf else k_lo + 100 if lo > -math.inf else 100
        if lo_open and k_lo * step <= lo:
            k_lo += 1
        if hi_open and k_hi * step >= hi:
            k_hi -= 1
        if k_lo > k_hi:
            raise Unsat("no multiple in range")
        if k_lo < 0 < k_hi and lo == -math.inf:
            k_lo = 0
        count = min(k_hi - k_lo, 100) + 1
        start = pick(count)
        for j in range(count):
            value = (k_lo + (start + j) % count) * step
            if integer or float(value).is_integer():
                return int(value)
            # Validators test multipleOf as `x / step` being integral in floating point, so
            # 3 * 0.1 fails; a rounded multiple that divides exactly is kept, else try another.
            for candidate in (round(value, 10), value):
                if (candidate / step).is_integer() and lo <= candidate <= hi:
                    return candidate
        raise Unsat("no float multiple that validators accept")
    # Float without multipleOf: a value strictly inside the bounds.
    a = lo if lo > -math.inf else (hi - 100 if hi < math.inf else 0.0)
    b = hi if hi < math.inf else a + 100
    frac = (1 + pick(98)) / 100  # in (0, 1): never on an exclusive bound
    value = a + (b - a) * frac
    if a <= round(value, 2) <= b and not (lo_open and round(value, 2) <= lo):
        value = round(value, 2)
    return value if value != int(value) or lo_open or hi_open else float(int(value))


def _plausible(lo: float, hi: float) -> tuple[float, float]:
    if lo < -_PLAUSIBLE and hi > _PLAUSIBLE:
        return 0, 100
    if lo < -_PLAUSIBLE:
        return max(lo, hi - 100), hi
    if hi > _PLAUSIBLE:
        return lo, min(hi, max(lo, 0) + 100)
    return lo, hi


def _bounds(schema: dict[str, Any]) -> tuple[float, float, bool, bool]:
    lo, hi, lo_open, hi_open = -math.inf, math.inf, False, False
    if "minimum" in schema:
        lo = schema["minimum"]
    if "exclusiveMinimum" in schema and schema["exclusiveMinimum"] >= lo:
        lo, lo_open = schema["exclusiveMinimum"], True
    if "maximum" in schema:
        hi = schema["maximum"]
    if "exclusiveMaximum" in schema and schema["exclusiveMaximum"] <= hi:
        hi, hi_open = schema["exclusiveMaximum"], True
    if lo > hi or (lo == hi and (lo_open or hi_open)):
        raise Unsat("empty numeric range")
    return lo, hi, lo_open, hi_open


def _lcm_step(step: Any) -> int:
    # An integer must also be a multiple of a fractional multipleOf: use the smallest integer one.
    if not step:
        return 1
    if float(step).is_integer():
        return int(step)
    for k in range(1, 1001):
        if float(step * k).is_integer():
            return int(step * k)
    raise Unsat("multipleOf")
