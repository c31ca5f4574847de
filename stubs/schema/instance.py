"""Deterministic, valid instances of JSON schemas (structured outputs, tool inputs) in record mode.

Why not a library for the whole job (both evaluated here, late 2026):
- hypothesis-jsonschema 0.23.1 crashes on *every* object schema with the installed hypothesis
  6.170 (it calls the removed private `conjecture.utils.many.more()`), and one `find()` over a
  schema costs seconds, far too slow for a proxy hot path.
- jsf 0.11.2 draws from the global `random` module and Faker, so it is not reproducible across
  processes; it also hits RecursionError on pydantic's recursive `$defs` and crashes on `allOf`.
So the walk over the schema is written here, and the genuinely hard parts use well-kept code:
hypothesis-jsonschema's `merged()` intersects `allOf` branches, `pattern` strings come from
stubs.schema.regex_example (Python's own regex parser) with hypothesis's `from_regex` (derandomized,
generate phase only, cached per pattern) for syntax it refuses, and jsonschema validates every
result before it is returned.

The only source of variation is `digest`: every choice hashes digest + the JSON path it is for,
so the same (schema, digest) gives the same instance on every machine. Given a `grounding` (what
the request's own text offers, stubs.prompt.grounding), strings, dates and integers are taken from
the
request instead of the word list, and arrays get at least one item when the text has material:
still a pure function of (schema, digest, request).
"""

from __future__ import annotations

import json
from typing import Any

from stubs.prompt import Grounding
from stubs.schema.support import Unsat, validator
from stubs.schema.walker import Walker
from vendors.errors import VendorRequestError

_RETRIES = 6


def instance_for(schema: dict[str, Any], digest: bytes, grounding: Grounding | None = None) -> Any:
    """A JSON value that validates against `schema`, chosen deterministically from `digest` (and
    from the request's own text when a `grounding` is given)."""
    if not isinstance(schema, dict | bool):
        raise VendorRequestError(400, "schema must be a JSON object")
    key = json.dumps(schema, sort_keys=True, separators=(",", ":"))
    checker = validator(key)
    for attempt in range(_RETRIES + 1):
        # The last attempt builds the smallest instance: nothing optional, arrays at minItems.
        minimal = attempt == _RETRIES
        salt = digest if attempt == 0 else digest + b"retry" + bytes([attempt])
        try:
            value = Walker(schema, salt, minimal, grounding).gen(schema, "$", 0)
        except (Unsat, RecursionError):
            continue
        if checker.is_valid(value):
            return value
    raise VendorRequestError(400, "schema cannot be satisfied: no valid instance found", "schema")
