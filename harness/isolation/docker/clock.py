"""Whether the docker backend pins its arms' wall clocks: each arm's image decides.

An arm container preloads what its image names in `HARNESS_FAKETIME_PRELOAD` (harness-arm sets
it, and so every image built FROM it); an image that names nothing gets an empty LD_PRELOAD, and
its clock reaches the arm on the seam only. run.json's `clock_pinning` has to say which: the gate
and the replay compare two runs' pinning first (harness/checks/pinning.py), and a run recorded
as pinned whose arm read the real date would pass that comparison with a run that was pinned.
"""

from __future__ import annotations

from collections.abc import Iterable

from harness.isolation.base import ClockPinning
from harness.isolation.docker import cli, net

PRELOAD_ENV = "HARNESS_FAKETIME_PRELOAD"


def faketime_preload(image: str) -> str:
    """The LD_PRELOAD an arm on `image` runs with: sleepfix and libfaketime, or ''."""
    return net.image_env(image).get(PRELOAD_ENV, "")


def clock_pinning_for(arm_images: Iterable[str]) -> ClockPinning:
    """`libfaketime` when every arm's image preloads it, else `seam-only`. An image that cannot
    be inspected (not built, no engine) counts as not pinned: its arm will not start either, and
    a header must never claim a pin no arm had."""
    for image in sorted(set(arm_images)):
        try:
            preload = faketime_preload(image)
        except cli.DockerError:
            return "seam-only"
        if "libfaketime" not in preload:
            return "seam-only"
    return "libfaketime"
