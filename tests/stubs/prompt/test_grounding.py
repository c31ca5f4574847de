"""Schema instances grounded in the request: names, sentences, dates and indices from its text."""

from __future__ import annotations

import json
import time
from typing import Any

import pydantic
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stubs.prompt.grounding import grounding_of
from stubs.schema.instance import instance_for
from tests.stubs.schema.test_instance import assert_valid, schemas

# The shape graphiti-core 0.31 sends (its prompts, trimmed): a tagged message, an entity list
# written as JSON, a reference time, and worked examples with dates of their own.
EDGE_PROMPT = """
<CURRENT_MESSAGE>
user: My sister Ana lives in Lisbon and teaches chemistry.
</CURRENT_MESSAGE>
<ENTITIES>
[{"name": "Ana", "entity_types": ["Entity"]}, {"name": "Lisbon", "entity_types": ["Entity"]}]
</ENTITIES>
<REFERENCE_TIME>
2024-05-01 10:00:00+00:00
</REFERENCE_TIME>
Examples with REFERENCE_TIME 2020-01-01T00:00:00Z: use ISO 8601 (e.g., 2025-04-30T00:00:00Z).
"""
ENTITY_TYPES_PROMPT = """<ENTITY TYPES>
[{'entity_type_id': 0, 'entity_type_name': 'Entity'},
 {'entity_type_id': 1, 'entity_type_name': 'Person'}]
</ENTITY TYPES>
<CURRENT MESSAGE>
user: Ana adopted a cat named Miso in Porto.
</CURRENT MESSAGE>"""


def body(text: str) -> dict[str, Any]:
    return {"model": "m", "input": [{"role": "user", "content": text}]}


class Edge(pydantic.BaseModel):
    source_entity_name: str
    target_entity_name: str
    fact: str
    valid_at: str | None
    invalid_at: str | None


class Edges(pydantic.BaseModel):
    edges: list[Edge]


class Entity(pydantic.BaseModel):
    name: str
    entity_type_id: int
    episode_indices: list[int]


class Entities(pydantic.BaseModel):
    extracted_entities: list[Entity]


def test_edge_names_facts_and_dates_come_from_the_prompt() -> None:
    grounding = grounding_of(body(EDGE_PROMPT))
    value = Edges.model_validate(instance_for(Edges.model_json_schema(), b"d" * 32, grounding))
    assert value.edges, "the text has material: the list must not be empty"
    for edge in value.edges:
        assert {edge.source_entity_name, edge.target_entity_name} == {"Ana", "Lisbon"}
        assert edge.fact == "My sister Ana lives in Lisbon and teaches chemistry."
        # The prompt's own clock, not its examples' dates and not the machine's.
        assert edge.valid_at == "2024-05-01T10:00:00Z"
        assert edge.invalid_at is None  # no end stated: a made-up one would expire the fact


def test_entity_names_are_the_names_the_message_says_and_ids_stay_in_range() -> None:
    grounding = grounding_of(body(ENTITY_TYPES_PROMPT))
    for i in range(8):
        value = Entities.model_validate(
            instance_for(Entities.model_json_schema(), bytes([i]) * 32, grounding)
        )
        names = [e.name for e in value.extracted_entities]
        assert names == ["Ana", "Miso", "Porto"]
        for entity in value.extracted_entities:
            assert entity.entity_type_id in (0, 1)
            assert entity.episode_indices and all(x == 0 for x in entity.episode_indices)


def test_a_listed_name_with_an_apostrophe_is_one_name() -> None:
    prompt = """<CURRENT_MESSAGE>
user: We walked the Philosopher's Path in Kyoto.
</CURRENT_MESSAGE>
<ENTITIES>
[{"name": "Philosopher's Path"}, {"name": "Kyoto"}]
</ENTITIES>"""
    assert grounding_of(body(prompt)).listed_names == ("Philosopher's Path", "Kyoto")


class Summary(pydantic.BaseModel):
    name: str
    summary: str


class Summaries(pydantic.BaseModel):
    summaries: list[Summary]


