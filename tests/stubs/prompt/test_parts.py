"""Rules that address parts of a prompt (sections, tags, regex groups) and reply with JSON
templates, driven through the real openai SDK; and the default rules on mem0 2.x's prompt."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import TypeVar

import httpx2
import openai
import pydantic
import pytest

from stubs.rules.context import StubContext
from stubs.rules.replies import ReplyBook, StubsFileError, _parse
from tests.stubs.sdk_transport import StubTransport

# mem0 2.2.1's extraction call, as captured through the record proxy (trimmed): its system
# prompt names the same "## New Messages" heading in its own instructions.
MEM0_SYSTEM = """# ROLE

You are a Memory Extractor — a precise, evidence-bound processor.

# INPUTS

## New Messages
The conversation to extract from.

# OUTPUT FORMAT
Return ONLY valid JSON: {"memory": [{"id": "0", "text": "...", "attributed_to": "user"}]}
"""
MEM0_USER = """## Summary


## Existing Memories
[]

## New Messages
user: My sister Ana lives in Lisbon. She teaches chemistry!
assistant: That sounds lovely.
user: I am allergic to peanuts.


## Observation Date
2026-12-01

# Output:"""


def book(text: str, tmp_path: Path) -> StubContext:
    """The study's stubs file layered on the defaults, as `--stubs FILE` loads it."""
    path = tmp_path / "study.stubs.toml"
    path.write_text(text)
    return StubContext(book=ReplyBook.load(path))


@pytest.fixture
def transport() -> StubTransport:
    return StubTransport("openai")


def sdk(transport: StubTransport) -> openai.OpenAI:
    return openai.OpenAI(
        api_key="x",
        base_url="http://stub/v1",
        http_client=httpx2.Client(transport=transport),
        max_retries=0,
    )


@pytest.fixture
def client(transport: StubTransport) -> Iterator[openai.OpenAI]:
    with sdk(transport) as c:
        yield c


def test_default_rules_turn_mem0s_new_messages_into_clean_memories(client: openai.OpenAI) -> None:
    reply = client.chat.completions.create(
        model="gpt-4.1-nano",
        messages=[
            {"role": "system", "content": MEM0_SYSTEM},
            {"role": "user", "content": MEM0_USER},
        ],
        response_format={"type": "json_object"},
    )
    memory = json.loads(reply.choices[0].message.content or "")["memory"]
    # One memory per sentence the user said; nothing of the prompt, nothing the assistant said.
    assert [m["text"] for m in memory] == [
        "My sister Ana lives in Lisbon.",
        "She teaches chemistry!",
        "I am allergic to peanuts.",
    ]
    assert [m["id"] for m in memory] == ["0", "1", "2"]
    assert {m["attributed_to"] for m in memory} == {"user"}


def test_a_section_with_nothing_said_gives_no_memories(client: openai.OpenAI) -> None:
    reply = client.chat.completions.create(
        model="gpt-4.1-nano",
        messages=[
            {"role": "system", "content": MEM0_SYSTEM},
            {"role": "user", "content": "## New Messages\nassistant: hello\n\n# Output:"},
        ],
        response_format={"type": "json_object"},
    )
    assert json.loads(reply.choices[0].message.content or "") == {"memory": []}


STUDY_RULES = r"""
schema = 1
[[rules]]
name = "tagged"
user_contains = "<ORDER>"
reply = "You ordered: $dish. First word: $first"
[rules.parts]
order = { tag = "ORDER" }
dish = { in = "order", regex = 'dish=(?P<d>[^;]+)', group = "d" }
first = { in = "user", regex = '^(\w+)' }

[[rules]]
name = "listed"
user_contains = "## Items"
[rules.json]
items = [{ "$each" = "lines", n = "$index", text = "$item" }]
all = "$lines"
raw = "$lines_list"
[rules.parts]
lines = { section = "Items", regex = '(?m)^- (.+)$', all = true }
"""


def test_a_template_addresses_a_tag_and_a_named_regex_group(tmp_path: Path) -> None:
    transport = StubTransport("openai", book(STUDY_RULES, tmp_path))
    with sdk(transport) as client:
        reply = client.chat.completions.create(
            model="m",
            messages=[
                {
                    "role": "user",
                    "content": "Hello there <ORDER>table=4; dish=soup du jour; x</ORDER>",
                }
            ],
        )
    assert reply.choices[0].message.content == "You ordered: soup du jour. First word: Hello"


