"""instance_for: every satisfiable schema gets a valid, reproducible instance."""

from __future__ import annotations

import enum
import json
import re
import subprocess
import sys
from datetime import date, datetime, time
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

import jsonschema
import pydantic
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stubs.schema.instance import instance_for
from vendors.errors import VendorRequestError

REPO = Path(__file__).resolve().parents[3]

# jsonschema checks only some formats without optional extras; check the rest strictly here so
# a malformed date-time or uri cannot slip through.
STRICT_FORMATS = jsonschema.FormatChecker()


@STRICT_FORMATS.checks("date-time", raises=ValueError)
def _date_time(value: object) -> bool:
    return not isinstance(value, str) or bool(datetime.fromisoformat(value).tzinfo)


@STRICT_FORMATS.checks("time", raises=ValueError)
def _time(value: object) -> bool:
    return not isinstance(value, str) or bool(time.fromisoformat(value).tzinfo)


@STRICT_FORMATS.checks("date", raises=ValueError)
def _date(value: object) -> bool:
    return not isinstance(value, str) or bool(date.fromisoformat(value))


@STRICT_FORMATS.checks("uri")
def _uri(value: object) -> bool:
    return not isinstance(value, str) or bool(urlsplit(value).scheme and urlsplit(value).netloc)


@STRICT_FORMATS.checks("hostname")
def _hostname(value: object) -> bool:
    label = r"[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
    return not isinstance(value, str) or re.fullmatch(rf"{label}(\.{label})*", value) is not None


def assert_valid(schema: Any, instance: Any) -> None:
    errors = list(
        jsonschema.Draft202012Validator(schema, format_checker=STRICT_FORMATS).iter_errors(instance)
    )
    assert not errors, f"{json.dumps(instance)} invalid: {[e.message for e in errors]}"


# ---- a strategy that draws satisfiable schemas ------------------------------------------------

FORMATS = ("date", "date-time", "time", "email", "uuid", "uri", "ipv4", "hostname")
PATTERNS = (r"^[A-Z]{3}-\d{2}$", r"^[a-z]+_[0-9]{1,3}$", r"^(red|green)\d?$")
scalars = st.one_of(
    st.integers(-1000, 1000), st.booleans(), st.none(), st.text("abcxyz", min_size=1, max_size=6)
)


@st.composite
def string_schemas(draw: st.DrawFn) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string"}
    kind = draw(st.sampled_from(["plain", "format", "pattern"]))
    if kind == "format":
        schema["format"] = draw(st.sampled_from(FORMATS))
    elif kind == "pattern":
        schema["pattern"] = draw(st.sampled_from(PATTERNS))
    else:
        low = draw(st.integers(0, 30))
        schema["minLength"] = low
        if draw(st.booleans()):
            schema["maxLength"] = low + draw(st.integers(0, 20))
    return schema


@st.composite
def numeric_schemas(draw: st.DrawFn) -> dict[str, Any]:
    kind = draw(st.sampled_from(["integer", "number"]))
    schema: dict[str, Any] = {"type": kind}
    fractions = [0.5, 0.25, 0.1, 0.01] if kind == "number" else []
    step = draw(st.sampled_from([None, 2, 5, *fractions]))
    if step is not None:
        schema["multipleOf"] = step
    low = draw(st.one_of(st.none(), st.integers(-(10**6), 10**6)))
    # Wide enough that a multiple fits strictly inside even with both bounds exclusive.
    width = draw(st.one_of(st.none(), st.integers(12, 10**4)))
    if low is not None:
        schema["exclusiveMinimum" if draw(st.booleans()) else "minimum"] = low
    if width is not None:
        high = (low if low is not None else 0) + width
        schema["exclusiveMaximum" if draw(st.booleans()) else "maximum"] = high
    return schema


leaf_schemas = st.one_of(
    string_schemas(),
    numeric_schemas(),
    st.just({"type": "boolean"}),
    st.just({"type": "null"}),
    st.lists(scalars, min_size=1, max_size=5, unique_by=lambda v: json.dumps(v)).map(
        lambda values: {"enum": values}
    ),
    scalars.map(lambda v: {"const": v}),
)


