"""A logged request as it went out: the arm's body (stored in bodies/) with the call's recorded
`rewrites` applied (the sampling pins and the output cap, proxy/flow/sampling.py; live mode's
stream-usage switch). Every mode rewrites alike, so a record run's `as_sent` body is the body a
live run sends for the same request, which is what the cross-arm gate and a reader want to see.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

from rundir.calls.calllog import Rewrite


def as_sent(body: dict[str, Any], rewrites: Sequence[Rewrite]) -> dict[str, Any]:
    """A copy of `body` with each rewrite applied in order (`after` None removes the field)."""
    sent = copy.deepcopy(body)
    for rewrite in rewrites:
        *parents, leaf = rewrite.field.split(".")
        node = sent
        for key in parents:
            child = node.get(key)
            if not isinstance(child, dict):
                child = node[key] = {}
            node = child
        if rewrite.after is None:
            node.pop(leaf, None)
        else:
            node[leaf] = rewrite.after
    return sent
