"""The walk over a JSON schema that builds one instance of it (stubs.schema.instance retries it
and validates the result): `$ref`, `const`/`enum`, `allOf`/`anyOf`/`oneOf`, objects, arrays,
strings (formats, patterns) and numbers (stubs.schema.numbers), every choice hashed from the
digest and the JSON path it is for, and grounded in the request's text (stubs.schema.grounded).
"""

from __future__ import annotations

import hashlib
import json
import math
from typing import Any

from stubs.prompt import Grounding, field_kind
from stubs.schema.formats import FORMATS
from stubs.schema.grounded import Grounder, clean_path
from stubs.schema.numbers import number_for
from stubs.schema.support import Unsat, merged_allof, pattern_string, validator

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
_MAX_NAMED_ITEMS = 12
_NUMERIC_TYPES = ("integer", "number")
# Keywords that constrain nothing: beside a $ref or anyOf they need no allOf merge.
_ANNOTATIONS = frozenset(
    {"title", "description", "default", "examples", "$comment", "$defs", "definitions"}
)


class Walker:
    def __init__(
        self, root: Any, digest: bytes, minimal: bool, grounding: Grounding | None = None
    ) -> None:
        self.root = root
        self.digest = digest
        self.minimal = minimal
        self.budget = _OPTIONAL_BUDGET
        self.grounder = Grounder(grounding)
        self.ground = self.grounder.ground

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
            raise Unsat(f"non-local $ref {ref}")
        node = self.root
        for part in ref[1:].split("/")[1:]:
            part = part.replace("~1", "/").replace("~0", "~")
            if isinstance(node, list):
                node = node[int(part)]
            elif isinstance(node, dict) and part in node:
                node = node[part]
            else:
                raise Unsat(f"unresolvable $ref {ref}")
        return node

    def gen(self, schema: Any, path: str, depth: int) -> Any:
        if depth > 3 * _MAX_DEPTH:
            raise Unsat("schema recursion too deep")
        if schema is True or schema == {}:
            return self.word(path)
        if schema is False or not isinstance(schema, dict):
            raise Unsat("false schema")
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
                raise Unsat("empty enum")
            if self.ground is not None and "default" in schema and schema["default"] in options:
                return schema["default"]  # a model leaves a choice it has no reason for as is
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
            if "null" in declared and self.grounder.ends_open(path):
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
        merged = merged_allof(json.dumps(parts, sort_keys=True))
        if merged is not None:
            return self.gen(merged, path, depth + 1)
        # Unmergeable: try each branch's instance against every branch.
        for i, part in enumerate(parts):
            value = self.gen(part, f"{path}#all{i}", depth + 1)
            if all(self.valid(p, value) for p in parts):
                return value
        raise Unsat("allOf")

    def gen_branches(self, schema: dict[str, Any], key: str, path: str, depth: int) -> Any:
        branches = list(schema[key])
        rest = {k: v for k, v in schema.items() if k != key and k not in _ANNOTATIONS}
        start = 0 if self.minimal else self.pick(path + "#" + key, max(1, len(branches)))
        # A null branch is tried last unless nothing else works: values are more useful. An end
        # date ("invalid_at") is the exception when grounded: a fact the text gives no end for
        # has none, and a made-up end would expire it at once.
        null_first = self.grounder.ends_open(path)
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
            except Unsat:
                continue
            if key == "oneOf" and sum(self.valid(b, value) for b in branches) != 1:
                continue
            return value
        raise Unsat(key)

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
        return bool(validator(json.dumps(wrapped, sort_keys=True)).is_valid(value))

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
                if name in names or len(names) >= max_props:
                    continue
                if self.optional(props, name, path):
                    names.append(name)
        out: dict[str, Any] = {}
        extra = schema.get("additionalProperties", True)
        for name in names:
            sub = props.get(name)
            if sub is None:
                sub = extra if isinstance(extra, dict) else True
            if isinstance(sub, dict) and isinstance(sub.get("description"), str):
                self.grounder.notes[clean_path(f"{path}.{name}")] = sub["description"]
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
                raise Unsat("minProperties")
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
            raise Unsat("minItems > maxItems")
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
                # Items naming two things (an edge) pair each name with the next one; items of
                # people (a name beside a place field) are as many as the people said.
                names = self.ground.names()
                if self.places_items(items) and self.ground.places:
                    names = tuple(n for n in self.ground.people() if n not in self.ground.places)
                want = min(len(names) - (named > 1), _MAX_NAMED_ITEMS)
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
                raise Unsat("uniqueItems")
            canon.add(key)
            out.append(value)
        return out

    def gen_string(self, schema: dict[str, Any], path: str) -> str:
        lo = int(schema.get("minLength", 0))
        hi = int(schema.get("maxLength", 10**6))
        if lo > hi:
            raise Unsat("minLength > maxLength")
        if "pattern" in schema:
            where = self.digest + path.encode()
            return pattern_string(schema["pattern"], where, lo, hi)
        fmt = schema.get("format")
        grounded = self.grounder.string(schema, path)
        if grounded is not None and lo <= len(grounded) <= hi:
            return self.grounder.remember(path, grounded)
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
        default = schema.get("default")
        if self.ground is not None:
            grounded = self.grounder.numbers(path, integer, default)
        elif isinstance(default, int | float) and not isinstance(default, bool):
            grounded = [default]
        else:
            grounded = []
        return number_for(schema, integer, lambda n: self.pick(path, n), grounded)

    def word(self, path: str) -> str:
        return _WORDS[self.pick(path + "#w", len(_WORDS))]

    def optional(self, props: dict[str, Any], name: str, path: str) -> bool:
        """Whether to fill an optional property. Grounded, one with a default is left to it (a
        tool's `action="create"`, `id=None`) unless the text fills it (a name, a place, prose:
        langmem's `content`); the others by the digest, two times in three."""
        sub = props.get(name)
        if self.ground is not None and isinstance(sub, dict) and "default" in sub:
            return field_kind(name) in ("name", "place", "prose")
        return bool(self.pick(path + "." + name, 3))

    def places_items(self, items: Any) -> bool:
        """Whether the array's item objects have a place field beside their name."""
        target = self.deref(items)
        props = target.get("properties") if isinstance(target, dict) else None
        return isinstance(props, dict) and any(field_kind(p) == "place" for p in props)

    def names_items(self, items: Any) -> int:
        """How many name fields the array's item objects have."""
        target = self.deref(items)
        props = target.get("properties") if isinstance(target, dict) else None
        return sum(field_kind(p) == "name" for p in props) if isinstance(props, dict) else 0
