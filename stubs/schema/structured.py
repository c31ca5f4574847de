"""JSON for a structured request (a json_schema reply or a forced tool's input), on every route.

A study's rule (or a default one) answers first when one matches and its reply is JSON valid for
the schema; else the reply is an instance grounded in the request's own text
(stubs.prompt.grounding),
so an engine that stores it stores names, sentences and dates the user gave. Both are pure
functions of the request.
"""

from __future__ import annotations

import functools
import json
from typing import Any

import jsonschema

from stubs.prompt import grounding_of
from stubs.request import StubRequest
from stubs.rules import ReplyBook
from stubs.schema.instance import instance_for
from stubs.schema.patch_doc import is_patch_tool, patch_doc_input, prompt_texts


def structured_value(
    req: StubRequest,
    book: ReplyBook,
    schema: dict[str, Any],
    name: str | None,
    seed: bytes,
    focus: str = "",
) -> Any:
    """The value (not yet serialised) for `schema`, named `name` (schema or tool name).
    `focus` is the part of the user's message a tool call answers, whose names and numbers
    come first (two parallel calls each take their own city)."""
    ruled = book.structured(req, name or _title(schema))
    if ruled is not None:
        try:
            value = json.loads(ruled)
        except ValueError:
            value = None
        if value is not None and _valid(schema, value):
            return value
    grounding = grounding_of(req.body, focus)
    if is_patch_tool(schema):
        # A document patch names a document the prompt shows (stubs.schema.patch_doc).
        patch = patch_doc_input(prompt_texts(req.body), grounding)
        if patch is not None and _valid(schema, patch):
            return patch
    return instance_for(schema, seed, grounding)


def structured_json(
    req: StubRequest,
    book: ReplyBook,
    schema: dict[str, Any],
    name: str | None,
    seed: bytes,
    focus: str = "",
) -> str:
    """Compact JSON text, as the model sends structured output and tool arguments."""
    value = structured_value(req, book, schema, name, seed, focus)
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _title(schema: dict[str, Any]) -> str | None:
    title = schema.get("title")
    return title if isinstance(title, str) else None


def _valid(schema: dict[str, Any], value: Any) -> bool:
    try:
        return bool(_validator(json.dumps(schema, sort_keys=True)).is_valid(value))
    except (jsonschema.SchemaError, ValueError):
        return False  # an unusable schema is reported by instance_for with a proper 400


@functools.lru_cache(maxsize=256)
def _validator(key: str) -> Any:
    schema = json.loads(key)
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    cls.check_schema(schema)
    return cls(schema)
