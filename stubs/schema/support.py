"""What the schema walker borrows from well-kept libraries: jsonschema validators (cached per
schema), `pattern` strings (stubs.schema.regex_example, then hypothesis's `from_regex` for syntax it
refuses) and hypothesis-jsonschema's `allOf` merge. Also `Unsat`, the walker's "try another way".
"""

from __future__ import annotations

import functools
import json
import re
from typing import Any

import jsonschema
from hypothesis import HealthCheck, Phase, find, settings
from hypothesis import strategies as st
from hypothesis.errors import HypothesisException

from stubs.schema.regex_example import Unsupported, regex_example
from vendors.errors import VendorRequestError

# Generate phase only: shrinking costs ~0.7 s per pattern and readability gains nothing.
_REGEX_SETTINGS = settings(
    database=None,
    derandomize=True,
    max_examples=60,
    phases=[Phase.generate],
    suppress_health_check=list(HealthCheck),
    deadline=None,
)


class Unsat(Exception):
    """This branch cannot be satisfied by the generator; the caller tries another."""


@functools.lru_cache(maxsize=512)
def validator(key: str) -> jsonschema.protocols.Validator:
    schema = json.loads(key)
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    try:
        cls.check_schema(schema)
    except jsonschema.SchemaError as exc:
        raise VendorRequestError(400, f"invalid schema: {exc.message}", "schema") from exc
    return cls(schema, format_checker=cls.FORMAT_CHECKER)


def pattern_string(pattern: str, digest: bytes, min_len: int, max_len: int) -> str:
    try:
        return regex_example(pattern, digest, min_len, max_len)
    except Unsupported:
        return _hypothesis_regex_example(pattern, min_len, max_len)


@functools.lru_cache(maxsize=1024)
def _hypothesis_regex_example(pattern: str, min_len: int, max_len: int) -> str:
    def fits(s: str) -> bool:
        return min_len <= len(s) <= max_len

    try:
        return str(find(st.from_regex(pattern, fullmatch=True), fits, settings=_REGEX_SETTINGS))
    except (HypothesisException, re.error) as exc:
        # Includes the nested-given health check when called from inside a hypothesis test.
        raise Unsat(pattern) from exc


@functools.lru_cache(maxsize=512)
def merged_allof(key: str) -> dict[str, Any] | None:
    # Private but stable for years; if it moves, allOf falls back to generate-and-validate.
    try:
        from hypothesis_jsonschema._canonicalise import merged
    except ImportError:  # pragma: no cover
        return None
    result = merged(json.loads(key))
    return result if isinstance(result, dict) else None
