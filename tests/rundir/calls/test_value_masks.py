"""Value masks: regexes inside string values (a date, a uuid) masked from the request hash, the
rest of the string still hashed; through a real `harness proxy serve` and the openai SDK."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.checks.masks import check_masks
from harness.errors import HarnessError
from rundir.calls.masking import mask_body, request_hash
from rundir.calls.value_masks import MaskError, parse_value_mask
from tests.proxy.proxy_process import ProxyProcess

pytestmark = pytest.mark.integration

# mem0 2.x's extraction input carries the day it runs on.
MEM0_INPUT = "## New Messages\nuser: {said}\n\n## Observation Date\n{day}\n\n## Current Date\n{day}"


def body(said: str, day: str) -> dict[str, object]:
    return {
        "model": "gpt-4.1-nano",
        "messages": [
            {"role": "system", "content": "You are a Memory Extractor. Reply in JSON."},
            {"role": "user", "content": MEM0_INPUT.format(said=said, day=day)},
        ],
    }


def test_a_date_mask_hides_the_date_and_keeps_the_words() -> None:
    masks = ["messages.*.content~date"]
    monday = request_hash("POST", "r", body("I like tea.", "2026-12-01"), b"", masks)
    tuesday = request_hash("POST", "r", body("I like tea.", "2026-12-02"), b"", masks)
    other_words = request_hash("POST", "r", body("I like coffee.", "2026-12-01"), b"", masks)
    assert monday == tuesday != other_words
    # Without the mask the day is part of the request, as before.
    assert request_hash("POST", "r", body("I like tea.", "2026-12-01"), b"", []) != (
        request_hash("POST", "r", body("I like tea.", "2026-12-02"), b"", [])
    )


def test_a_masked_value_shows_where_text_was_taken_out_and_the_original_is_kept() -> None:
    original = {
        "input": "run 3f2c1a9e-0b4d-4e5f-8a6b-7c8d9e0f1a2b at 2026-12-01T10:00:00Z",
        "n": [1],
    }
    masked = mask_body(original, ["~uuid", "input~datetime"])
    assert masked == {"input": "run <masked:uuid> at <masked:datetime>", "n": [1]}
    assert original["input"].startswith("run 3f2c")


UUID = "4f0c1a9e-0b4d-4e5f-8a6b-7c8d9e0f1a2b"


@pytest.mark.parametrize(
    ("text", "masked"),
    [
        # langmem names a session in a tag; `_` is a word character, so `\b` saw no edge here.
        (f"<session_{UUID}>", "<session_<masked:uuid>>"),
        (f"id_{UUID}_end", "id_<masked:uuid>_end"),
        (f"run-{UUID}.", "run-<masked:uuid>."),
        (f"{UUID}", "<masked:uuid>"),
        # Python's uuid.hex, as trustcall (under langmem) writes a memory's id into its prompt.
        ('<instance id=ac2a7d4b4c5459ccabc79725463ea5a0 schema_type="Memory">',
         '<instance id=<masked:uuid> schema_type="Memory">'),
        # 32 hex digits without a uuid's version and variant digits are not one (a digest).
        ("md5 0123456789abcdef0123456789abcdef", "md5 0123456789abcdef0123456789abcdef"),
        # Inside a longer run of letters or hex digits it is not a uuid of its own: kept.
        (f"x{UUID}", f"x{UUID}"),
        (f"{UUID}0", f"{UUID}0"),
    ],
)  # fmt: skip
def test_the_uuid_mask_finds_a_uuid_after_an_underscore_or_inside_a_tag(
    text: str, masked: str
) -> None:
    assert mask_body({"s": text}, ["~uuid"]) == {"s": masked}


def test_the_time_masks_find_a_value_after_an_underscore_and_not_inside_a_number() -> None:
    body = {"s": "ts_1700000000 at_10:30 21700000000 2026-12-01T10:30"}
    assert mask_body(body, ["~unix_time", "~time"]) == {
        "s": "ts_<masked:unix_time> at_<masked:time> 21700000000 2026-12-01T10:30"
    }


def test_a_study_regex_masks_only_under_its_path() -> None:
    data = {"a": ["req_00ff00ff00ff00ff ok"], "b": "req_00ff00ff00ff00ff"}
    masked = mask_body(data, ["a.*=~req_[0-9a-f]{16}"])
    assert masked == {"a": ["<masked:re> ok"], "b": "req_00ff00ff00ff00ff"}


@pytest.mark.parametrize(
    ("mask", "message"),
    [
        ("input~when", "no pattern named 'when'"),
        ("input=~(", "the regex does not compile"),
        ("input=~x*", "matches the empty string"),
    ],
)
def test_an_unusable_mask_is_a_one_line_user_error(mask: str, message: str) -> None:
    with pytest.raises(MaskError, match=message):
        parse_value_mask(mask)
    with pytest.raises(HarnessError) as caught:
        check_masks([mask])
    assert message in caught.value.message and "\n" not in caught.value.message


def test_the_proxy_hashes_two_days_of_mem0_prompts_the_same(tmp_path: Path) -> None:
    proxy = ProxyProcess(tmp_path / "run", "--mask", "messages.*.content~date")
    try:
        client = proxy.openai()
        for said, day in [
            ("I like tea.", "2026-12-01"),
            ("I like tea.", "2026-12-02"),
            ("I like coffee.", "2026-12-02"),
        ]:
            client.chat.completions.create(**body(said, day))  # type: ignore[call-overload]
    finally:
        proxy.stop()
    hashes = [
        json.loads(line)["request_hash"]
        for line in (tmp_path / "run" / "calls.jsonl").read_text().splitlines()
    ]
    assert hashes[0] == hashes[1] != hashes[2]
