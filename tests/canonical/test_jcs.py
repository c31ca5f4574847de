from __future__ import annotations

from enum import IntEnum

import pytest
import rfc8785
from hypothesis import given, settings

import canonical
from canonical.jcs import _json_compatible
from tests.json_values import ANY_JSON


def _reference(value: object) -> bytes | type[Exception]:
    try:
        return rfc8785.dumps(value)  # type: ignore[arg-type]
    except rfc8785.CanonicalizationError as e:
        return type(e)


def _ours(value: object) -> bytes | type[Exception]:
    try:
        return canonical.dumps(value)
    except rfc8785.CanonicalizationError as e:
        return type(e)


@settings(max_examples=500, deadline=None)
@given(ANY_JSON)
def test_every_json_value_gets_rfc8785s_bytes_or_its_error(value: object) -> None:
    # Every ledger line and request hash ever written stays what RFC 8785 makes of it; an
    # integer past 2**53 is refused as the reference refuses it.
    assert _ours(value) == _reference(value)


def test_utf16_key_order_and_ecmascript_numbers_follow_rfc8785_not_json() -> None:
    # The two places where json.dumps and RFC 8785 part ways: they must take RFC 8785's side.
    # U+1F600 sorts before U+FB01 in UTF-16 (a surrogate pair, 0xD83D...), after it by code point.
    assert canonical.dumps({"\ufb01": 2, "\U0001f600": 1}) == '{"\U0001f600":1,"\ufb01":2}'.encode()
    assert canonical.dumps({"x": 1.0, "y": 1e-7, "z": 1e21}) == b'{"x":1,"y":1e-7,"z":1e+21}'


def test_control_characters_and_quotes_are_escaped_as_rfc8785_escapes_them() -> None:
    text = "".join(chr(i) for i in range(0x20)) + '"\\\x7f\u2028é'
    assert canonical.dumps({"t": text}) == rfc8785.dumps({"t": text})
    assert b"\\u001f" in canonical.dumps(text)  # lowercase hex, as RFC 8785 writes it


def test_tuples_and_int_subclasses_are_written_as_the_reference_writes_them() -> None:
    class Level(IntEnum):
        HIGH = 3

    value: dict[str, object] = {"levels": (Level.HIGH, True, None), "n": 2**53 - 1}
    reference = rfc8785.dumps(value)  # type: ignore[arg-type]
    assert canonical.dumps(value) == reference == b'{"levels":[3,true,null],"n":9007199254740991}'


def test_a_lone_surrogate_and_a_big_integer_are_refused() -> None:
    with pytest.raises(rfc8785.CanonicalizationError):
        canonical.dumps({"text": "\ud800"})
    with pytest.raises(rfc8785.IntegerDomainError):
        canonical.dumps({"seed": 2**53})


def test_only_values_json_writes_alike_take_the_c_encoder() -> None:
    # A ledger entry (ASCII keys, strings, safe integers, lists) takes the fast path; anything
    # json.dumps could write differently goes to the reference.
    entry = {"seq": 7, "fields": {"calls": [{"run_id": "r", "cost_usd": "0.1", "flags": []}]}}
    assert _json_compatible(entry)
    for other in ({"x": 1.5}, {"é": 1}, {"n": 2**53}, {"t": (1,)}, {"k": {1: 2}}, [True, 0.0]):
        assert not _json_compatible(other), other
