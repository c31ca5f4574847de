"""stubs.formats.dspy_protocol: dspy's field-marker protocol answered field by field, typed and
grounded."""

from __future__ import annotations

import json

from stubs.formats.dspy_protocol import COMPLETED, dspy_reply, output_fields
from stubs.prompt.conversation import Turn

SYSTEM = """Your input fields are:
1. `text` (str):
Your output fields are:
1. `person` (P):
2. `facts` (list[str]):
3. `ok` (bool):
4. `mood` (Literal['calm', 'angry']):
5. `score` (float):
All interactions will be structured in the following way, with the appropriate values filled in.

[[ ## person ## ]]
{person}        # note: the value you produce must adhere to the JSON schema: {"type": "object", \
"properties": {"age": {"type": "integer"}, "name": {"type": "string"}}, "required": ["name", "age"]}

[[ ## mood ## ]]
{mood}        # note: the value you produce must exactly match (no extra characters) one of: \
calm; angry

[[ ## completed ## ]]"""
USER = """[[ ## text ## ]]
Lena is 34 years old and lives in Porto. She scored 7.5 points.

Respond with the corresponding output fields, starting with the field `[[ ## person ## ]]`."""


def sections(reply: str) -> dict[str, str]:
    parts = reply.split("[[ ## ")[1:]
    return {p.split(" ## ]]")[0]: p.split(" ## ]]\n", 1)[-1].strip() for p in parts}


def test_every_output_field_in_order_with_a_value_of_its_type() -> None:
    turn = Turn(SYSTEM, USER, (), (), ())
    assert [f.name for f in output_fields(SYSTEM, USER)] == [
        "person",
        "facts",
        "ok",
        "mood",
        "score",
    ]
    reply = dspy_reply(turn, b"d" * 32)
    assert reply is not None and reply.endswith(COMPLETED)
    got = sections(reply)
    assert list(got) == ["person", "facts", "ok", "mood", "score", "completed"]
    assert json.loads(got["person"]) == {"name": "Lena", "age": 34}
    assert json.loads(got["facts"])[0] == "Lena is 34 years old and lives in Porto."
    assert (got["ok"], got["mood"], got["score"]) == ("True", "calm", "7.5")


def test_without_the_system_list_the_closing_instruction_names_the_fields() -> None:
    user = (
        "[[ ## q ## ]]\nHi\n\nRespond with the corresponding output fields, starting with the "
        "field `[[ ## answer ## ]]`, and then ending with the marker for `[[ ## completed ## ]]`."
    )
    reply = dspy_reply(Turn("", user, (), (), ()), b"d" * 32)
    assert reply is not None and list(sections(reply)) == ["answer", "completed"]


def test_a_prompt_without_the_protocol_is_not_answered_in_it() -> None:
    assert dspy_reply(Turn("Be brief.", "Hello [[ ## x ## ]]", (), (), ()), b"d" * 32) is None
