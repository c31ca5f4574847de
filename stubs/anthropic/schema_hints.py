"""Constraints the anthropic SDK moved into descriptions, put back before generating an instance.

`messages.parse(output_format=Model)` sends `transform_schema(Model)`: keywords the API's
structured output does not enforce (minimum, maxLength, minItems > 1, pattern...) are removed and
appended to the description as "{maximum: 5, minimum: 1}" for the model to follow. The real model
reads that hint; a stub that ignores it returns e.g. 34 for a `Field(le=5)`, which the SDK's own
pydantic validation then rejects. So the generator works from the schema with the hints restored;
the result still validates against the schema that was sent, which is only looser.
"""

from __future__ import annotations

import re
from typing import Any

_NUMERIC = (
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
    "minProperties",
    "maxProperties",
)
_KNOWN = (*_NUMERIC, "pattern", "uniqueItems")
# Keywords whose values are data, not schemas: a "description" inside them is no hint.
_VALUES = ("enum", "const", "default", "examples")
# The SDK writes "{key: value, key: value}" with Python's str() of each value, at the very end.
_KEY = re.compile(r"(?:^|, )(" + "|".join(_KNOWN) + r"): ")
_TAIL = re.compile(r"\{([^{}]*(?:\{[^{}]*\}[^{}]*)*)\}\Z")


def _number(text: str) -> int | float | None:
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            continue
    return None


def _parse_hint(description: str) -> dict[str, Any]:
    tail = _TAIL.search(description)
    if tail is None:
        return {}
    inner = tail.group(1)
    keys = list(_KEY.finditer(inner))
    out: dict[str, Any] = {}
    for i, key in enumerate(keys):
        # Values may hold ", " (a pattern can), so a value runs up to the next known key.
        end = keys[i + 1].start() if i + 1 < len(keys) else len(inner)
        # Keys this module does not restore (default, examples...) may follow: cut at them.
        raw = re.split(r", [A-Za-z_]\w*: ", inner[key.end() : end], maxsplit=1)[0]
        name = key.group(1)
        if name in _NUMERIC:
            value = _number(raw)
            if value is not None:
                out[name] = value
        elif name == "uniqueItems":
            out[name] = raw == "True"
        else:
            out[name] = raw
    return out


def restore_hints(schema: Any) -> Any:
    """A copy of `schema` with description hints turned back into keywords, at every level."""
    if isinstance(schema, list):
        return [restore_hints(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: v if k in _VALUES else restore_hints(v) for k, v in schema.items()}
    description = schema.get("description")
    if isinstance(description, str):
        for key, value in _parse_hint(description).items():
            out.setdefault(key, value)
    return out
