"""The text a record-mode reply says, and its `json_object` form, on every route.

In order: a stubs rule's reply; the protocol the prompt asks for (dspy's field markers, an XML
list, markdown sections: stubs.formats.dspy_protocol, stubs.formats.tag_protocols); then the reply
book's
(a reply that uses the tools' results once they are in, else the purpose's canned replies).
A `json_object` reply is a rule's JSON object, else an instance of the shape the prompt
describes (dspy's output fields, or stubs.schema.json_shape), grounded in the user's words, else the
text wrapped as {"response": ...}. Pure functions of the request.
"""

from __future__ import annotations

import json
import re
from typing import Any

from stubs.formats.dspy_protocol import dspy_reply as dspy_text
from stubs.formats.dspy_protocol import is_dspy, output_fields
from stubs.formats.tag_protocols import markdown_sections_reply, xml_list_reply
from stubs.prompt import turn_of
from stubs.request import StubRequest
from stubs.rules import ReplyBook
from stubs.schema import described_schema, structured_json
from vendors.errors import VendorRequestError


def text_reply(req: StubRequest, book: ReplyBook) -> str:
    ruled = book.ruled(req)
    if ruled is not None:
        return ruled
    turn = turn_of(req.body)
    protocol = (
        dspy_text(turn, req.digest, book.stubs.embeddings.model)
        or xml_list_reply(turn)
        or markdown_sections_reply(turn)
        or _json_in_text(req, book, f"{turn.system}\n{turn.user}")
    )
    return protocol if protocol is not None else book.choose(req)


def _json_in_text(req: StubRequest, book: ReplyBook, prompt: str) -> str | None:
    """A prompt that asks for JSON in a plain-text reply (instructor's MD_JSON and
    ANTHROPIC_JSON modes, engines that parse the first {...}) and describes its shape."""
    if not _ASKS_JSON_RE.search(prompt):
        return None
    schema = described_schema(prompt)
    if schema is None:
        return None
    try:
        return structured_json(req, book, schema, None, req.digest + b"json-in-text")
    except VendorRequestError:
        return None


def json_object_reply(req: StubRequest, book: ReplyBook, seed: bytes) -> str:
    ruled = book.ruled(req)
    if ruled is not None and _is_object(ruled):
        return ruled
    turn = turn_of(req.body)
    schema = _dspy_schema(turn.system, turn.user) if is_dspy(turn) else None
    if schema is None:
        schema = described_schema(f"{turn.system}\n{turn.user}")
    if schema is not None:
        try:
            return structured_json(req, book, schema, None, seed)
        except VendorRequestError:
            pass  # a described schema no instance satisfies: answer as if none was described
    text = ruled if ruled is not None else book.choose(req)
    return json.dumps({"response": text}, separators=(",", ":"), ensure_ascii=False)


_ASKS_JSON_RE = re.compile(
    r"\b(?:return|respond|reply|output|answer|provide|format|give)\b[^.\n]{0,80}\bjson\b"
    r"|\bjson_?schema\b|\bin json\b",
    re.I,
)


def _is_object(text: str) -> bool:
    try:
        return isinstance(json.loads(text), dict)
    except ValueError:
        return False


_DSPY_TYPES: dict[str, dict[str, Any]] = {
    "str": {"type": "string"},
    "int": {"type": "integer"},
    "float": {"type": "number"},
    "bool": {"type": "boolean"},
    "list[str]": {"type": "array", "items": {"type": "string"}},
}


def _dspy_schema(system: str, user: str) -> dict[str, Any] | None:
    """dspy's JSON adapter asks for an object of its output fields: their names and types."""
    fields = output_fields(system, user)
    if not fields:
        return None
    properties = {f.name: _DSPY_TYPES.get(f.type.strip(), {"type": "string"}) for f in fields}
    return {"type": "object", "properties": properties, "required": list(properties)}
