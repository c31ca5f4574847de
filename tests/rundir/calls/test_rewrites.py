"""`as_sent`: a logged request rebuilt as it went out from the arm's body and its rewrites."""

from __future__ import annotations

from rundir.calls.calllog import Rewrite
from rundir.calls.rewrites import as_sent


def test_sets_nested_fields_drops_removed_ones_and_leaves_the_arms_body_alone() -> None:
    body = {"model": "m", "temperature": 0.9, "top_k": 5, "output_config": {"format": "x"}}
    rewrites = [
        Rewrite(field="temperature", before=0.9, after=0.0),
        Rewrite(field="top_k", before=5, after=None),
        Rewrite(field="output_config.effort", before=None, after="low"),
        Rewrite(field="stream_options.include_usage", before=None, after=True),
    ]
    sent = as_sent(body, rewrites)
    assert sent == {
        "model": "m",
        "temperature": 0.0,
        "output_config": {"format": "x", "effort": "low"},
        "stream_options": {"include_usage": True},
    }
    assert body == {"model": "m", "temperature": 0.9, "top_k": 5, "output_config": {"format": "x"}}


def test_no_rewrites_is_an_equal_copy() -> None:
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
    sent = as_sent(body, [])
    assert sent == body and sent is not body and sent["messages"] is not body["messages"]
