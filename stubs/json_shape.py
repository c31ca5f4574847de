"""The shape a prompt asks a `json_object` reply to have, as a JSON schema.

`response_format: {"type": "json_object"}` promises only an object; the prompt says which. A
model reads it from the prompt, so the stub does too, in this order:
- a JSON schema written in the prompt (instructor's JSON mode: "...match the following
  json_schema: {...}"): an object with `properties`;
- an example object ("Return in this exact JSON format: {"name": "...", "age": 0}"), whose
  values' types become the schema (placeholders such as `confidence_score` read as strings);
- keys the prompt lists ("with the keys `name`, `age` and `city`").
The schema then gets an instance grounded in the user's words (stubs.schema_instance), so the
keys are the prompt's and the values the conversation's. Pure functions of the text.
"""

from __future__ import annotations

import json
import re
from typing import Any

# Objects longer than this are not examples or schemas a prompt spells out for one reply.
_MAX_OBJECT = 20_000
_MAX_OBJECTS = 20
_BARE_VALUE_RE = re.compile(r"(:\s*)([A-Za-z_][\w.-]*)(\s*[,}\]])")
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
    """The top-level `{...}` objects of `text` that parse (bare placeholder values quoted)."""
    found: list[dict[str, Any]] = []
    start = text.find("{")
    while start >= 0 and len(found) < _MAX_OBJECTS:
        end = _matching_brace(text, start)
        if end is None:
            break
        value = _parse(text[start : end + 1])
        if isinstance(value, dict):
            found.append(value)
            start = text.find("{", end + 1)
        else:
            start = text.find("{", start + 1)
    return found


def _matching_brace(text: str, start: int) -> int | None:
    depth = 0
    in_string = False
    escaped = False
    for i in range(start, min(len(text), start + _MAX_OBJECT)):
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
    for candidate in (raw, _BARE_VALUE_RE.sub(r'\1"\2"\3', raw)):
        try:
            return json.loads(candidate)
        except ValueError:
            continue
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
