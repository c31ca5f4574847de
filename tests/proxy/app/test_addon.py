"""The record-mode addon through a real `harness proxy serve` process and the official SDKs;
its option checks and per-call state in process, with mitmproxy's test kit (at the end)."""

from __future__ import annotations

import json
from pathlib import Path

import anthropic
import httpx
import openai
import pytest
from mitmproxy import exceptions

from rundir.calls.bodies import BodyStore
from tests.proxy.addon_kit import addon_context
from tests.proxy.proxy_process import ProxyProcess

CHAT = "/openai/v1/chat/completions"
CHAT_BODY = {"model": "gpt-4.1", "messages": [{"role": "user", "content": "hi"}]}
MESSAGE = {
    "model": "claude-haiku-4-5-20251001",
    "max_tokens": 64,
    "messages": [{"role": "user", "content": "Hello there"}],
}


def anthropic_client(proxy: ProxyProcess) -> anthropic.Anthropic:
    return proxy.anthropic()


def openai_client(proxy: ProxyProcess) -> openai.OpenAI:
    return proxy.openai()


@pytest.mark.integration
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


@pytest.mark.integration
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


@pytest.mark.integration
def test_unknown_route_is_not_found(record_proxy: ProxyProcess) -> None:
    with pytest.raises(anthropic.NotFoundError):
        anthropic_client(record_proxy).get("/v1/nowhere", cast_to=object)
    with pytest.raises(openai.NotFoundError):
        openai_client(record_proxy).post("/fine_tuning/jobs", body={}, cast_to=object)
    assert anthropic_client(record_proxy).models.list().data


@pytest.mark.integration
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


@pytest.mark.integration
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


@pytest.mark.integration
def test_arm_name_is_recorded(tmp_path) -> None:  # type: ignore[no-untyped-def]
    proxy = ProxyProcess(tmp_path / "run", "--arm", "retrieval")
    try:
        openai_client(proxy).models.list()
        assert proxy.calls(at_least=1)[0]["arm"] == "retrieval"
    finally:
        proxy.stop()


# --- in process (mitmproxy's test kit) ------------------------------------------------------


@pytest.mark.parametrize(
    ("option", "value", "says"),
    [
        ("harness_mode", "paid", "use record, live or replay"),
        ("harness_arm_ports", ["8081:a"], "must look like 8081=arm-name"),
        ("harness_body_limit", 0, "positive number of bytes"),
    ],
)
async def test_a_bad_option_is_refused_at_configure_time(
    tmp_path: Path, option: str, value: object, says: str
) -> None:
    async with addon_context(tmp_path) as kit:
        with pytest.raises(exceptions.OptionsError, match=says):
            kit.tctx.options.update(**{option: value})


async def test_the_mode_option_lists_its_choices(tmp_path: Path) -> None:
    async with addon_context(tmp_path) as kit:
        assert kit.tctx.options._options["harness_mode"].choices == ["record", "live", "replay"]


async def test_replay_keeps_the_recording_it_serves_on_the_call_not_in_a_table(
    tmp_path: Path,
) -> None:
    source = tmp_path / "source"
    async with addon_context(source) as kit:
        await kit.call(CHAT, CHAT_BODY)
    replayed = tmp_path / "replayed"
    async with addon_context(
        replayed, harness_mode="replay", harness_replay_from=str(source)
    ) as kit:
        status, _, flow = await kit.call(CHAT, CHAT_BODY)
        assert status == 200
        state = flow.metadata["harness"]
        assert "replay_of=1" in state.flags  # the source's first call
        assert state.recording is None  # handed over when the reply was sent
    assert [c["outcome"] for c in kit.calls()] == ["ok"]
