"""The masking list: which parts of a request two runs of one script may send differently.

The proxy's request hash (rundir/calls/masking.py) covers the method, the route and the JSON body
only, so every header is excluded by construction: SDK retry counters and platform headers
(`x-stainless-*`, `user-agent`), idempotency keys (`idempotency-key`), request ids
(`x-request-id`) and the key itself never make two requests differ. In the body, the proxy's
DEFAULT_BODY_MASKS remove what the SDKs fill with user handles; HARNESS_BODY_MASKS adds fields
that engines fill with a per-call id or a time; a study adds its own with `mask = [...]`.

The same list goes to the proxy (so calls.jsonl's request_hash, which replay matches on, agrees
with what the gate compared) and into gate.json (so a reader sees what was not compared).

A mask may also take text out of string values and keep the rest (rundir.calls.value_masks):
`~date`, `~datetime`, `~uuid`, `~time`, `~unix_time` anywhere in the body, `PATH~NAME` under a path,
or `PATH=~REGEX` with a regex of the study's own. mem0 2.x writes today's date into its prompt, so a
study of it that replays on another day sets `mask = ["messages.*.content~date"]`: the user's
words still count, the date does not. These are named in gate.json like every other mask.
"""

from __future__ import annotations

from harness.errors import HarnessError
from harness.study import Study
from rundir.calls import DEFAULT_BODY_MASKS, MaskError, is_value_mask, parse_value_mask

# Body fields that carry a per-call random id or a timestamp in common engines' requests.
HARNESS_BODY_MASKS: tuple[str, ...] = (
    "idempotency_key",
    "request_id",
    "metadata.request_id",
    "metadata.idempotency_key",
    "metadata.timestamp",
)

# Documented, not applied: the request hash never reads headers at all.
EXCLUDED_HEADERS: tuple[str, ...] = (
    "*: every header (the request hash covers method, route and body only)",
    "x-stainless-retry-count, x-stainless-timeout, x-stainless-* (SDK retry and platform)",
    "user-agent",
    "idempotency-key",
    "x-request-id, request-id",
    "authorization, x-api-key (the proxy replaces keys anyway)",
)


def check_masks(masks: list[str]) -> None:
    """Refuse a value mask the proxy could not apply, before any arm starts."""
    for mask in masks:
        if is_value_mask(mask):
            try:
                parse_value_mask(mask)
            except MaskError as e:
                raise HarnessError(
                    str(e), "fix the study's `mask` list (see harness/checks/masks.py)"
                ) from None


def proxy_masks(study: Study) -> list[str]:
    """What the proxy must mask on top of its own DEFAULT_BODY_MASKS."""
    check_masks(list(study.file.mask))
    return list(dict.fromkeys([*HARNESS_BODY_MASKS, *study.file.mask]))


def all_masks(study: Study) -> list[str]:
    """The full list the gate applies and records: proxy defaults, harness defaults, study's."""
    return list(dict.fromkeys([*DEFAULT_BODY_MASKS, *proxy_masks(study)]))
