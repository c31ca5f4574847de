"""How two runs pinned their arms' clocks, compared: the first finding of the gate and the replay.

An arm that reads the wall clock sees the item's date under libfaketime and the real date when
the clock reaches it on the seam only (no libfaketime, `HARNESS_FAKETIME=0`, an image without
it). Two runs pinned differently can differ in every request that carries a date, so the
difference is named before the divergences it explains.
"""

from __future__ import annotations

HOW = {
    "libfaketime": "pinned clocks with libfaketime",
    "seam-only": "seam-only (the clock reached arms on the seam, their wall clock was real)",
}
HINT = (
    "run both where libfaketime is installed (Debian: libfaketime) and HARNESS_FAKETIME is not "
    "0, or both with HARNESS_FAKETIME=0"
)


def pinning_difference(first: tuple[str, str | None], second: tuple[str, str | None]) -> str:
    """'run A pinned clocks with libfaketime, run B seam-only (...)', or '' when they agree or
    either run does not say (a header from before pinning was recorded)."""
    (a, how_a), (b, how_b) = first, second
    if how_a is None or how_b is None or how_a == how_b:
        return ""
    return (
        f"run {a} {HOW.get(how_a, how_a)}, run {b} {HOW.get(how_b, how_b)}: requests that carry "
        f"the date may differ for that reason alone; {HINT}"
    )
