"""The shape a prompt asks a `json_object` reply to have, as a JSON schema.

`response_format: {"type": "json_object"}` promises only an object; the prompt says which. A
model reads it from the prompt, so the stub does too, in this order:
- a JSON schema written in the prompt (instructor's JSON mode: "...match the following
  json_schema: {...}"): an object with `properties`;
- an example object ("Return in this exact JSON format: {"name": "...", "age": 0}"), whose
  values' types become the schema (placeholders such as `confidence_score` read as strings);
- keys the prompt lists ("with the keys `name`, `age` and `city`").
The schema then gets an instance grounded in the user's words (stubs.schema.instance), so the
keys are the prompt's and the values the conversation's. Pure functions of the text.
"""

from __future__ import annotations

import json
import re
import sys
from typing import Any

# What is read of a prompt, how many braces are tried, and how long an example with bare
# placeholders may be: the text is the arm's, so every loop here is bounded.
_MAX_SCAN = 256 * 1024
_MAX_OBJECTS = 20
_MAX_TRIES = 4096
_MAX_OBJECT = 32 * 1024  # a schema or example longer than this is not one a reply can follow
_MAX_REPAIRS = 16
_MAX_EXAMPLE = 4000
_BARE_VALUE_RE = re.compile(r"(:\s*)(?!(?:true|false|null)\b)([A-Za-z_][\w.-]*)(\s*[,}\]])")
_LISTED_KEYS_RE = re.compile(
    r"\b(?:keys|fields|properties|attributes)\b[ \t]{0,3}(?:are|named|called|:)?[ \t]{0,3}"
    r"((?:[`\"']?[A-Za-z_]\w{0,40}[`\"']?(?:[ \t]{0,3},[ \t]{0,3}|[ \t]{1,3}and[ \t]{1,3}"
    r"|,[ \t]{0,3}and[ \t]{1,3})){1,20}[`\"']?[A-Za-z_]\w{0,40}[`\"']?)"
)
_KEY_RE = re.compile(r"[A-Za-z_]\w{0,40}")
_NUMERIC_KEYS = ("age", "count", "number", "year", "quantity", "amount", "total", "score")
_SCHEMA_WORDS = frozenset({"type", "properties", "required", "$defs", "items", "anyOf"})


def described_schema(prompt: str) -> dict[str, Any] | None:
    """The JSON schema of the object the prompt describes, or None when it describes none."""
    objects = _json_objects(prompt)
    for value in objects:
        if isinstance(value.get("properties"), dict) and value["properties"]:
            return value if value.get("type") in (None, "object") else None
    for value in objects:
        if value and not (_SCHEMA_WORDS & value.keys()):
            return _schema_of_example(value)
    listed = _LISTED_KEYS_RE.search(prompt)
    if listed:
        keys = [k for k in _KEY_RE.findall(listed.group(1)) if k != "and"]
        if len(keys) >= 2:
            return {
                "type": "object",
                "properties": {k: _listed_key_schema(k) for k in keys},
                "required": keys,
            }
    return None


def _json_objects(text: str) -> list[dict[str, Any]]:
    """The `{...}` objects of `text` that parse, outermost first: JSON as written (parsed at C
    speed from each brace) or a small example with bare placeholder values quoted
    (`"confidence": confidence_score`). Bounded, as the text is the arm's."""
    text = text[:_MAX_SCAN]
    found: list[dict[str, Any]] = []
    decoder = json.JSONDecoder()
    start = text.find("{")
    budget = _MAX_SCAN  # characters the failed tries may read between them
    tries = repairs = 0
    while start >= 0 and len(found) < _MAX_OBJECTS and budget > 0 and tries < _MAX_TRIES:
        tries += 1
        # A window, not the whole text: the decoder's error counts the lines before the error.
        window = text[start : start + _MAX_OBJECT]
        try:
            value, used = decoder.raw_decode(window)
        except json.JSONDecodeError as e:
            budget -= e.pos + 1
            repaired = _repaired(text, start) if repairs < _MAX_REPAIRS else None
            repairs += 1
            if repaired is not None:
                found.append(repaired[0])
                start = text.find("{", repaired[1])
            else:
                start = text.find("{", start + 1)
            continue
        except RecursionError:  # nesting past Python's limit: at most that many levels read
            budget -= 4 * sys.getrecursionlimit()
            start = text.find("{", start + 1)
            continue
        if isinstance(value, dict):
            found.append(value)
        start = text.find("{", start + used)
    return found


def _repaired(text: str, start: int) -> tuple[dict[str, Any], int] | None:
    """A small example at `start` with its bare placeholders quoted, and where it ends."""
    close = _matching_brace(text, start)
    value = _parse(text[start : close + 1]) if close is not None else None
    return (value, close + 1) if isinstance(value, dict) and close is not None else None


def _matching_brace(text: str, start: int) -> int | None:
    depth = 0
    in_string = False
    escaped = False
    for i in range(start, min(len(text), start + _MAX_EXAMPLE)):
        ch = text[i]
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                return i
    return None


def _parse(raw: str) -> Any:
    try:
        return json.loads(_BARE_VALUE_RE.sub(r'\1"\2"\3', raw))
    except (ValueError, RecursionError):
        return None


def _schema_of_example(value: Any) -> dict[str, Any]:
    if isinstance(value, dict):
        return {
            "type": "object",
            "properties": {k: _schema_of_example(v) for k, v in value.items()},
            "required": list(value),
        }
    if isinstance(value, list):
        items = _schema_of_example(value[0]) if value else {"type": "string"}
        return {"type": "array", "items": items, "minItems": 1 if value else 0}
    if isinstance(value, bool):
        return {"type": "boolean"}
    if isinstance(value, int):
        return {"type": "integer"}
    if isinstance(value, float):
        return {"type": "number"}
    if value is None:
        return {"type": ["string", "null"]}
    return {"type": "string"}


def _listed_key_schema(key: str) -> dict[str, Any]:
    lowered = key.lower()
    if any(lowered == k or lowered.endswith("_" + k) for k in _NUMERIC_KEYS):
        return {"type": "integer"}
    if lowered.endswith("s") and not lowered.endswith(("ss", "us", "is")):
        return {"type": "array", "items": {"type": "string"}}
    return {"type": "string"}