def nullable(schema: dict[str, Any]) -> dict[str, Any]:
    if isinstance(schema.get("type"), str) and schema["type"] != "null":
        return {**schema, "type": [schema["type"], "null"]}
    return schema


def extend(children: st.SearchStrategy[dict[str, Any]]) -> st.SearchStrategy[dict[str, Any]]:
    @st.composite
    def objects(draw: st.DrawFn) -> dict[str, Any]:
        props = draw(st.dictionaries(st.sampled_from("abcdefgh"), children, max_size=5))
        schema: dict[str, Any] = {"type": "object", "properties": props}
        names = st.lists(st.sampled_from(sorted(props)), unique=True) if props else st.just([])
        schema["required"] = draw(names)
        if draw(st.booleans()):
            schema["additionalProperties"] = False
        return schema

    @st.composite
    def arrays(draw: st.DrawFn) -> dict[str, Any]:
        unique = draw(st.booleans())
        # Unique items need a roomy item type; strings and wide integers always have room.
        items = (
            draw(st.sampled_from([{"type": "string"}, {"type": "integer"}]))
            if unique
            else (draw(children))
        )
        low = draw(st.integers(0, 3))
        schema: dict[str, Any] = {"type": "array", "items": items, "minItems": low}
        if unique:
            schema["uniqueItems"] = True
        if draw(st.booleans()):
            schema["maxItems"] = low + draw(st.integers(0, 3))
        return schema

    return st.one_of(
        objects(),
        arrays(),
        children.map(nullable),
        st.lists(children, min_size=1, max_size=3).map(lambda bs: {"anyOf": bs}),
    )


schemas = st.recursive(leaf_schemas, extend, max_leaves=12)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(schema=schemas, digest=st.binary(min_size=32, max_size=32))
def test_drawn_schemas_get_valid_instances(schema: dict[str, Any], digest: bytes) -> None:
    instance = instance_for(schema, digest)
    assert_valid(schema, instance)
    assert instance_for(schema, digest) == instance


# ---- pydantic models, as `messages.parse` / `responses.parse` send them ----------------------


class Mood(enum.Enum):
    CALM = "calm"
    TENSE = "tense"


class Address(pydantic.BaseModel):
    city: str
    postcode: str = pydantic.Field(pattern=r"^\d{5}$")


class Person(pydantic.BaseModel):
    name: str = pydantic.Field(min_length=2, max_length=40)
    age: int = pydantic.Field(ge=0, lt=130)
    score: float = pydantic.Field(gt=0, le=1)
    mood: Mood
    role: Literal["admin", "user"]
    nickname: str | None = None
    email: str | None = pydantic.Field(default=None, json_schema_extra={"format": "email"})
    joined: datetime
    key: pydantic.UUID4
    addresses: list[Address]
    friends: list[Person] = []
    manager: Person | None = None


PYDANTIC_MODELS = [Address, Person]


@pytest.mark.parametrize("model", PYDANTIC_MODELS, ids=lambda m: m.__name__)
def test_pydantic_model_schemas_validate_and_parse(model: type[pydantic.BaseModel]) -> None:
    schema = model.model_json_schema()
    for i in range(20):
        instance = instance_for(schema, bytes([i]) * 32)
        assert_valid(schema, instance)
        model.model_validate(instance)  # the SDK's .parse() does exactly this


def test_instances_vary_with_digest() -> None:
    schema = Person.model_json_schema()
    seen = {json.dumps(instance_for(schema, bytes([i]) * 32)) for i in range(10)}
    assert len(seen) > 5


def test_same_instance_in_other_processes() -> None:
    schema = Person.model_json_schema()
    code = (
        "import json,sys;from stubs.schema.instance import instance_for;"
        "s=json.loads(sys.stdin.read());"
        "print(json.dumps([instance_for(s, bytes([i])*32) for i in range(5)], sort_keys=True))"
    )
    outputs = {
        subprocess.run(
            [sys.executable, "-c", code],
            input=json.dumps(schema),
            capture_output=True,
            text=True,
            check=True,
            cwd=REPO,
            env={"PYTHONHASHSEED": seed, "PATH": ""},
        ).stdout
        for seed in ("1", "2")
    }
    assert len(outputs) == 1
    local = [instance_for(schema, bytes([i]) * 32) for i in range(5)]
    assert json.loads(outputs.pop()) == json.loads(json.dumps(local, sort_keys=True))


