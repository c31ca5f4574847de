"""Deterministic token estimates for stub usage figures.

Record mode costs nothing, so these counts only need to be stable and plausible: about one
token per four characters of text, never zero for non-empty text. (Live mode counts with a real
tokenizer.)
"""

from __future__ import annotations

import json
from typing import Any


def estimate_tokens(text: str) -> int:
    if not text:
        return 0
    return max(1, (len(text) + 3) // 4)


def texts_of(value: Any) -> list[str]:
    """Every string inside a JSON value (message contents, tool schemas, system prompts...)."""
    out: list[str] = []
    if isinstance(value, str):
        out.append(value)
    elif isinstance(value, dict):
        for v in value.values():
            out.extend(texts_of(v))
    elif isinstance(value, list):
        for v in value:
            out.extend(texts_of(v))
    return out


def estimate_input_tokens(body: dict[str, Any], fields: tuple[str, ...]) -> int:
    """Input estimate: the text of the named fields plus a small per-message overhead."""
    total = 0
    for name in fields:
        if name in body:
            value = body[name]
            total += sum(estimate_tokens(t) for t in texts_of(value))
            if isinstance(value, list):
                total += 3 * len(value)
            elif not isinstance(value, str):
                total += estimate_tokens(json.dumps(value, sort_keys=True)) // 4
    return max(total, 1)
