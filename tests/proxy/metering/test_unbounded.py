"""Which inputs the request's bytes do not bound, found in hostile bodies without crashing."""

from __future__ import annotations

import json
from typing import Any

import pytest

from proxy.metering.unbounded import INLINE_IMAGE_TOKENS, MAX_NODES, unbounded_inputs

PNG = "iVBORw0KGgo="


def _user(*blocks: dict[str, Any]) -> dict[str, Any]:
    return {"model": "m", "messages": [{"role": "user", "content": list(blocks)}]}


@pytest.mark.parametrize(
    "body",
    [
        _user({"type": "document", "source": {"type": "url", "url": "https://x.test/a.pdf"}}),
        _user({"type": "image", "source": {"type": "url", "url": "https://x.test/a.png"}}),
        _user({"type": "document", "source": {"type": "file", "file_id": "file_011"}}),
        _user({"type": "document", "source": {"type": "base64", "data": "JVBERi0="}}),
        _user({"type": "image_url", "image_url": {"url": "https://x.test/cat.png"}}),
        _user({"type": "file", "file": {"file_id": "file-abc"}}),
        _user({"type": "file", "file": {"file_data": "data:application/pdf;base64,JVBE"}}),
        _user({"type": "input_audio", "input_audio": {"data": "UklGR", "format": "wav"}}),
        {
            "model": "m",
            "input": [{"role": "user", "content": [{"type": "input_file", "file_id": "f"}]}],
        },
        {"model": "m", "input": [{"type": "input_file", "file_url": "https://x.test/a.pdf"}]},
        {"model": "m", "input": [{"type": "input_image", "image_url": "HTTPS://x.test/a.png"}]},
        {"model": "m", "input": "go on", "previous_response_id": "resp_1"},
        {"model": "m", "input": "go on", "prompt": {"id": "pmpt_1"}},
        # Nested inside a tool result, where a walk of `messages[*].content` alone would miss it.
        _user(
            {
                "type": "tool_result",
                "tool_use_id": "t",
                "content": [
                    {"type": "document", "source": {"type": "url", "url": "https://x.test/b.pdf"}}
                ],
            }
        ),
    ],
)
def test_input_by_reference_is_unbounded(body: dict[str, Any]) -> None:
    assert unbounded_inputs(body).unbounded


def test_text_and_inline_images_are_bounded_with_an_allowance_per_image() -> None:
    body = _user(
        {"type": "text", "text": "see https://x.test/a.pdf"},  # a URL in text fetches nothing
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}},
        {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}"}},
        {"type": "document", "source": {"type": "text", "data": "plain text"}},
    )
    found = unbounded_inputs(body)
    assert found.unbounded == []
    assert found.extra_tokens == 2 * INLINE_IMAGE_TOKENS


def test_a_hostile_body_never_crashes_the_walk() -> None:
    deep: Any = {"type": "document", "source": {"type": "url"}}
    for _ in range(100_000):  # deeper than any recursion limit
        deep = [deep]
    odd = {
        "source": [],
        "image_url": {"url": 12},
        "file_id": None,
        "type": {"a": 1},
        "x": [1.5, None, True, "s", 10**50],
    }
    found = unbounded_inputs({"messages": [odd, deep]})
    assert "a document by url (source.type)" in found.unbounded
    harmless: list[Any] = [None, 7, "str", [], [[[]]], {"source": {"type": []}}]
    for body in harmless:
        assert unbounded_inputs(body).unbounded == []


def test_a_body_too_large_to_walk_is_unbounded() -> None:
    wide = json.loads("[" + ",".join(["{}"] * (MAX_NODES + 1)) + "]")
    assert unbounded_inputs(wide).unbounded
