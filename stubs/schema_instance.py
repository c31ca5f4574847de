"""Deterministic, valid instances of JSON schemas (structured outputs, tool inputs) in record mode.

Why not a library for the whole job (both evaluated here, late 2026):
- hypothesis-jsonschema 0.23.1 crashes on *every* object schema with the installed hypothesis
  6.170 (it calls the removed private `conjecture.utils.many.more()`), and one `find()` over a
  schema costs seconds, far too slow for a proxy hot path.
- jsf 0.11.2 draws from the global `random` module and Faker, so it is not reproducible across
  processes; it also hits RecursionError on pydantic's recursive `$defs` and crashes on `allOf`.
So the walk over the schema is written here, and the genuinely hard parts use well-kept code:
hypothesis-jsonschema's `merged()` intersects `allOf` branches, `pattern` strings come from
stubs.regex_example (Python's own regex parser) with hypothesis's `from_regex` (derandomized,
generate phase only, cached per pattern) for syntax it refuses, and jsonschema validates every
result before it is returned.

The only source of variation is `digest`: every choice hashes digest + the JSON path it is for,
so the same (schema, digest) gives the same instance on every machine. Given a `grounding` (what
the request's own text offers, stubs.grounding), strings, dates and integers are taken from the
request instead of the word list, and arrays get at least one item when the text has material:
still a pure function of (schema, digest, request).
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import re
from typing import Any

import jsonschema
from hypothesis import HealthCheck, Phase, find, settings
from hypothesis import strategies as st
from hypothesis.errors import HypothesisException

from stubs.errors import StubRequestError
from stubs.grounding import Grounding, field_kind, iso
from stubs.regex_example import Unsupported, regex_example
from stubs.schema_formats import FORMATS

_WORDS = (
    "alpha",
    "amber",
    "river",
    "stone",
    "cedar",
    "harbor",
    "meadow",
    "signal",
    "summit",
    "lantern",
    "orbit",
    "willow",
    "copper",
    "delta",
    "ember",
    "falcon",
    "garnet",
    "juniper",
)
_MAX_DEPTH = 8  # below this depth only what the schema requires is built, so recursion ends
# Optional properties and extra array items stop after this many containers, which keeps
# recursive models (pydantic trees) small and fast instead of bushy.
_OPTIONAL_BUDGET = 6
_RETRIES = 6
_MAX_NAMED_ITEMS = 12
# Generate phase only: shrinking costs ~0.7 s per pattern and readability gains nothing.
_REGEX_SETTINGS = settings(
    database=None,
    derandomize=True,
    max_examples=60,
    phases=[Phase.generate],
    suppress_health_check=list(HealthCheck),
    deadline=None,
)
_NUMERIC_TYPES = ("integer", "number")
# Keywords that constrain nothing: beside a $ref or anyOf they need no allOf merge.
_ANNOTATIONS = frozenset(
    {"title", "description", "default", "examples", "$comment", "$defs", "definitions"}
)


class _Unsat(Exception):
    """This branch cannot be satisfied by the generator; the caller tries another."""


def instance_for(schema: dict[str, Any], digest: bytes, grounding: Grounding | None = None) -> Any:
    """A JSON value that validates against `schema`, chosen deterministically from `digest` (and
    from the request's own text when a `grounding` is given)."""
    if not isinstance(schema, dict | bool):
        raise StubRequestError(400, "schema must be a JSON object")
    key = json.dumps(schema, sort_keys=True, separators=(",", ":"))
    validator = _validator(key)
    for attempt in range(_RETRIES + 1):
        # The last attempt builds the smallest instance: nothing optional, arrays at minItems.
        minimal = attempt == _RETRIES
        salt = digest if attempt == 0 else digest + b"retry" + bytes([attempt])
        try:
            value = _Walker(schema, salt, minimal, grounding).gen(schema, "$", 0)
        except (_Unsat, RecursionError):
            continue
        if validator.is_valid(value):
            return value
    raise StubRequestError(400, "schema cannot be satisfied: no valid instance found", "schema")


@functools.lru_cache(maxsize=512)
def _validator(key: str) -> jsonschema.protocols.Validator:
    schema = json.loads(key)
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    try:
        cls.check_schema(schema)
    except jsonschema.SchemaError as exc:
        raise StubRequestError(400, f"invalid schema: {exc.message}", "schema") from exc
    return cls(schema, format_checker=cls.FORMAT_CHECKER)


def _pattern_string(pattern: str, digest: bytes, min_len: int, max_len: int) -> str:
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
        raise _Unsat(pattern) from exc


@functools.lru_cache(maxsize=512)
def _merged_allof(key: str) -> dict[str, Any] | None:
    # Private but stable for years; if it moves, allOf falls back to generate-and-validate.
    try:
        from hypothesis_jsonschema._canonicalise import merged
    except ImportError:  # pragma: no cover
        return None
    result = merged(json.loads(key))
    return result if isinstance(result, dict) else None


class _Walker:
    def __init__(
        self, root: Any, digest: bytes, minimal: bool, grounding: Grounding | None = None
    ) -> None:
        self.root = root
        self.digest = digest
        self.minimal = minimal
        self.budget = _OPTIONAL_BUDGET
        self.ground = grounding if grounding is not None and grounding.has_material else None
        # Strings already chosen per object path, so a `fact` can mention the object's names
        # and a `target_entity_name` differs from its `source_entity_name`.
        self.chosen: dict[str, list[str]] = {}
        self.notes: dict[str, str] = {}  # property path -> its description, for index fields

    def expand(self, depth: int) -> bool:
        """Whether to add optional content here (spends budget, so recursion terminates)."""
        if self.minimal or depth >= _MAX_DEPTH or self.budget <= 0:
            return False
        self.budget -= 1
        return True

    def pick(self, path: str, n: int) -> int:
        h = hashlib.blake2b(self.digest + path.encode(), digest_size=8).digest()
        return int.from_bytes(h, "big") % n

    def resolve(self, ref: str) -> Any:
        if not ref.startswith("#"):
            raise _Unsat(f"non-local $ref {ref}")
        node = self.root
        for part in ref[1:].split("/")[1:]:
            part = part.replace("~1", "/").replace("~0", "~")
            if isinstance(node, list):
                node = node[int(part)]
            elif isinstance(node, dict) and part in node:
                node = node[part]
            else:
                raise _Unsat(f"unresolvable $ref {ref}")
        return node

    def gen(self, schema: Any, path: str, depth: int) -> Any:
        if depth > 3 * _MAX_DEPTH:
            raise _Unsat("schema recursion too deep")
        if schema is True or schema == {}:
            return self.word(path)
        if schema is False or not isinstance(schema, dict):
            raise _Unsat("false schema")
        if "$ref" in schema:
            target = self.resolve(schema["$ref"])
            rest = {k: v for k, v in schema.items() if k != "$ref" and k not in _ANNOTATIONS}
            if not rest:
                return self.gen(target, path, depth + 1)
            return self.gen({"allOf": [target, rest]}, path, depth + 1)
        if "const" in schema:
            return schema["const"]
        if "enum" in schema:
            options = schema["enum"]
            if not options:
                raise _Unsat("empty enum")
            return options[self.pick(path + "#enum", len(options))]
        if "allOf" in schema:
            return self.gen_all_of(schema, path, depth)
        for key in ("anyOf", "oneOf"):
            if key in schema:
                return self.gen_branches(schema, key, path, depth)
        kind = self.choose_type(schema, path)
        if kind == "object":
            return self.gen_object(schema, path, depth)
        if kind == "array":
            return self.gen_array(schema, path, depth)
        if kind == "string":
            return self.gen_string(schema, path)
        if kind in _NUMERIC_TYPES:
            return self.gen_number(schema, path, kind == "integer")
        if kind == "boolean":
            return self.pick(path, 2) == 1
        return None

    def choose_type(self, schema: dict[str, Any], path: str) -> str:
        declared = schema.get("type")
        if isinstance(declared, str):
            return declared
        if isinstance(declared, list) and declared:
            if "null" in declared and self.ends_open(path):
                return "null"
            # Nullable fields get a real value: a stub full of nulls exercises nothing.
            concrete = [t for t in declared if t != "null"] or ["null"]
            return str(concrete[self.pick(path + "#type", len(concrete))])
        if {"properties", "required", "additionalProperties"} & schema.keys():
            return "object"
        if {"items", "prefixItems", "minItems", "maxItems"} & schema.keys():
            return "array"
        if "multipleOf" in schema:
            return "number"
        if {"minLength", "maxLength", "pattern", "format"} & schema.keys():
            return "string"
        if {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"} & schema.keys():
            return "number"
        return "string"

    def gen_all_of(self, schema: dict[str, Any], path: str, depth: int) -> Any:
        parts = [self.deref(s) for s in schema["allOf"]]
        parts.append({k: v for k, v in schema.items() if k != "allOf"})
        merged = _merged_allof(json.dumps(parts, sort_keys=True))
        if merged is not None:
            return self.gen(merged, path, depth + 1)
        # Unmergeable: try each branch's instance against every branch.
        for i, part in enumerate(parts):
            value = self.gen(part, f"{path}#all{i}", depth + 1)
            if all(self.valid(p, value) for p in parts):
                return value
        raise _Unsat("allOf")

    def gen_branches(self, schema: dict[str, Any], key: str, path: str, depth: int) -> Any:
        branches = list(schema[key])
        rest = {k: v for k, v in schema.items() if k != key and k not in _ANNOTATIONS}
        start = 0 if self.minimal else self.pick(path + "#" + key, max(1, len(branches)))
        # A null branch is tried last unless nothing else works: values are more useful. An end
        # date ("invalid_at") is the exception when grounded: a fact the text gives no end for
        # has none, and a made-up end would expire it at once.
        null_first = self.ends_open(path)
        order = sorted(
            range(len(branches)),
            key=lambda i: (
                (branches[i] == {"type": "null"}) != null_first,
                (i - start) % len(branches),
            ),
        )
        for i in order:
            sub = {"allOf": [branches[i], rest]} if rest else branches[i]
            try:
                value = self.gen(sub, f"{path}#{key}{i}", depth + 1)
            except _Unsat:
                continue
            if key == "oneOf" and sum(self.valid(b, value) for b in branches) != 1:
                continue
            return value
        raise _Unsat(key)

    def deref(self, schema: Any) -> Any:
        seen = 0
        while isinstance(schema, dict) and set(schema) == {"$ref"} and seen < 32:
            schema = self.resolve(schema["$ref"])
            seen += 1
        return schema

    def valid(self, schema: Any, value: Any) -> bool:
        wrapped = dict(schema) if isinstance(schema, dict) else schema
        if isinstance(wrapped, dict) and isinstance(self.root, dict):
            # Keep the root's $defs reachable for refs inside the branch.
            for defs in ("$defs", "definitions"):
                if defs in self.root and defs not in wrapped:
                    wrapped[defs] = self.root[defs]
        return bool(_validator(json.dumps(wrapped, sort_keys=True)).is_valid(value))

    def gen_object(self, schema: dict[str, Any], path: str, depth: int) -> dict[str, Any]:
        props: dict[str, Any] = schema.get("properties") or {}
        required = list(schema.get("required") or [])
        for dep_key, deps in (schema.get("dependentRequired") or {}).items():
            if dep_key in required:
                required.extend(d for d in deps if d not in required)
        names = list(required)
        if self.expand(depth):
            max_props = schema.get("maxProperties", math.inf)
            for name in props:
                if name not in names and len(names) < max_props and self.pick(path + "." + name, 3):
                    names.append(name)
        out: dict[str, Any] = {}
        extra = schema.get("additionalProperties", True)
        for name in names:
            sub = props.get(name)
            if sub is None:
                sub = extra if isinstance(extra, dict) else True
            if isinstance(sub, dict) and isinstance(sub.get("description"), str):
                self.notes[_clean(f"{path}.{name}")] = sub["description"]
            out[name] = self.gen(sub, f"{path}.{name}", depth + 1)
        min_props = schema.get("minProperties", 0)
        i = 0
        while len(out) < min_props:
            spare = [n for n in props if n not in out]
            if spare:
                name = spare[0]
                out[name] = self.gen(props[name], f"{path}.{name}", depth + 1)
            elif extra is not False:
                name = f"{self.word(path + f'#k{i}')}_{i}"
                out[name] = self.gen(extra if isinstance(extra, dict) else True, path, depth + 1)
            else:
                raise _Unsat("minProperties")
            i += 1
        return out

    def gen_array(self, schema: dict[str, Any], path: str, depth: int) -> list[Any]:
        prefix = list(schema.get("prefixItems") or [])
        items = schema.get("items", True)
        lo = int(schema.get("minItems", 0))
        hi = schema.get("maxItems", math.inf)
        if items is False:
            hi = min(hi, len(prefix))
        if lo > hi:
            raise _Unsat("minItems > maxItems")
        size = lo
        if self.expand(depth):
            size = max(lo, min(hi, len(prefix) + 1 + self.pick(path + "#n", 3)))
        if "contains" in schema:
            size = max(size, 1)
        if self.ground is not None and not self.minimal:
            # Grounded lists are as long as the text warrants: one item, or, for a list of named
            # things, one per name the text gives (capped), as a model's answer would be.
            want = 1
            named = self.names_items(items)
            if named:
                # Items naming two things (an edge) pair each name with the next one.
                want = min(len(self.ground.names()) - (named > 1), _MAX_NAMED_ITEMS)
            size = max(lo, min(hi, max(want, 1)))
        unique = bool(schema.get("uniqueItems"))
        out: list[Any] = []
        canon: set[str] = set()
        for i in range(int(size)):
            sub = prefix[i] if i < len(prefix) else items
            if i == 0 and "contains" in schema and i >= len(prefix):
                sub = {"allOf": [sub, schema["contains"]]}
            for attempt in range(40 if unique else 1):
                where = f"{path}[{i}]" + (f"~{attempt}" if attempt else "")
                value = self.gen(sub, where, depth + 1)
                key = json.dumps(value, sort_keys=True)
                if not unique or key not in canon:
                    break
            else:
                if i >= lo:
                    break
                raise _Unsat("uniqueItems")
            canon.add(key)
            out.append(value)
        return out

    def gen_string(self, schema: dict[str, Any], path: str) -> str:
        lo = int(schema.get("minLength", 0))
        hi = int(schema.get("maxLength", 10**6))
        if lo > hi:
            raise _Unsat("minLength > maxLength")
        if "pattern" in schema:
            where = self.digest + path.encode()
            return _pattern_string(schema["pattern"], where, lo, hi)
        fmt = schema.get("format")
        grounded = self.grounded_string(schema, path)
        if grounded is not None and lo <= len(grounded) <= hi:
            return self.remember(path, grounded)
        if isinstance(fmt, str) and fmt in FORMATS:
            return FORMATS[fmt](self, path)
        text = self.word(path)
        if len(text) < lo:
            fill = [text]
            while sum(map(len, fill)) + len(fill) - 1 < lo:
                fill.append(self.word(f"{path}#{len(fill)}"))
            text = " ".join(fill)
        return text[:hi]

    def gen_number(self, schema: dict[str, Any], path: str, integer: bool) -> int | float:
        lo, hi, lo_open, hi_open = _bounds(schema)
        if integer and self.ground is not None:
            for found in self.grounded_ints(path):
                on_open_bound = (lo_open and found == lo) or (hi_open and found == hi)
                if lo <= found <= hi and not on_open_bound:
                    return found
        step = schema.get("multipleOf")
        if integer:
            step = _lcm_step(step)
        if step:
            k_lo = math.ceil(lo / step) if lo > -math.inf else -50
            k_hi = math.floor(hi / step) if hi < math.inf else k_lo + 100 if lo > -math.inf else 100
            if lo_open and k_lo * step <= lo:
                k_lo += 1
            if hi_open and k_hi * step >= hi:
                k_hi -= 1
            if k_lo > k_hi:
                raise _Unsat("no multiple in range")
            if k_lo < 0 < k_hi and lo == -math.inf:
                k_lo = 0
            count = min(k_hi - k_lo, 100) + 1
            start = self.pick(path, count)
            for j in range(count):
                value = (k_lo + (start + j) % count) * step
                if integer or float(value).is_integer():
                    return int(value)
                # Validators test multipleOf as `x / step` being integral in floating point, so
                # 3 * 0.1 fails; a rounded multiple that divides exactly is kept, else try another.
                for candidate in (round(value, 10), value):
                    if (candidate / step).is_integer() and lo <= candidate <= hi:
                        return candidate
            raise _Unsat("no float multiple that validators accept")
        # Float without multipleOf: a value strictly inside the bounds.
        a = lo if lo > -math.inf else (hi - 100 if hi < math.inf else 0.0)
        b = hi if hi < math.inf else a + 100
        frac = (1 + self.pick(path, 98)) / 100  # in (0, 1): never on an exclusive bound
        value = a + (b - a) * frac
        if a <= round(value, 2) <= b and not (lo_open and round(value, 2) <= lo):
            value = round(value, 2)
        return value if value != int(value) or lo_open or hi_open else float(int(value))

    def word(self, path: str) -> str:
        return _WORDS[self.pick(path + "#w", len(_WORDS))]

    def names_items(self, items: Any) -> int:
        """How many name fields the array's item objects have."""
        target = self.deref(items)
        props = target.get("properties") if isinstance(target, dict) else None
        return sum(field_kind(p) == "name" for p in props) if isinstance(props, dict) else 0

    def ends_open(self, path: str) -> bool:
        name = _field_name(path).lower()
        return self.ground is not None and name.startswith(("invalid", "expired", "end"))

    def remember(self, path: str, value: str) -> str:
        self.chosen.setdefault(_object_path(path), []).append(value)
        return value

    def grounded_string(self, schema: dict[str, Any], path: str) -> str | None:
        ground = self.ground
        if ground is None:
            return None
        name = _field_name(path)
        kind = field_kind(name)
        fmt = schema.get("format")
        if fmt is not None and fmt not in ("date", "date-time"):
            return None  # an email or a uri is made by its format, never from prose
        if fmt in ("date", "date-time") or kind == "date":
            moment = ground.latest_date()
            if moment is None:
                return None
            return moment.date().isoformat() if fmt == "date" else iso(moment)
        siblings = self.chosen.get(_object_path(path), [])
        # Array items take the text's names and sentences in order, so a list of entities names
        # each once; past the end (or on a uniqueness retry) the word list takes over.
        at = (_item_index(path) or 0) + _retry_of(path)
        if kind == "name" and ground.names():
            fresh = [n for n in ground.names() if n not in siblings] or list(ground.names())
            if at < len(fresh):
                return fresh[at]
            # The second name of an item (an edge's target) pairs with any other name.
            return fresh[at % len(fresh)] if siblings else None
        if "SNAKE_CASE" in str(schema.get("description", "")):
            return "RELATES_TO"
        about = [s for s in ground.sentences if any(n in s for n in siblings)]
        pool = about or list(ground.sentences)
        if not pool:
            return None
        if at < len(pool):
            return pool[at]
        # More items than sentences: an object's prose (an edge's fact) repeats a sentence
        # about its names; a bare string list past the text's end takes words instead.
        return pool[at % len(pool)] if kind == "prose" and not _retry_of(path) else None

    def grounded_ints(self, path: str) -> list[int]:
        """Values the prompt gives for this key, else for the list ids it numbers (`idx`)."""
        assert self.ground is not None
        name = _field_name(path)
        ints = self.ground.ints
        for key in (name, name.rstrip("s"), name.removesuffix("_indices") + "_index"):
            if key in ints:
                return list(ints[key])
        # "List of idx values of duplicate facts": the description names the prompt's key.
        note = self.notes.get(re.sub(r"(\[\d+\](~\d+)?)+$", "", _clean(path)), "")
        named = [k for k in ints if re.search(rf"\b{re.escape(k)}\b", note)]
        if named:
            return list(ints[max(named, key=len)])
        if any(k in name.lower() for k in ("idx", "index", "indices", "_id")):
            for key in ("idx", "id", "index"):
                if key in ints:
                    return list(ints[key])
            return [0]
        return []


def _clean(path: str) -> str:
    """The JSON path without the walker's branch markers ("$#anyOf0[1]" -> "$[1]")."""
    return re.sub(r"#[^.\[\]~]*", "", path)


def _field_name(path: str) -> str:
    """The property a JSON path ends in ("$.edges[0].fact" -> "fact"), array items included."""
    last = re.sub(r"(\[\d+\](~\d+)?)+$", "", _clean(path)).rsplit(".", 1)[-1]
    return "" if last.startswith("$") else last


def _retry_of(path: str) -> int:
    found = re.search(r"~(\d+)$", _clean(path))
    return int(found.group(1)) if found else 0


def _object_path(path: str) -> str:
    return _clean(path).rsplit(".", 1)[0]


def _item_index(path: str) -> int | None:
    """The index of the array item this value is, or of the object holding it."""
    own = re.search(r"\[(\d+)\](~\d+)?$", _clean(path))
    if own:
        return int(own.group(1))
    found = re.findall(r"\[(\d+)\]", _object_path(path))
    return int(found[-1]) if found else None


def _bounds(schema: dict[str, Any]) -> tuple[float, float, bool, bool]:
    lo, hi, lo_open, hi_open = -math.inf, math.inf, False, False
    if "minimum" in schema:
        lo = schema["minimum"]
    if "exclusiveMinimum" in schema and schema["exclusiveMinimum"] >= lo:
        lo, lo_open = schema["exclusiveMinimum"], True
    if "maximum" in schema:
        hi = schema["maximum"]
    if "exclusiveMaximum" in schema and schema["exclusiveMaximum"] <= hi:
        hi, hi_open = schema["exclusiveMaximum"], True
    if lo > hi or (lo == hi and (lo_open or hi_open)):
        raise _Unsat("empty numeric range")
    return lo, hi, lo_open, hi_open


def _lcm_step(step: Any) -> int:
    # An integer must also be a multiple of a fractional multipleOf: use the smallest integer one.
    if not step:
        return 1
    if float(step).is_integer():
        return int(step)
    for k in range(1, 1001):
        if float(step * k).is_integer():
            return int(step * k)
    raise _Unsat("multipleOf")
