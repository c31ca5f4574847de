"""The record-mode addon through a real `harness proxy serve` process and the official SDKs."""

from __future__ import annotations

import json

import anthropic
import httpx
import openai
import pytest

from rundir.bodies import BodyStore
from tests.proxy.proxy_process import ProxyProcess

MESSAGE = {
    "model": "claude-haiku-4-5-20251001",
    "max_tokens": 64,
    "messages": [{"role": "user", "content": "Hello there"}],
}


def anthropic_client(proxy: ProxyProcess) -> anthropic.Anthropic:
    return proxy.anthropic()


def openai_client(proxy: ProxyProcess) -> openai.OpenAI:
    return proxy.openai()


def test_malformed_json_gets_each_vendors_error_and_the_proxy_keeps_serving(
    record_proxy: ProxyProcess,
) -> None:
    bad = httpx.post(
        f"{record_proxy.anthropic_base}/v1/messages",
        content=b"{not json",
        headers={"content-type": "application/json"},
    )
    assert bad.status_code == 400
    assert bad.json()["type"] == "error"
    assert bad.json()["error"]["type"] == "invalid_request_error"
    assert "Traceback" not in bad.text
    bad = httpx.post(
        f"{record_proxy.openai_base}/chat/completions",
        content=b"[1, 2",
        headers={"content-type": "application/json"},
    )
    assert bad.status_code == 400
    assert bad.json()["error"]["type"] == "invalid_request_error"
    # The next good call is answered.
    assert anthropic_client(record_proxy).messages.create(**MESSAGE).content


def test_missing_fields_raise_the_sdks_typed_errors(record_proxy: ProxyProcess) -> None:
    with pytest.raises(anthropic.BadRequestError) as a_err:
        anthropic_client(record_proxy).post(
            "/v1/messages",
            body={"model": "claude-haiku-4-5-20251001", "messages": []},
            cast_to=object,
        )
    assert "max_tokens" in str(a_err.value)
    with pytest.raises(openai.BadRequestError) as o_err:
        openai_client(record_proxy).post(
            "/chat/completions", body={"model": "gpt-4.1"}, cast_to=object
        )
    assert "messages" in str(o_err.value)
    with pytest.raises(openai.BadRequestError):
        openai_client(record_proxy).embeddings.create(model="text-embedding-3-small", input=[])
    assert openai_client(record_proxy).models.list().data


def test_unknown_route_is_not_found(record_proxy: ProxyProcess) -> None:
    with pytest.raises(anthropic.NotFoundError):
        anthropic_client(record_proxy).get("/v1/nowhere", cast_to=object)
    with pytest.raises(openai.NotFoundError):
        openai_client(record_proxy).post("/fine_tuning/jobs", body={}, cast_to=object)
    assert anthropic_client(record_proxy).models.list().data


def test_body_over_the_limit_is_refused_as_too_large(tmp_path) -> None:  # type: ignore[no-untyped-def]
    proxy = ProxyProcess(tmp_path / "run", "--body-limit", "2000")
    try:
        big = {**MESSAGE, "messages": [{"role": "user", "content": "x" * 5000}]}
        with pytest.raises(anthropic.ContentTooLargeError):
            anthropic_client(proxy).messages.create(**big)
        with pytest.raises(openai.APIStatusError) as err:
            openai_client(proxy).embeddings.create(model="text-embedding-3-small", input="y" * 5000)
        assert err.value.status_code == 413
        assert anthropic_client(proxy).messages.create(**MESSAGE).content
        calls = proxy.calls(at_least=3)
        assert [c["status"] for c in calls] == [413, 413, 200]
        assert calls[0]["outcome"] == "bad_request"
    finally:
        proxy.stop()


def test_call_record_carries_attribution_tokens_and_hashes(fresh_proxy: ProxyProcess) -> None:
    client = openai_client(fresh_proxy)
    client.chat.completions.create(
        model="gpt-4.1-mini",
        messages=[{"role": "user", "content": "Is this relevant?"}],
        extra_headers={"X-Harness-Purpose": "utility"},
    )
    client.embeddings.create(model="text-embedding-3-small", input="some text")
    chat, emb = fresh_proxy.calls(at_least=2)
    assert chat["schema"] == 1
    assert chat["purpose"] == "utility"
    assert chat["route"] == "openai.chat"
    assert chat["vendor"] == "openai"
    assert chat["arm"] == "default"
    assert chat["model_requested"] == "gpt-4.1-mini"
    assert chat["status"] == 200 and chat["outcome"] == "ok"
    assert chat["tokens"]["input"] > 0 and chat["tokens"]["output"] > 0
    assert len(chat["request_hash"]) == 64 and len(chat["response_hash"]) == 64
    assert chat["timing"]["start"] <= chat["timing"]["end"]
    assert chat["mode"] == "record" and chat["cost_usd"] == "0"
    assert emb["purpose"] == "embedding"
    assert emb["route"] == "openai.embeddings"
    fresh_proxy.stop()
    bodies = BodyStore(fresh_proxy.run_dir / "bodies")
    stored = json.loads(bodies.get(chat["response_hash"]))
    assert stored["choices"][0]["message"]["content"]
    assert json.loads(bodies.get(chat["request_body"]))["model"] == "gpt-4.1-mini"


def test_arm_name_is_recorded(tmp_path) -> None:  # type: ignore[no-untyped-def]
    proxy = ProxyProcess(tmp_path / "run", "--arm", "retrieval")
    try:
        openai_client(proxy).models.list()
        assert proxy.calls(at_least=1)[0]["arm"] == "retrieval"
    finally:
        proxy.stop()
