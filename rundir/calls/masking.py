"""The request hash: canonical JSON (RFC 8785) of the request after masking volatile fields.

Two runs of the same script must hash the same even when an SDK adds a random id or a timestamp,
so those fields are removed first. Masks are dotted paths into the JSON body; `*` matches every
element of a list or every key of an object (e.g. `messages.*.metadata`). A mask with `~` masks
text inside string values instead (`~date`, `messages.*.content=~REGEX`: rundir.calls.value_masks).
"""

from __future__ import annotations

import copy
import functools
import hashlib
from collections.abc import Iterable
from typing import Any

import rfc8785

import canonical
from rundir.calls.value_masks import ValueMask, apply_value_masks, is_value_mask, parse_value_mask

# Fields the vendors' SDKs and common engines fill with per-call random ids or user handles.
DEFAULT_BODY_MASKS: tuple[str, ...] = (
    "metadata.user_id",
    "user",
    "safety_identifier",
    "prompt_cache_key",
)


def _drop(value: Any, parts: list[str]) -> None:
    if not parts:
        return
    head, rest = parts[0], parts[1:]
    if isinstance(value, dict):
        keys = list(value) if head == "*" else [head]
        for key in keys:
            if key not in value:
                continue
            if rest:
                _drop(value[key], rest)
            else:
                del value[key]
    elif isinstance(value, list) and (head == "*" or head.isdigit()):
        items = value if head == "*" else value[int(head) : int(head) + 1]
        for item in items:
            _drop(item, rest)


@functools.lru_cache(maxsize=64)
def _masks_read(masks: tuple[str, ...]) -> tuple[list[ValueMask], list[list[str]]]:
    """The value masks and the split paths of a set of masks: read once, not per request."""
    # "PATH~NAME" / "PATH=~REGEX" mask text inside string values (rundir.calls.value_masks).
    values = [parse_value_mask(m) for m in masks if is_value_mask(m)]
    paths = [mask.split(".") for mask in masks if not is_value_mask(mask)]
    return values, paths


def mask_body(body: Any, masks: Iterable[str]) -> Any:
    """`body` without the masked paths. The original is never changed: it is copied first, but
    only when a mask can apply (most requests carry none of the volatile fields)."""
    values, paths = _masks_read(tuple(masks))  # shared: read, never changed
    if (
        isinstance(body, dict)
        and not values
        and not any(p[0] == "*" or p[0] in body for p in paths)
    ):
        return body
    masked = copy.deepcopy(body)
    for parts in paths:
        _drop(masked, parts)
    return apply_value_masks(masked, values) if values else masked


# RFC 8785 canonicalizes numbers as IEEE doubles and refuses integers past 2**53 (an int64 `seed`
# can be one); those are hashed as a tagged decimal string instead. Every other request hashes as
# before, so no recorded hash changes.
_BIG_INT_TAG = "$harness-int"


def _tag_big_ints(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _tag_big_ints(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_tag_big_ints(v) for v in value]
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > 2**53 - 1:
        return {_BIG_INT_TAG: str(value)}
    return value


def canonical_json(value: Any) -> bytes:
    """RFC 8785 canonical JSON of `value`; an integer past its domain as a tagged string.

    The hash is on every call's path: `canonical` writes it with the C encoder (15 us of a small
    chat request, 240 of a 40-message request with ten tools; pure-Python RFC 8785: 42 and 950)."""
    try:
        return canonical.dumps(value)
    except rfc8785.IntegerDomainError:
        return canonical.dumps(_tag_big_ints(value))


def hash_masked(method: str, route: str, masked_body: Any) -> str:
    """SHA-256 hex of an already masked JSON request (its depth is bounded by
    proxy.flow.safe_json)."""
    payload = {"method": method, "route": route, "body": masked_body}
    return hashlib.sha256(canonical_json(payload)).hexdigest()


def request_hash(method: str, route: str, body: Any, raw: bytes, masks: Iterable[str]) -> str:
    """SHA-256 hex of the masked request. A body that is not JSON is hashed as its raw bytes."""
    if body is None:
        payload: Any = {
            "method": method,
            "route": route,
            "raw_sha256": hashlib.sha256(raw).hexdigest(),
        }
    else:
        return hash_masked(method, route, mask_body(body, masks))
    return hashlib.sha256(canonical_json(payload)).hexdigest()
