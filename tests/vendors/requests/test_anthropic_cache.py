"""vendors.requests.anthropic_cache: each cache breakpoint writes the prompt up to it to the cache
of its lifetime, a top-level mark caches the whole prompt, and what the vendor refuses (a fifth
mark, an unknown type or ttl) is refused with its 400."""

from __future__ import annotations

from typing import Any

import pytest

from vendors.errors import VendorRequestError
from vendors.requests.anthropic_cache import cache_writes, check_cache_control
from vendors.tokens import estimate_input_tokens

FIVE_MIN = {"type": "ephemeral"}
ONE_HOUR = {"type": "ephemeral", "ttl": "1h"}
# The fields a Messages request's input is counted from (as stubs/anthropic/messages.py counts).
INPUT = ("system", "messages", "tools")
TOOL = {"name": "lookup", "description": "find a fact " * 20, "input_schema": {"type": "object"}}


def _body(**extra: Any) -> dict[str, Any]:
    return {
        "model": "claude-haiku-4-5",
        "max_tokens": 64,
        "system": [{"type": "text", "text": "You keep notes. " * 40, "cache_control": FIVE_MIN}],
        "messages": [{"role": "user", "content": "What did I say about the lighthouse?"}],
        **extra,
    }


def test_each_mark_writes_the_prompt_up_to_it_at_its_lifetime() -> None:
    body = _body(tools=[{**TOOL, "cache_control": ONE_HOUR}])
    total = estimate_input_tokens(body, INPUT)
    five, hour = cache_writes(body, total)
    # Tools come first in cache order: the 1h mark caches the tool, the 5m one the system after it.
    assert 0 < hour < five
    assert five + hour < total  # the message after the last mark is not cached


def test_a_top_level_mark_caches_the_whole_prompt() -> None:
    body = _body(cache_control=FIVE_MIN)
    body["system"] = "You keep notes."
    total = estimate_input_tokens(body, INPUT)
    assert cache_writes(body, total) == (total, 0)


def test_no_mark_writes_nothing_and_writes_never_exceed_the_input() -> None:
    body = _body()
    body["system"] = "plain"
    assert cache_writes(body, estimate_input_tokens(body, INPUT)) == (0, 0)
    assert sum(cache_writes(_body(), 5)) <= 5


def test_a_fifth_mark_is_refused() -> None:
    blocks = [{"type": "text", "text": f"part {i}", "cache_control": FIVE_MIN} for i in range(5)]
    with pytest.raises(VendorRequestError, match="A maximum of 4 blocks") as refused:
        cache_writes(_body(system=blocks), 100)
    assert refused.value.status == 400


@pytest.mark.parametrize(
    ("mark", "says"),
    [
        ({"type": "persistent"}, "type: Input should be 'ephemeral'"),
        ({**FIVE_MIN, "ttl": "2h"}, "ttl"),
    ],
)
def test_a_mark_the_vendor_does_not_know_is_refused(mark: dict[str, Any], says: str) -> None:
    with pytest.raises(VendorRequestError, match=says):
        check_cache_control(mark, "system.0")
    check_cache_control(None, "system.0")
