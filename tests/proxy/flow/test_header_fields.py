"""The one-pass header helpers mean what mitmproxy's own `Headers` operations mean
(proxy.flow.header_fields): the proxy relies on them to find the purpose header, strip the arm's
credentials whatever their case, and send the study's key exactly once."""

from __future__ import annotations

import warnings

from hypothesis import given
from hypothesis import strategies as st

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    from mitmproxy import http

from proxy.flow.header_fields import _MAX_NAMES, _NAMES, lowered, rewrite

# Names an SDK, an arm or a hostile client may send: every case, repeats, bytes that are not UTF-8.
NAMES = st.sampled_from(
    [b"Authorization", b"authorization", b"X-Api-Key", b"x-api-key", b"Host", b"Accept",
     b"x-harness-purpose", b"X-HARNESS-PURPOSE", b"content-type", b"X-\xff-odd"]
)  # fmt: skip
VALUES = st.binary(max_size=12).filter(lambda v: b"\r" not in v and b"\n" not in v)
FIELDS = st.lists(st.tuples(NAMES, VALUES), max_size=12)


@given(FIELDS)
def test_lowered_is_what_a_lookup_by_each_name_returns(fields: list[tuple[bytes, bytes]]) -> None:
    headers = http.Headers(fields)
    assert lowered(headers) == {name.lower(): value for name, value in headers.items()}


@given(FIELDS)
def test_rewrite_is_pop_then_set(fields: list[tuple[bytes, bytes]]) -> None:
    drop = ("authorization", "x-api-key")
    put = {"host": "vendor.example:443", "authorization": "Bearer study-key"}
    ours, theirs = http.Headers(fields), http.Headers(fields)
    rewrite(ours, drop, put)
    for name in drop:
        theirs.pop(name, None)
    for name, value in put.items():
        theirs[name] = value
    assert lowered(ours) == lowered(theirs)
    # The arm's credential never survives next to the study's, in any case.
    assert [v for n, v in ours.fields if n.lower() == b"authorization"] == [b"Bearer study-key"]
    assert not [n for n, _ in ours.fields if n.lower() == b"x-api-key"]


def test_rewrite_keeps_the_other_fields_as_they_were() -> None:
    headers = http.Headers([(b"Accept", b"a"), (b"X-Api-Key", b"arm"), (b"accept", b"b")])
    rewrite(headers, ("x-api-key",), {})
    assert headers.fields == ((b"Accept", b"a"), (b"accept", b"b"))
    assert headers["accept"] == "a, b"


def test_names_lower_as_text_and_their_cache_stays_bounded() -> None:
    # KELVIN SIGN lowers to "k": names are compared as mitmproxy's text, not as bytes.
    assert lowered(http.Headers([(b"X-Api-\xe2\x84\xaaey", b"v")])) == {"x-api-key": "v"}
    for i in range(_MAX_NAMES * 2):  # a sender's made-up names
        lowered(http.Headers([(f"x-made-up-{i}".encode(), b"v")]))
    assert len(_NAMES) <= _MAX_NAMES
    assert lowered(http.Headers([(b"Authorization", b"k")])) == {"authorization": "k"}
