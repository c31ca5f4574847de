"""What the schema walker takes from the request's own text (stubs.prompt.grounding): names,
sentences,
dates and integers per field, so a structured answer talks about what the prompt talks about.

A `Grounder` also remembers what it chose per object (a `fact` mentions its object's names, a
`target_entity_name` differs from its `source_entity_name`) and the properties' descriptions (an
index field names the prompt's key in its description). Paths are the walker's JSON paths, with
its branch markers ("$.edges#anyOf0[1]~2").
"""

from __future__ import annotations

import re
from typing import Any

from stubs.prompt import Grounding, field_kind, iso


class Grounder:
    def __init__(self, grounding: Grounding | None) -> None:
        self.ground = grounding if grounding is not None and grounding.has_material else None
        # Strings already chosen per object path, so a `fact` can mention the object's names
        # and a `target_entity_name` differs from its `source_entity_name`.
        self.chosen: dict[str, list[str]] = {}
        self.notes: dict[str, str] = {}  # property path -> its description, for index fields

    def ends_open(self, path: str) -> bool:
        name = field_name(path).lower()
        return self.ground is not None and name.startswith(("invalid", "expired", "end"))

    def remember(self, path: str, value: str) -> str:
        self.chosen.setdefault(object_path(path), []).append(value)
        return value

    def string(self, schema: dict[str, Any], path: str) -> str | None:
        ground = self.ground
        if ground is None:
            return None
        name = field_name(path)
        kind = field_kind(name)
        fmt = schema.get("format")
        if fmt is not None and fmt not in ("date", "date-time"):
            return None  # an email or a uri is made by its format, never from prose
        if fmt in ("date", "date-time") or kind == "date":
            moment = ground.latest_date()
            if moment is None:
                return None
            return moment.date().isoformat() if fmt == "date" else iso(moment)
        siblings = self.chosen.get(object_path(path), [])
        # Array items take the text's names and sentences in order, so a list of entities names
        # each once; past the end (or on a uniqueness retry) the word list takes over.
        at = (item_index(path) or 0) + retry_of(path)
        if kind == "place" and ground.places:
            fresh = [n for n in ground.places if n not in siblings] or list(ground.places)
            return fresh[at % len(fresh)]
        if kind == "place" and not ground.names():
            return None  # no place is said: a filler, never a sentence as a city
        if kind in ("name", "place") and ground.names():
            names = ground.people() if kind == "name" else ground.names()
            fresh = [n for n in names if n not in siblings] or list(names)
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
        return pool[at % len(pool)] if kind == "prose" and not retry_of(path) else None

    def numbers(self, path: str, integer: bool, default: Any = None) -> list[int | float]:
        """Numbers for a numeric field: the prompt's keyed values and list ids first (`ints`),
        then, for a field that is not an index, the numbers the user's text gives for it; the
        schema's `default` comes before numbers said for other things (a search tool's
        `limit` keeps its 10 when the user says "I am 34")."""
        assert self.ground is not None
        keyed: list[int | float] = list(self.ints(path)) if integer else []
        name = field_name(path)
        if _is_index(name):
            return keyed
        said = self.ground.numbers_for(name)
        near = self.ground.numbers_near(name)
        if isinstance(default, int | float) and not isinstance(default, bool):
            said = [*near, default, *(v for v in said if v not in near)]
        # The i-th item of a list takes the i-th number said for its field ("Lena is 34 ...
        # Ana is 29" gives two ages), the others after it.
        at = item_index(path) or 0
        if said and at:
            said = said[at % len(said) :] + said[: at % len(said)]
        if integer:
            said = [int(v) for v in said if float(v).is_integer()]
        return [*keyed, *said]

    def ints(self, path: str) -> list[int]:
        """Values the prompt gives for this key, else for the list ids it numbers (`idx`)."""
        assert self.ground is not None
        name = field_name(path)
        ints = self.ground.ints
        for key in (name, name.rstrip("s"), name.removesuffix("_indices") + "_index"):
            if key in ints:
                return list(ints[key])
        # "List of idx values of duplicate facts": the description names the prompt's key.
        note = self.notes.get(re.sub(r"(\[\d+\](~\d+)?)+$", "", clean_path(path)), "")
        named = [k for k in ints if re.search(rf"\b{re.escape(k)}\b", note)]
        if named:
            return list(ints[max(named, key=len)])
        if _is_index(name):
            for key in ("idx", "id", "index"):
                if key in ints:
                    return list(ints[key])
            return [0]
        return []


def _is_index(name: str) -> bool:
    lowered = name.lower()
    return any(k in lowered for k in ("idx", "index", "indices", "_id")) or lowered == "id"


def clean_path(path: str) -> str:
    """The JSON path without the walker's branch markers ("$#anyOf0[1]" -> "$[1]")."""
    return re.sub(r"#[^.\[\]~]*", "", path)


def field_name(path: str) -> str:
    """The property a JSON path ends in ("$.edges[0].fact" -> "fact"), array items included."""
    last = re.sub(r"(\[\d+\](~\d+)?)+$", "", clean_path(path)).rsplit(".", 1)[-1]
    return "" if last.startswith("$") else last


def retry_of(path: str) -> int:
    found = re.search(r"~(\d+)$", clean_path(path))
    return int(found.group(1)) if found else 0


def object_path(path: str) -> str:
    return clean_path(path).rsplit(".", 1)[0]


def item_index(path: str) -> int | None:
    """The index of the array item this value is, or of the object holding it."""
    own = re.search(r"\[(\d+)\](~\d+)?$", clean_path(path))
    if own:
        return int(own.group(1))
    found = re.findall(r"\[(\d+)\]", object_path(path))
    return int(found[-1]) if found else None