def test_a_json_template_expands_each_item_of_a_list_part(tmp_path: Path) -> None:
    transport = StubTransport("openai", book(STUDY_RULES, tmp_path))
    with sdk(transport) as client:
        reply = client.chat.completions.create(
            model="m",
            messages=[{"role": "user", "content": '## Items\n- "tea"\n- bread\n\n## Other\n- no'}],
        )
    value = json.loads(reply.choices[0].message.content or "")
    assert value["items"] == [{"n": "0", "text": '"tea"'}, {"n": "1", "text": "bread"}]
    assert value["all"] == ['"tea"', "bread"]
    assert json.loads(value["raw"]) == ['"tea"', "bread"]


@pytest.mark.parametrize(
    ("part", "message"),
    [
        ("{ tag = 'X', bogus = 1 }", "unknown keys ['bogus']"),
        ("{ regex = '(' }", "regex does not compile"),
    ],
)
def test_a_mistyped_part_is_refused_naming_it(part: str, message: str) -> None:
    text = f'schema = 1\n[[rules]]\nname = "r"\nreply = "x"\n[rules.parts]\np = {part}\n'
    with pytest.raises(StubsFileError, match=re.escape(message)):
        _parse(text, "study.stubs.toml")


# graphiti-core 0.31's node dedupe prompt (trimmed): its worked example lists candidate_id 0.
NODE_DEDUPE = """<ENTITIES>
[{"id": 0, "name": "Ana", "entity_type": ["Entity"]},
 {"id": 1, "name": "Miso", "entity_type": ["Entity"]}]
</ENTITIES>
<EXISTING ENTITIES>
[{"candidate_id": 0, "name": "Ana's cat", "entity_types": ["Entity"]}]
</EXISTING ENTITIES>
<EXAMPLE>
EXISTING ENTITIES: [{"candidate_id": 0, "name": "Sam", "entity_types": ["Person"]}]
</EXAMPLE>"""


class Resolution(pydantic.BaseModel):
    id: int
    name: str
    duplicate_candidate_id: int


class NodeResolutions(pydantic.BaseModel):
    entity_resolutions: list[Resolution]


Parsed = TypeVar("Parsed", bound=pydantic.BaseModel)


def graphiti_parse(client: openai.OpenAI, prompt: str, model: type[Parsed]) -> Parsed:
    """A prompt sent as graphiti-core sends it (responses.parse, strict json_schema)."""
    parsed = client.responses.parse(
        model="gpt-4.1-mini", input=prompt, text_format=model
    ).output_parsed
    assert parsed is not None
    return parsed


def test_default_rules_resolve_graphitis_entities_as_new_by_id_and_name(
    client: openai.OpenAI,
) -> None:
    parsed = graphiti_parse(client, NODE_DEDUPE, NodeResolutions)
    assert [(r.id, r.name, r.duplicate_candidate_id) for r in parsed.entity_resolutions] == [
        (0, "Ana", -1),
        (1, "Miso", -1),
    ]


# graphiti-core 0.31's entity extraction prompt (trimmed): a LongMemEval-like session whose
# capitals are mostly sentence openers.
EXTRACT_ENTITIES = """<ENTITY TYPES>
[{"entity_type_id": 0, "entity_type_name": "Entity"}]
</ENTITY TYPES>
<CURRENT MESSAGE>
user: I just adopted a puppy named Waffles from the Riverside Animal Shelter.
assistant: Congratulations! Keep treats handy. Enjoy the walks.
user: Thanks. My partner Tom signed him up at PetSmart.
</CURRENT MESSAGE>"""


class ExtractedEntity(pydantic.BaseModel):
    name: str
    entity_type_id: int
    episode_indices: list[int]


class ExtractedEntities(pydantic.BaseModel):
    extracted_entities: list[ExtractedEntity]


def test_default_rules_extract_graphitis_speakers_and_the_names_said(
    client: openai.OpenAI,
) -> None:
    parsed = graphiti_parse(client, EXTRACT_ENTITIES, ExtractedEntities)
    assert [e.name for e in parsed.extracted_entities] == [
        "user",
        "assistant",
        "Waffles",
        "Riverside Animal Shelter",
        "Tom",
        "PetSmart",
    ]
