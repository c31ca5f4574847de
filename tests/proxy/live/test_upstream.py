"""proxy.live.upstream: a live call leaves for its vendor's URL with the study's key alone (every
credential the arm sent dropped, whatever its case), its query kept, and a rewritten body framed
as mitmproxy's own `content` setter would frame it."""

from __future__ import annotations

import warnings

import pytest

with warnings.catch_warnings():
    # mitmproxy's master imports ldap3, which trips pyasn1's DeprecationWarning (an error here).
    warnings.simplefilter("ignore", DeprecationWarning)
    from mitmproxy import http
    from mitmproxy.http import Headers
    from mitmproxy.test import tflow, tutils

from proxy.flow.callstate import CallState
from proxy.live.upstream import Upstream, body_framing, point_upstream
from rundir.calls.calllog import Rewrite

ARM_HEADERS = [
    (b"Authorization", b"Bearer sk-placeholder"),
    (b"X-Api-Key", b"placeholder"),
    (b"content-type", b"application/json"),
]


def _flow(path: str, content: bytes = b"{}") -> http.HTTPFlow:
    request = tutils.treq(
        host="127.0.0.1",
        port=4101,
        path=path.encode(),
        headers=Headers(ARM_HEADERS),
        content=content,
    )
    return tflow.tflow(req=request)


def _state(vendor: str, path: str) -> CallState:
    return CallState(vendor, path, "POST", "a", "main", 0.0)  # type: ignore[arg-type]


def test_an_anthropic_call_goes_to_its_upstream_with_the_study_key_alone() -> None:
    flow = _flow("/anthropic/v1/messages?beta=true")
    state = _state("anthropic", "/v1/messages")
    point_upstream(flow, state, Upstream("https://api.anthropic.com/"), {}, "sk-ant-study")
    req = flow.request
    assert (req.scheme, req.host, req.port) == ("https", "api.anthropic.com", 443)
    assert req.path == "/v1/messages?beta=true"
    assert req.headers.get_all("x-api-key") == ["sk-ant-study"]
    assert "authorization" not in req.headers
    assert req.headers["host"] == "api.anthropic.com"
    assert req.headers["accept-encoding"] == "identity"
    assert req.raw_content == b"{}"  # not rewritten: the arm's bytes


def test_a_rewritten_openai_body_goes_compact_with_its_length() -> None:
    flow = _flow("/openai/v1/chat/completions", b'{"model": "gpt-4.1", "temperature": 0.7}')
    state = _state("openai", "/v1/chat/completions")
    state.rewrites = [Rewrite(field="temperature", before=0.7, after=0)]
    body = {"model": "gpt-4.1", "temperature": 0}
    point_upstream(flow, state, Upstream("http://127.0.0.1:9000/base"), body, "sk-study")
    req = flow.request
    assert (req.host, req.port, req.path) == ("127.0.0.1", 9000, "/base/v1/chat/completions")
    assert req.headers.get_all("authorization") == ["Bearer sk-study"]
    assert "x-api-key" not in req.headers
    assert req.raw_content == b'{"model":"gpt-4.1","temperature":0}'
    assert req.headers["content-length"] == str(len(req.raw_content))


@pytest.mark.parametrize(
    ("fields", "framing"),
    [
        ([], (False, False)),
        ([(b"Content-Encoding", b"identity")], (False, False)),
        ([(b"content-encoding", b"")], (False, False)),
        ([(b"Content-Encoding", b" identity ")], (False, True)),  # mitmproxy cannot apply it
        ([(b"content-encoding", b"identity"), (b"content-encoding", b"identity")], (False, True)),
        ([(b"Transfer-Encoding", b"chunked")], (True, False)),
    ],
)
def test_framing_reads_the_headers_as_mitmproxys_content_setter(
    fields: list[tuple[bytes, bytes]], framing: tuple[bool, bool]
) -> None:
    headers = Headers([(b"content-type", b"application/json"), *fields])
    assert body_framing(headers) == framing
    # The same answer from mitmproxy's own setter: keeps the length out beside a
    # transfer-encoding, drops an encoding it cannot apply.
    request = tutils.treq(headers=headers.copy(), content=b"{}")
    request.content = b'{"a":1}'
    assert ("content-length" in request.headers) == (not framing[0])
    had_encoding = any(name.lower() == b"content-encoding" for name, _ in fields)
    assert ("content-encoding" in request.headers) == (had_encoding and not framing[1])
