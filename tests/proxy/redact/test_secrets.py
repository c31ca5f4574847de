"""proxy.redact.secrets: every configured secret is replaced, however the bytes are cut or
written."""

from __future__ import annotations

import base64
import json
import random
import re
from urllib.parse import quote

import pytest

from proxy.redact.secrets import MIN_SECRET_LENGTH, SecretRedactor
from tests.proxy.redact.study_keys import ANT, CO, OAI, SECRETS, VOY, no_secret


def test_each_secret_is_replaced_by_its_named_marker(redactor: SecretRedactor) -> None:
    body = json.dumps({"error": {"message": f"Incorrect API key provided: {OAI}."}}).encode()
    out, hits = redactor.redact(body)
    assert hits == 1
    assert json.loads(out) == {
        "error": {"message": "Incorrect API key provided: [redacted:OPENAI_API_KEY]."}
    }
    many = " | ".join(SECRETS.values()).encode()
    out, hits = redactor.redact(many)
    assert hits == 4
    assert out == (
        b"[redacted:ANTHROPIC_API_KEY] | [redacted:OPENAI_API_KEY] | [redacted:CO_API_KEY] | "
        b"[redacted:VOYAGE_API_KEY]"
    )


def test_text_without_a_secret_is_returned_unchanged(redactor: SecretRedactor) -> None:
    text = b'data: {"delta":{"text":"sk-ant is how keys start; \\\\u0041 %41"}}\n\n'
    assert redactor.redact(text) == (text, 0)
    stream = redactor.stream()
    assert stream.feed(text) == text and stream.held == 0  # an SSE event goes out at once


def test_markers_are_deterministic(redactor: SecretRedactor) -> None:
    body = f"a {ANT} b {ANT} c {CO}".encode()
    first = redactor.redact(body)
    assert first == SecretRedactor(dict(reversed(list(SECRETS.items())))).redact(body)
    assert first == redactor.redact(body)
    assert first[0] == b"a [redacted:ANTHROPIC_API_KEY] b [redacted:ANTHROPIC_API_KEY] c " + (
        b"[redacted:CO_API_KEY]"
    )


def test_a_stream_split_at_every_offset_gives_the_whole_body_result(
    redactor: SecretRedactor,
) -> None:
    body = (
        b'event: content_block_delta\ndata: {"delta":{"text":"key '
        + ANT.encode()
        + b" and "
        + OAI.encode()
        + b'"}}\n\n'
    )
    whole, _ = redactor.redact(body)
    for cut in range(len(body) + 1):
        stream = redactor.stream()
        out = stream.feed(body[:cut])
        out += stream.feed(body[cut:])
        out += stream.finish()
        assert out == whole, cut
        assert stream.hits == 2


def test_a_stream_in_random_pieces_and_byte_by_byte(redactor: SecretRedactor) -> None:
    rng = random.Random(8)
    body = b"".join(
        rng.choice([b"x" * rng.randint(0, 30), s.encode(), b"\n\n", b"sk-", b"%73"])
        for s in rng.choices(list(SECRETS.values()), k=60)
    )
    whole, hits = redactor.redact(body)
    no_secret(whole)
    for trial in range(20):
        stream = redactor.stream()
        out, at = b"", 0
        while at < len(body):
            step = 1 if trial == 0 else rng.randint(1, 50)
            out += stream.feed(body[at : at + step])
            at += step
            assert stream.held <= redactor.max_length - 1
        out += stream.finish()
        assert (out, stream.hits) == (whole, hits)


def test_the_held_tail_is_at_most_a_possible_secret_start(redactor: SecretRedactor) -> None:
    stream = redactor.stream()
    assert stream.feed(b"hello " + ANT[:10].encode()) == b"hello "
    assert stream.held == 10
    # A cut stream never calls finish(): the partial key was never released.
    plain = SecretRedactor({"K": "abcdefghij"})
    tail = plain.stream()
    assert tail.feed(b"..abcdefghi") == b".." and tail.held == len("abcdefghi")
    assert tail.finish() == b"abcdefghi"  # not a secret after all: released at the end


@pytest.mark.parametrize(
    "form",
    [
        # JSON escapes: all, every other character, upper-case hex, escaped slash
        "".join(f"\\u{ord(c):04x}" for c in VOY),
        "".join(f"\\u{ord(c):04X}" if i % 2 else c for i, c in enumerate(VOY)),
        VOY.replace("/", "\\/"),
        # URL-encoded: whole, and the usual partial form (only reserved characters)
        "".join(f"%{ord(c):02X}" for c in VOY),
        quote(VOY, safe=""),
    ],
)
def test_escaped_and_url_encoded_forms_are_found(redactor: SecretRedactor, form: str) -> None:
    assert form != VOY
    body = f'{{"text":"before {form} after"}}'.encode()
    out, hits = redactor.redact(body)
    assert hits == 1
    assert json.loads(out)["text"] == "before [redacted:VOYAGE_API_KEY] after"
    for cut in range(len(body) + 1):
        stream = redactor.stream()
        assert stream.feed(body[:cut]) + stream.feed(body[cut:]) + stream.finish() == out