def test_summaries_of_messages_listed_as_json_are_their_sentences() -> None:
    # graphiti's summary prompt (trimmed): the episodes as JSON, whose newlines are escapes.
    episodes = [{"content": "user: I adopted Waffles.\nassistant: Lovely.\nuser: He is a beagle."}]
    prompt = f"""<MESSAGES>
{json.dumps(episodes)}
</MESSAGES>
<ENTITIES>
[{{"name": "Waffles", "summary": ""}}]
</ENTITIES>"""
    value = Summaries.model_validate(
        instance_for(Summaries.model_json_schema(), b"s" * 32, grounding_of(body(prompt)))
    )
    assert value.summaries
    for item in value.summaries:
        assert item.summary in ("I adopted Waffles.", "He is a beagle."), item.summary


def test_index_fields_stay_in_the_prompts_range() -> None:
    prompt = 'EXISTING FACTS: [{"idx": 0, "fact": "a b"}, {"idx": 1, "fact": "c d"}]'
    schema = {
        "type": "object",
        "properties": {
            "duplicate_facts": {
                "description": "List of idx values of duplicate facts. Empty list if none.",
                "type": "array",
                "items": {"type": "integer"},
            },
            "entity_type_id": {"type": "integer"},
        },
        "required": ["duplicate_facts", "entity_type_id"],
    }
    for i in range(10):
        value = instance_for(schema, bytes([i]) * 32, grounding_of(body(prompt)))
        assert value["duplicate_facts"] and set(value["duplicate_facts"]) <= {0, 1}
        assert value["entity_type_id"] == 0  # an id with no list of its own: the first index


def test_enums_and_formats_stay_valid_when_grounded() -> None:
    schema = {
        "type": "object",
        "properties": {
            "kind": {"enum": ["LIVES_IN", "WORKS_AT"]},
            "hostname": {"type": "string", "format": "hostname"},
            "email": {"type": "string", "format": "email"},
            "when": {"type": "string", "format": "date"},
        },
        "required": ["kind", "hostname", "email", "when"],
    }
    value = instance_for(schema, b"e" * 32, grounding_of(body(EDGE_PROMPT)))
    assert_valid(schema, value)
    assert value["when"] == "2024-05-01"


def test_without_material_the_instance_is_the_ungrounded_one() -> None:
    schema = Entities.model_json_schema()
    assert instance_for(schema, b"f" * 32, grounding_of(body(""))) == instance_for(
        schema, b"f" * 32
    )


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(schema=schemas, digest=st.binary(min_size=32, max_size=32))
def test_grounded_instances_of_drawn_schemas_are_valid(schema: Any, digest: bytes) -> None:
    grounding = grounding_of(body(EDGE_PROMPT))
    instance = instance_for(schema, digest, grounding)
    assert_valid(schema, instance)
    assert json.dumps(instance_for(schema, digest, grounding)) == json.dumps(instance)


@pytest.mark.parametrize(
    "hostile",
    [
        " " * 1_000_000,
        "A" * 1_000_000,
        "Ab " * 300_000,
        "<CURRENT MESSAGE>" * 60_000,
        "<REFERENCE_TIME>" * 60_000,
        "# date " * 150_000,
        '"name": "' * 100_000,
        "x" * 500_000 + ": 1",
        "user:" + " " * 500_000,
    ],
    ids=[
        "spaces",
        "one-word",
        "words",
        "open-tags",
        "clock-tags",
        "heading",
        "names",
        "key",
        "speaker",
    ],
)
def test_a_hostile_prompt_costs_no_more_than_a_moment(hostile: str) -> None:
    # Arm-sent text: every pattern must stay linear (a quadratic one took minutes on 20,000
    # spaces). Measured in this thread's CPU time, which a busy machine does not stretch (wall
    # time did: 4.5 s at load 15 on 2 cores), against a quadratic pattern's minutes.
    started = time.thread_time()
    grounding = grounding_of(body(hostile))
    instance_for(Edges.model_json_schema(), b"h" * 32, grounding)
    assert time.thread_time() - started < 3.0
