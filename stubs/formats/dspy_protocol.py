"""dspy's field-marker protocol, answered in kind: `[[ ## name ## ]]` sections, then
`[[ ## completed ## ]]`.

dspy's ChatAdapter lists a signature's output fields and their types in the system message
("Your output fields are: 1. `age` (int): ..."), notes each field's constraint in its template
("# note: the value you produce must adhere to the JSON schema: {...}"), and sends the input
fields as marked sections of the user message. A reply in canned prose fails its parse, so the
stub answers every output field, in order, with a value of its type grounded in the input
fields (a `name` field takes the name the text says, an `int` the number it gives).

dspy's ReAct rides on the same protocol: its `next_tool_name` is a Literal of the tools the
instructions describe ("(1) get_weather, whose description is <desc>...</desc>. It takes
arguments {...}") plus `finish`. The stub picks the tool that fits the question
(stubs.prompt.tool_policy) with arguments grounded in it, and `finish` once the trajectory holds an
observation, so the loop ends after one call, as it does for native tool calls.
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass
from typing import Any

from stubs.prompt import (
    Grounding,
    OfferedTool,
    Turn,
    field_kind,
    field_sections,
    fit_score,
    grounding_from,
)
from stubs.schema import instance_for

COMPLETED = "[[ ## completed ## ]]"
_FIELD_LINE_RE = re.compile(r"^\d{1,3}\. `(\w{1,80})` \(([^)\n]{0,300})\)", re.M)
_NOTE_RE = re.compile(r"^\{(\w{1,80})\}[ \t]+# note: ([^\n]{0,20000})$", re.M)
_TOOL_RE = re.compile(
    r"\(\d{1,3}\) (\w{1,80}), whose description is <desc>(.{0,4000}?)</desc>\. "
    r"It takes arguments (\{[^\n]{0,20000}?\})\.",
    re.S,
)
_RESPOND_RE = re.compile(r"`\[\[ ## (\w{1,80}) ## \]\]`")
_OBSERVATION_RE = re.compile(r"^observation_\d{1,4}$")
_FINISHED = "Completed."  # the observation dspy records for `finish`
_SCHEMA_NOTE = "adhere to the JSON schema: "
_ONE_OF_NOTE = "one of: "


@dataclass(frozen=True)
class Field:
    name: str
    type: str  # as dspy writes it: "str", "int", "list[str]", "Literal['a', 'b']", a model name
    note: str  # the template's note on the value, "" if none


def is_dspy(turn: Turn) -> bool:
    return COMPLETED in turn.system or COMPLETED in turn.user


def output_fields(system: str, user: str) -> list[Field]:
    """The signature's output fields, in order, with their types and notes."""
    notes = {m.group(1): m.group(2) for m in _NOTE_RE.finditer(system)}
    start = system.find("Your output fields are:")
    end = system.find("All interactions will be structured", max(start, 0))
    if start >= 0:
        block = system[start : end if end > start else len(system)]
        return [
            Field(m.group(1), m.group(2), notes.get(m.group(1), ""))
            for m in _FIELD_LINE_RE.finditer(block)
        ]
    respond = user[user.rfind("Respond with the corresponding output fields") :]
    names = [n for n in _RESPOND_RE.findall(respond) if n != "completed"]
    return [Field(n, "str", notes.get(n, "")) for n in dict.fromkeys(names)]


def input_sections(turn: Turn) -> dict[str, str]:
    """The input fields' sections of the newest user message (dspy's nested trajectory markers
    are not input fields of their own)."""
    sections = field_sections(turn.user)
    start = turn.system.find("Your input fields are:")
    end = turn.system.find("Your output fields are:", max(start, 0))
    if start < 0 or end < 0:
        return sections
    listed = {m.group(1) for m in _FIELD_LINE_RE.finditer(turn.system[start:end])}
    return {k: v for k, v in sections.items() if k in listed}


def dspy_reply(turn: Turn, digest: bytes, embedder: str = "hash") -> str | None:
    """The marked sections answering a dspy prompt, or None when the prompt is not one."""
    if not is_dspy(turn):
        return None
    fields = output_fields(turn.system, turn.user)
    if not fields:
        return None
    values = field_values(turn, fields, digest, embedder)
    parts = [f"[[ ## {f.name} ## ]]\n{values[f.name]}" for f in fields]
    return "\n\n".join([*parts, COMPLETED])