def test_overlapping_and_nested_secrets_leave_no_piece(redactor: SecretRedactor) -> None:
    outer = "XX-" + ANT + "-YY"
    both = SecretRedactor({"INNER": ANT, "OUTER": outer})
    assert both.redact(outer.encode()) == (b"[redacted:OUTER]", 1)
    assert both.redact(ANT.encode()) == (b"[redacted:INNER]", 1)
    # Two secrets sharing characters (one's end is the other's start): one run, one marker.
    a, b = "abcdefgh1234", "1234ijklmnop"
    pair = SecretRedactor({"A": a, "B": b})
    out, _ = pair.redact(b"<abcdefgh1234ijklmnop>")
    assert out == b"<[redacted:A]>"
    assert b"ijklmnop" not in out and b"abcdefgh" not in out
    # A repeated key and back-to-back keys.
    out, hits = redactor.redact((ANT + ANT + OAI).encode())
    assert out == b"[redacted:ANTHROPIC_API_KEY]" * 2 + b"[redacted:OPENAI_API_KEY]"
    assert hits == 3


def test_empty_and_short_values_are_skipped_but_real_keys_never() -> None:
    short = "x" * (MIN_SECRET_LENGTH - 1)
    r = SecretRedactor({"EMPTY": "", "SHORT": short, "OPENAI_API_KEY": OAI, "DUP": OAI})
    assert r.skipped == ["SHORT"]
    assert r.redact(f"{short} {OAI}".encode()) == (f"{short} [redacted:OPENAI_API_KEY]".encode(), 1)
    none = SecretRedactor({})
    assert not none and none.redact(b"anything") == (b"anything", 0)
    assert none.stream().feed(b"abc") == b"abc"


def test_headers_names_and_values(redactor: SecretRedactor) -> None:
    fields = [
        (b"content-type", b"application/json"),
        (b"x-echo", f"Bearer {OAI}".encode()),
        (f"x-key-{ANT}".encode(), b"1"),
    ]
    out, hits = redactor.redact_headers(fields)
    assert hits == 2
    assert out == [
        (b"content-type", b"application/json"),
        (b"x-echo", b"Bearer [redacted:OPENAI_API_KEY]"),
        (b"x-key-redacted-ANTHROPIC_API_KEY", b"1"),
    ]
    # A header name must stay an HTTP token (RFC 9110 tchar): no brackets or colons.
    assert re.fullmatch(rb"[A-Za-z0-9_.-]+", out[2][0])


@pytest.mark.parametrize(
    ("value", "name"),
    [
        ("".join(f"\\u{ord(c):04x}" for c in OAI), "OPENAI_API_KEY"),  # JSON escapes
        (quote(VOY, safe=""), "VOYAGE_API_KEY"),  # percent-encoding
        ("Basic " + base64.b64encode(f"user:{ANT}".encode()).decode(), "ANTHROPIC_API_KEY"),
    ],
)
def test_headers_with_escaped_or_encoded_secrets_are_redacted(
    redactor: SecretRedactor, value: str, name: str
) -> None:
    # The one search over all fields must not let an escaped or base64 form through, nor mix
    # fields: the one holding it is redacted, the others come back as they were.
    fields = [(b"content-type", b"application/json"), (b"x-echo", value.encode()), (b"x", b"1")]
    out, hits = redactor.redact_headers(fields)
    assert hits == 1
    assert out[0] == fields[0] and out[2] == fields[2]
    assert f"[redacted:{name}]".encode() in out[1][1]
    no_secret(out[1][1])


def test_a_clean_head_comes_back_as_it_was(redactor: SecretRedactor) -> None:
    # A secret split across two fields is in neither of them: nothing to redact, and the
    # fields come back byte for byte (a "%" or "\\" at a field's end is no escape).
    fields = [
        (b"x-a", OAI[:20].encode()),
        (b"x-b", OAI[20:].encode() + b"\\"),
        (b"x-c", b"50%"),
    ]
    assert redactor.redact_headers(fields) == (fields, 0)


def test_text_and_structured_values(redactor: SecretRedactor) -> None:
    hostile = "\ud800 " + CO  # a lone surrogate must not break redaction
    assert redactor.redact_text(hostile) == "\ud800 [redacted:CO_API_KEY]"
    event = {"error": f"bad key {ANT}", "n": 3, "nested": [{"k": OAI.encode()}]}
    assert redactor.redact_value(event) == {
        "error": "bad key [redacted:ANTHROPIC_API_KEY]",
        "n": 3,
        "nested": [{"k": b"[redacted:OPENAI_API_KEY]"}],
    }


def test_non_ascii_escapes_do_not_hide_a_key(redactor: SecretRedactor) -> None:
    """A vendor's \\u2019 or a %C3 cannot be part of a key; the key next to them is found."""
    body = f'{{"text":"it\\u2019s {OAI} caf%C3%A9 \\u00{ord("s"):x}k"}}'.encode()
    out, hits = redactor.redact(body)
    assert hits == 1 and b"[redacted:OPENAI_API_KEY]" in out
    assert b"\\u2019" in out and b"%C3%A9" in out


@pytest.mark.parametrize("prefix", ["", "u:", "user:", "Bearer "])
def test_a_base64_encoded_key_is_found_at_any_alignment(
    redactor: SecretRedactor, prefix: str
) -> None:
    """An upstream echoing a header dump or a Basic credential encodes the key in base64."""
    import base64

    for encode in (base64.b64encode, base64.urlsafe_b64encode):
        encoded = encode(f"{prefix}{VOY}!".encode())
        body = b'{"echo":"Basic ' + encoded + b'"}'
        out, hits = redactor.redact(body)
        assert hits == 1 and b"[redacted:VOYAGE_API_KEY]" in out, (prefix, body)
        assert base64.b64encode(VOY.encode())[4:-4] not in out
