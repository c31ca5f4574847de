"""Parts of a prompt a stub rule can name, and the JSON templates that use them.

An engine's prompt wraps the user's words in its own instructions (mem0's "## New Messages"
section, graphiti's <CURRENT MESSAGE> tag). A rule that can only echo the whole prompt makes the
engine store its own prompt, nested deeper each turn; a rule that names the part it needs makes it
store what the user said. A part is a TOML table of steps applied in this order:

    [rules.parts]
    said = { section = "New Messages", regex = '(?m)^user: (.+)$', all = true, sentences = true }

- `in`: where to start: "prompt" (last user text, then system text: the default), "user",
  "system", or another part's name (parts are built in the order written, so a part may use
  an earlier one);
- `section`: the body of the markdown heading with this title (up to the next heading);
- `tag`: the text between `<TAG>` and `</TAG>`;
- `regex` (Python syntax), `group` (number or name; default 1 when the pattern has a group, else
  the whole match) and `all` (every match, giving a list; else the first). With `all` and named
  groups but no `group`, each item is a record of its groups, read as `$item_NAME`;
- `sentences = true` / `names = true`: the sentences (speaker labels removed) or proper nouns of
  the text, as a list; `entities = true`: the names an entity extractor would list
  (stubs.prompt.entities: no capitalised sentence openers).
A step that finds nothing gives "" (or an empty list), never an error: the reply is still valid.
A list part fed to a later step is processed item by item and flattened.

In a string template a part is `$name` (a list joins with newlines), `$name_json` (JSON-escaped)
or `$name_list` (a JSON array). A `json` template is any TOML value whose strings are templates;
a string that is exactly "$name" of a list part is that list, and a table with `"$each" = "name"`
inside an array stands for one copy of the rest of the table per item, with `$item` and `$index`.
A string that is exactly one `$name|int` gives that value as an integer (0 if it is not one).
"""

from __future__ import annotations

import json
import re
import string
from typing import Any

from stubs.prompt.entities import entity_names
from stubs.prompt.grounding import proper_nouns, sentences_of, tag_text

Record = dict[str, str]
PartValue = str | list[str] | list[Record]
_STEP_KEYS = frozenset(
    {"in", "section", "tag", "regex", "group", "all", "sentences", "names", "entities"}
)
_EACH = "$each"


def check_part(name: str, spec: dict[str, Any]) -> None:
    """Refuse a part spec a user mistyped, naming the key (the stubs file's error says where)."""
    unknown = set(spec) - _STEP_KEYS
    if unknown:
        raise ValueError(f"part {name!r}: unknown keys {sorted(unknown)}; use {sorted(_STEP_KEYS)}")
    if "regex" in spec:
        try:
            re.compile(spec["regex"])
        except re.error as e:
            raise ValueError(f"part {name!r}: regex does not compile: {e}") from e


def build_parts(specs: dict[str, dict[str, Any]], sources: dict[str, str]) -> dict[str, PartValue]:
    """Every part of a rule, from `sources` ("prompt", "user", "system" texts)."""
    out: dict[str, PartValue] = {}
    for name, spec in specs.items():
        start = spec.get("in", "prompt")
        value: PartValue = out[start] if start in out else sources.get(start, "")
        out[name] = _apply(spec, value)
    return out


def _apply(spec: dict[str, Any], value: PartValue) -> PartValue:
    for step in ("section", "tag", "regex", "sentences", "names", "entities"):
        if step in spec:
            value = _each(value, lambda text, step=step: _step(spec, step, text))
    return value


def _each(value: PartValue, fn: Any) -> PartValue:
    if isinstance(value, str):
        return fn(value)
    flat: list[Any] = []
    for item in value:
        result = fn(item if isinstance(item, str) else item.get("", ""))
        flat.extend(result if isinstance(result, list) else [result])
    return flat


def _step(spec: dict[str, Any], step: str, text: str) -> PartValue:
    if step == "section":
        title = re.escape(str(spec["section"]))
        found = re.search(rf"^#+[ \t]*{title}[ \t]*\n(.*?)(?=^#|\Z)", text, re.M | re.S)
        return found.group(1).strip() if found else ""
    if step == "tag":
        return tag_text(text, str(spec["tag"])) or ""
    if step == "regex":
        pattern = re.compile(spec["regex"])
        if spec.get("all") and pattern.groupindex and "group" not in spec:
            # A record per match: its named groups, and "" for the whole match.
            return [
                {"": m.group(0), **{k: v or "" for k, v in m.groupdict().items()}}
                for m in pattern.finditer(text)
            ]
        group = spec.get("group", 1 if pattern.groups else 0)
        matches = [m.group(group) or "" for m in pattern.finditer(text)]
        if spec.get("all"):
            return list(dict.fromkeys(m.strip() for m in matches if m.strip()))
        return matches[0].strip() if matches else ""
    if step == "sentences":
        return list(sentences_of(text))
    if step == "entities":
        return entity_names(text)
    return list(proper_nouns(text))


def string_values(parts: dict[str, PartValue]) -> dict[str, str]:
    """The `$name`, `$name_json` and `$name_list` substitutions of the parts."""
    values: dict[str, str] = {}
    for name, value in parts.items():
        items = [value] if isinstance(value, str) else [_text(v) for v in value]
        text = "\n".join(items)
        values[name] = text
        values[name + "_json"] = json.dumps(text)[1:-1]
        values[name + "_list"] = json.dumps(items)
    return values


def render_json(template: Any, parts: dict[str, PartValue], values: dict[str, str]) -> Any:
    """The JSON value a `json` template gives (see the module doc)."""
    if isinstance(template, str):
        whole = re.fullmatch(r"\$\{?(\w+)\}?(\|int)?", template)
        if whole and whole.group(2):
            found = values.get(whole.group(1), "").strip()
            return int(found) if re.fullmatch(r"-?\d{1,18}", found) else 0
        value = parts.get(whole.group(1)) if whole else None
        if isinstance(value, list):
            return [_text(v) for v in value]
        return string.Template(template).safe_substitute(values)
    if isinstance(template, dict):
        return {k: render_json(v, parts, values) for k, v in template.items()}
    if isinstance(template, list):
        out: list[Any] = []
        for entry in template:
            if isinstance(entry, dict) and _EACH in entry:
                out.extend(_expand(entry, parts, values))
            else:
                out.append(render_json(entry, parts, values))
        return out
    return template


def _expand(
    entry: dict[str, Any], parts: dict[str, PartValue], values: dict[str, str]
) -> list[Any]:
    source = parts.get(str(entry[_EACH]), [])
    items: list[Any] = [source] if isinstance(source, str) and source else list(source or [])
    body = {k: v for k, v in entry.items() if k != _EACH}
    out = []
    for i, item in enumerate(items):
        text = _text(item)
        bound = {**values, "item": text, "item_json": json.dumps(text)[1:-1], "index": str(i)}
        if isinstance(item, dict):
            bound.update({f"item_{k}": v for k, v in item.items() if k})
        out.append(render_json(body, parts, bound))
    return out


def _text(item: str | Record) -> str:
    return item if isinstance(item, str) else item.get("", "")