KEYWORD_SCHEMAS = [
    {"oneOf": [{"type": "string", "maxLength": 3}, {"type": "integer", "multipleOf": 7}]},
    {
        "allOf": [
            {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]},
            {"properties": {"b": {"const": "x"}}, "required": ["b"]},
        ]
    },
    {
        "type": "array",
        "prefixItems": [{"const": 1}, {"type": "string", "format": "uuid"}],
        "items": False,
        "minItems": 2,
    },
    {"type": "array", "items": {"enum": ["a", "b", "c"]}, "minItems": 3, "uniqueItems": True},
    {"type": "number", "exclusiveMinimum": 0.1, "exclusiveMaximum": 0.2},
    {"type": "number", "multipleOf": 0.1, "minimum": 0.25, "maximum": 0.95},
    {"type": "integer", "multipleOf": 3, "exclusiveMinimum": 9, "exclusiveMaximum": 13},
    {"type": "string", "pattern": "^[a-z]{2}$", "minLength": 2, "maxLength": 2},
    {"type": "string", "pattern": r"^(?=.*\d)[a-z0-9]{6,10}$"},  # lookahead: checked, retried
    {
        "$defs": {
            "N": {
                "type": "object",
                "additionalProperties": False,
                "required": ["v", "kids"],
                "properties": {
                    "v": {"type": "integer"},
                    "kids": {"type": "array", "items": {"$ref": "#/$defs/N"}},
                },
            }
        },
        "$ref": "#/$defs/N",
    },
    {
        "type": "object",
        "properties": {"t": {"type": ["string", "null"], "format": "date-time"}},
        "required": ["t"],
        "additionalProperties": False,
    },
]


@pytest.mark.parametrize("schema", KEYWORD_SCHEMAS, ids=lambda s: json.dumps(s)[:40])
def test_keyword_schemas(schema: dict[str, Any]) -> None:
    for i in range(10):
        assert_valid(schema, instance_for(schema, bytes([i]) * 32))


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "integer", "minimum": 5, "maximum": 4},
        {"type": "string", "minLength": 4, "maxLength": 2},
        {"type": "array", "minItems": 3, "items": {"type": "boolean"}, "uniqueItems": True},
        {"allOf": [{"type": "string"}, {"type": "integer"}]},
        {"type": "object", "required": ["a"], "properties": {"a": False}},
    ],
)
def test_unsatisfiable_schema_is_a_400(schema: dict[str, Any]) -> None:
    with pytest.raises(VendorRequestError) as err:
        instance_for(schema, b"\0" * 32)
    assert err.value.status == 400


def test_invalid_schema_is_a_400() -> None:
    with pytest.raises(VendorRequestError):
        instance_for({"type": "strnig"}, b"\0" * 32)


def test_fast_after_first_call() -> None:
    import time as clock

    # A typical structured-output schema (a recursive model like Person takes a few ms more).
    schema = {
        "type": "object",
        "additionalProperties": False,
        "required": ["title", "rating", "tags", "when", "author"],
        "properties": {
            "title": {"type": "string", "minLength": 3},
            "rating": {"type": "integer", "minimum": 1, "maximum": 5},
            "tags": {"type": "array", "items": {"enum": ["a", "b", "c"]}},
            "when": {"type": ["string", "null"], "format": "date-time"},
            "author": {"$ref": "#/$defs/Address"},
        },
        "$defs": {"Address": Address.model_json_schema()},
    }
    instance_for(schema, b"\1" * 32)
    started = clock.thread_time()  # CPU time: a loaded machine does not stretch it
    for i in range(50):
        instance_for(schema, bytes([i]) * 32)
    assert (clock.thread_time() - started) / 50 < 0.005
