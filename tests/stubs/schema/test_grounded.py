"""stubs.schema.grounded: what the walker takes from the request's text, per JSON path."""

from __future__ import annotations

from stubs.prompt.grounding import grounding_of
from stubs.schema.grounded import Grounder, clean_path, field_name, item_index, object_path

TEXT = "user: Ana met Rui in Porto on 2024-05-01. Ana lives in Lisbon."


def grounder(text: str = TEXT) -> Grounder:
    body = {"model": "m", "input": [{"role": "user", "content": text}]}
    return Grounder(grounding_of(body))


def test_paths_lose_the_walkers_branch_markers() -> None:
    path = "$.edges#anyOf0[1]~2.fact"
    assert clean_path(path) == "$.edges[1]~2.fact"
    assert field_name(path) == "fact"
    assert field_name("$.names[3]") == "names"
    assert object_path(path) == "$.edges[1]~2"
    assert item_index(path) == 1
    assert item_index("$") is None


def test_names_go_once_each_to_items_and_the_second_name_differs() -> None:
    g = grounder()
    first = g.string({"type": "string"}, "$.entities[0].name")
    second = g.string({"type": "string"}, "$.entities[1].name")
    assert first and second and first != second
    source = g.remember("$.edges[0].source_name", first)
    target = g.string({"type": "string"}, "$.edges[0].target_name")
    assert target is not None and target != source


def test_dates_come_from_the_text_and_formats_other_than_dates_do_not() -> None:
    g = grounder()
    assert g.string({"type": "string", "format": "date"}, "$.valid_at") == "2024-05-01"
    assert g.string({"type": "string", "format": "email"}, "$.contact") is None


def test_without_material_nothing_is_grounded() -> None:
    g = Grounder(None)
    assert g.ground is None
    assert g.string({"type": "string"}, "$.name") is None
    assert not g.ends_open("$.invalid_at")


def test_an_end_date_stays_open_when_grounded() -> None:
    assert grounder().ends_open("$.edges[0].invalid_at")
    assert not grounder().ends_open("$.edges[0].valid_at")
