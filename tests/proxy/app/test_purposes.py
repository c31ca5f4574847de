"""The study's `[purposes]` rules: a call without an X-Harness-Purpose header gets the purpose of
the first rule its route and model match, else its route's default; a header always wins."""

from __future__ import annotations

from pathlib import Path

import pytest
from mitmproxy import exceptions

from harness.errors import HarnessError
from harness.study import load_study
from rundir.control.proxy_file import ProxySettings, PurposeRule, rule_purpose
from tests.proxy.addon_kit import HAIKU, addon_context

RULES = [
    PurposeRule(purpose="utility", route="openai.chat", model="gpt-4.1-nano*"),
    PurposeRule(purpose="judge", model="claude-*"),
]
CHAT = "/openai/v1/chat/completions"
HELLO = [{"role": "user", "content": "hi"}]


async def test_a_call_is_logged_with_its_rules_purpose(tmp_path: Path) -> None:
    rules = ProxySettings(purposes=RULES).addon_options()["harness_purposes"]
    async with addon_context(tmp_path, harness_purposes=rules) as kit:
        await kit.call(CHAT, {"model": "gpt-4.1-nano-2025-04-14", "messages": HELLO})
        await kit.call(CHAT, {"model": "gpt-4.1", "messages": HELLO})  # no rule: the default
        await kit.call("/openai/v1/embeddings", {"model": "gpt-4.1-nano", "input": "x"})
        anthropic = {"model": HAIKU, "max_tokens": 8, "messages": HELLO}
        await kit.call("/anthropic/v1/messages", anthropic)  # the second rule, by model alone
        headed = {"model": "gpt-4.1-nano", "messages": HELLO}
        await kit.call(CHAT, headed, headers={"x-harness-purpose": "guard"})  # the arm's word
    purposes = [call["purpose"] for call in kit.calls()]
    assert purposes == ["utility", "main", "embedding", "judge", "guard"]


async def test_a_rule_that_is_not_a_rule_is_refused_at_configure_time(tmp_path: Path) -> None:
    with pytest.raises(exceptions.OptionsError, match="harness_purposes entry"):
        async with addon_context(tmp_path, harness_purposes=['{"route": "openai.chat"}']):
            pass


def test_the_first_matching_rule_wins_and_route_and_model_must_both_match() -> None:
    both = [PurposeRule(purpose="a", route="openai.chat"), PurposeRule(purpose="b", model="m")]
    assert rule_purpose(both, "openai.chat", "m") == "a"
    assert rule_purpose(both, "openai.embeddings", "m") == "b"
    assert rule_purpose(RULES, "openai.embeddings", "gpt-4.1-nano") is None
    assert rule_purpose(RULES, "openai.chat", None) is None  # a model rule needs a model


def test_the_study_passes_its_rules_in_file_order(tmp_path: Path) -> None:
    study = _study(
        tmp_path,
        '[purposes.utility]\nroute = "openai.chat"\nmodel = "gpt-4.1-nano*"\n'
        '[purposes.judge]\nmodel = "claude-*"\n',
    )
    assert load_study(study).purpose_rules() == RULES


@pytest.mark.parametrize(
    ("table", "says"),
    [
        ("[purposes.utility]\n", "route"),  # a rule of neither would take every call
        ('[purposes."no spaces"]\nroute = "openai.chat"\n', "letters, digits"),
        ('[purposes.utility]\nroutes = "openai.chat"\n', "routes"),
    ],
)
def test_a_bad_rule_is_named_before_anything_starts(tmp_path: Path, table: str, says: str) -> None:
    with pytest.raises(HarnessError, match=says):
        load_study(_study(tmp_path, table))


def _study(tmp_path: Path, purposes: str) -> Path:
    (tmp_path / "items.jsonl").write_text(
        '{"id": "i1", "clock": "2024-05-01T10:00:00", "turns": [{"user": "hello"}]}\n'
    )
    study = tmp_path / "study.toml"
    study.write_text(
        'name = "p"\nitems = "items.jsonl"\n[arms.bare]\ncommand = "python -m arms.bare"\n'
        + purposes
    )
    return study