def field_values(turn: Turn, fields: list[Field], digest: bytes, embedder: str) -> dict[str, str]:
    inputs = input_sections(turn)
    said = "\n".join(v for v in inputs.values() if v) or turn.user
    ground = grounding_from(said)
    observations = [
        v
        for k, v in field_sections(turn.user).items()
        if _OBSERVATION_RE.match(k) and v != _FINISHED
    ]
    tool, tool_args = _react_step(turn, said, observations, digest, ground, embedder)
    out: dict[str, str] = {}
    for f in fields:
        if f.name == "next_tool_name" and tool is not None:
            out[f.name] = tool
        elif f.name == "next_tool_args" and tool is not None:
            out[f.name] = json.dumps(tool_args, ensure_ascii=False)
        elif f.name == "next_thought" and tool is not None:
            out[f.name] = (
                "I have what I need to answer."
                if tool == "finish"
                else f"I should call {tool} to find this out."
            )
        else:
            out[f.name] = _value(f, ground, observations, digest)
    return out


def _react_step(
    turn: Turn,
    said: str,
    observations: list[str],
    digest: bytes,
    ground: Grounding,
    embedder: str,
) -> tuple[str | None, dict[str, Any]]:
    """(tool name, its arguments) for a ReAct step, or (None, {}) when this is not one."""
    tools = {m.group(1): (m.group(2), m.group(3)) for m in _TOOL_RE.finditer(turn.system)}
    if not tools:
        return None, {}
    callable_tools = [n for n in tools if n != "finish"]
    if observations or not callable_tools:
        return "finish", {}
    question = said.split("\n", 1)[0] if said else ""
    best = max(
        callable_tools,
        key=lambda n: (fit_score(question, OfferedTool(n, tools[n][0]), embedder), -len(n)),
    )
    try:
        properties = ast.literal_eval(tools[best][1])
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        properties = {}
    if not isinstance(properties, dict):
        properties = {}
    schema = {"type": "object", "properties": properties, "required": list(properties)}
    try:
        args = instance_for(schema, digest + b"react-args", ground)
    except Exception:  # a schema dspy wrote that no instance satisfies: call with no arguments
        args = {}
    return best, args if isinstance(args, dict) else {}


def _value(f: Field, ground: Grounding, observations: list[str], digest: bytes) -> str:
    schema = _note_schema(f.note)
    if schema is not None:
        try:
            return json.dumps(instance_for(schema, digest + f.name.encode(), ground))
        except Exception:  # an unsatisfiable schema: fall back to the type's plain value
            pass
    kind = f.type.strip()
    if f.note.find(_ONE_OF_NOTE) >= 0 or kind.startswith("Literal["):
        options = _options(f)
        if options:
            return options[0]
    if kind in ("int", "float"):
        numbers = ground.numbers_for(f.name)
        number = numbers[0] if numbers else 0
        return str(int(number) if kind == "int" else float(number))
    if kind == "bool":
        return "True"
    if kind.startswith(("list[", "List[")):
        return json.dumps(list(ground.sentences[:3]) or [""], ensure_ascii=False)
    if observations and f.name in ("answer", "response", "output", "result"):
        return " ".join(" ".join(o.split()) for o in observations)[:600]
    if observations and f.name == "reasoning":
        return "The observations answer the question: " + " ".join(observations[-1].split())[:300]
    return _grounded_text(f.name, ground)


def _grounded_text(name: str, ground: Grounding) -> str:
    kind = field_kind(name)
    if kind == "place" and (ground.places or ground.said_names):
        return (ground.places or ground.said_names)[0]
    if kind == "name" and ground.people():
        return ground.people()[0]
    if kind == "date" and ground.latest_date() is not None:
        moment = ground.latest_date()
        assert moment is not None
        return moment.date().isoformat()
    if ground.sentences:
        return ground.sentences[0]
    return "Noted."


def _note_schema(note: str) -> dict[str, Any] | None:
    at = note.find(_SCHEMA_NOTE)
    if at < 0:
        return None
    try:
        schema = json.loads(note[at + len(_SCHEMA_NOTE) :])
    except ValueError:
        return None
    return schema if isinstance(schema, dict) else None


def _options(f: Field) -> list[str]:
    at = f.note.find(_ONE_OF_NOTE)
    if at >= 0:
        return [o.strip() for o in f.note[at + len(_ONE_OF_NOTE) :].split(";") if o.strip()]
    return re.findall(r"'([^'\n]{1,200})'", f.type)
