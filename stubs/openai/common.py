"""Pieces the two OpenAI text routes' stubs share: tokenizing, logprobs, forced tools and
structured output (their request checks are in vendors.requests.openai_common). Chat
completions and Responses wrap them in their own wire shapes."""

from __future__ import annotations

import hashlib
import json
import math
import re
from dataclasses import replace
from typing import Any

from stubs.request import StubRequest
from vendors.errors import VendorRequestError
from vendors.models import is_reasoning_model
from vendors.requests import FunctionSpec

# Fixed so the same request gives the same bytes on every machine and every day.
CREATED = 1735689600
SYSTEM_FINGERPRINT = "fp_5t0b5e1f2a"

# Reasoning spend scales with effort; "none" (gpt-5.1 and later) thinks not at all.
_EFFORT_SCALE = {
    "none": 0,
    "minimal": 1,
    "low": 2,
    "medium": 4,
    "high": 8,
    "xhigh": 16,
    "max": 32,
}

# Alternatives offered in top_logprobs; rotated per token so neighbouring tokens differ.
_ALTERNATIVES = (
    " the",
    " a",
    " I",
    " and",
    " to",
    " of",
    " it",
    " that",
    " is",
    ".",
    ",",
    " in",
    " you",
    " for",
    " on",
    " with",
    " this",
    " be",
    " as",
    " at",
    " not",
    " but",
)
# A reranker that asks for a yes/no reply reads the other answer's logprob too.
_OPPOSITES = {"yes": "no", "no": "yes", "true": "false", "false": "true"}

_TOKEN_RE = re.compile(r"\s*\w+|\s*[^\w\s]+|\s+")


def dumps(obj: Any) -> bytes:
    return json.dumps(obj, separators=(",", ":")).encode()


def sse_data(obj: Any) -> bytes:
    """One chat-completions SSE event (no `event:` line, as OpenAI sends them)."""
    return b"data: " + dumps(obj) + b"\n\n"


def seed(req: StubRequest, salt: str) -> bytes:
    """32 bytes derived from the request digest, independent per salt."""
    return hashlib.sha256(req.digest + b"\x00" + salt.encode()).digest()


def variant(req: StubRequest, index: int) -> StubRequest:
    """The request as seen by choice `index`: choice 0 is the request itself, so n=1 and the first
    of n choices agree; later choices get their own digest and so their own reply."""
    if index == 0:
        return req
    return replace(req, digest=seed(req, f"choice:{index}"))


def reasoning_tokens(req: StubRequest, model: str, effort: Any) -> int:
    """Thinking tokens a reasoning model spends: deterministic, scaled by effort, 0 otherwise."""
    if not is_reasoning_model(model):
        return 0
    scale = _EFFORT_SCALE.get(effort if isinstance(effort, str) else "medium", 4)
    return scale * (16 + req.pick("reasoning_tokens", 48))


def split_tokens(text: str) -> list[str]:
    """Word-ish tokens with their leading whitespace, punctuation apart; joined, they give back
    `text` exactly."""
    return _TOKEN_RE.findall(text)


def group(tokens: list[str], size: int) -> list[list[str]]:
    return [tokens[i : i + size] for i in range(0, len(tokens), size)]


def pieces(text: str, size: int) -> list[str]:
    """`text` cut into pieces of `size` characters, as tool arguments stream."""
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


def _fraction(data: bytes) -> float:
    return int.from_bytes(data[:8], "big") / 2**64


def token_logprobs(
    req: StubRequest, salt: str, tokens: list[str], top: int
) -> list[dict[str, Any]]:
    """Per-token logprob entries. The chosen token has probability in (0.5, 1), so it is always
    the most likely; each alternative gets a shrinking share of what is left, so the top list is
    sorted descending and its probabilities sum below 1, like a real distribution."""
    entries: list[dict[str, Any]] = []
    for position, token in enumerate(tokens):
        h = seed(req, f"logprobs:{salt}:{position}")
        p_chosen = 0.5 + 0.495 * _fraction(h)
        candidates = [(token, p_chosen)]
        rest = 1.0 - p_chosen
        share = 0.6
        for i, alt in enumerate(_alternatives(token, h[8])[: max(top - 1, 0)]):
            jitter = 0.8 + 0.2 * _fraction(hashlib.sha256(h + bytes([i])).digest())
            candidates.append((alt, rest * share * jitter))
            share *= 0.4
        listed = [_entry(t, p) for t, p in candidates[:top]]
        entries.append({**_entry(token, p_chosen), "top_logprobs": listed})
    return entries


def _alternatives(token: str, rotate: int) -> list[str]:
    stripped = token.strip()
    lead = token[: len(token) - len(token.lstrip())]
    first: list[str] = []
    opposite = _OPPOSITES.get(stripped.lower())
    if opposite is not None:
        first.append(lead + (opposite.capitalize() if stripped[:1].isupper() else opposite))
    start = rotate % len(_ALTERNATIVES)
    rotated = _ALTERNATIVES[start:] + _ALTERNATIVES[:start]
    seen = {token, *first}
    return first + [a for a in rotated if a not in seen]


def _entry(token: str, p: float) -> dict[str, Any]:
    return {"token": token, "logprob": round(math.log(p), 6), "bytes": list(token.encode())}


def forced_function(
    req: StubRequest, salt: str, functions: list[FunctionSpec], tool_choice: Any, named: str | None
) -> FunctionSpec | None:
    """The function a request forces, or None when the model may answer in text.

    `named` is the function a dict tool_choice names (already pulled out of the route's own
    shape); "required" picks one deterministically among the request's functions."""
    if named is not None:
        for spec in functions:
            if spec.name == named:
                return spec
        raise VendorRequestError(
            400,
            f"Invalid value for 'tool_choice': function '{named}' not found in 'tools'.",
            "tool_choice",
        )
    if tool_choice == "required" and functions:
        return functions[req.pick(f"tool:{salt}", len(functions))]
    return None
