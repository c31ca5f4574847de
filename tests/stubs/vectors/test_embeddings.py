"""Hash embeddings and POST /v1/embeddings, driven through the real openai SDK (whose replies
come from the default embedder, stubs.vectors.static)."""

from __future__ import annotations

import base64
import json
from typing import Any

import httpx2
import numpy as np
import openai
import pytest
from openai.types import CreateEmbeddingResponse

from stubs.request import StubRequest
from stubs.rules.context import StubContext
from stubs.vectors.embeddings import hash_embedding, openai_embeddings
from stubs.vectors.static import static_embedding
from tests.stubs.sdk_transport import StubTransport, body_digest
from vendors.errors import VendorRequestError

MODEL = "text-embedding-3-small"


def client(ctx: StubContext | None = None) -> tuple[openai.OpenAI, StubTransport]:
    transport = StubTransport("openai", ctx)
    sdk = openai.OpenAI(
        api_key="x", base_url="http://stub/v1", http_client=httpx2.Client(transport=transport)
    )
    return sdk, transport


def call(body: dict[str, Any], ctx: StubContext | None = None) -> dict[str, Any]:
    req = StubRequest("openai", "openai.embeddings", body, body_digest(body))
    reply = openai_embeddings(req, ctx or StubContext())
    assert reply.status == 200
    parsed: dict[str, Any] = json.loads(reply.body)
    return parsed


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b)))


# ---- hash_embedding --------------------------------------------------------------------------


@pytest.mark.parametrize("dims", [1, 2, 8, 256, 1536, 3072])
@pytest.mark.parametrize("text", ["a", "hello world", "  ", "Ünïcode – テキスト", "x" * 5000])
def test_unit_norm_at_every_width(text: str, dims: int) -> None:
    vector = hash_embedding(text, dims)
    assert vector.dtype == np.float32
    assert vector.shape == (dims,)
    assert abs(float(np.linalg.norm(vector)) - 1.0) < 1e-5


def test_shared_ngrams_score_higher_than_unrelated_text() -> None:
    anchor = "The user's favourite colour is teal."
    related = ["favourite colour: teal", "What is the user's favourite colour?", "teal colours"]
    unrelated = ["Quarterly tax filing deadline in March", "xylophone jazz quintet bebop"]
    for dims in (256, 1536):
        a = hash_embedding(anchor, dims)
        worst_related = min(cosine(a, hash_embedding(t, dims)) for t in related)
        best_unrelated = max(cosine(a, hash_embedding(t, dims)) for t in unrelated)
        assert worst_related > best_unrelated + 0.1


def test_case_and_spacing_do_not_matter_but_words_do() -> None:
    a = hash_embedding("Memory  Engine", 512)
    assert np.allclose(a, hash_embedding("memory engine", 512))
    assert not np.allclose(a, hash_embedding("memory engines", 512))


def test_deterministic_in_another_process() -> None:
    import subprocess
    import sys
    from pathlib import Path

    code = (
        "from stubs.vectors.embeddings import hash_embedding;"
        "print(hash_embedding('stable across processes', 64).tobytes().hex())"
    )
    outs = {
        subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            check=True,
            cwd=Path(__file__).resolve().parents[3],
            env={"PYTHONHASHSEED": seed},
        ).stdout.strip()
        for seed in ("1", "2")
    }
    assert outs == {hash_embedding("stable across processes", 64).tobytes().hex()}


# ---- through the openai SDK ------------------------------------------------------------------


def test_sdk_default_asks_for_base64_and_decodes_it() -> None:
    sdk, transport = client()
    result = sdk.embeddings.create(model=MODEL, input="The harbor at dawn")
    assert json.loads(transport.requests[0].content)["encoding_format"] == "base64"
    raw = json.loads(transport.replies[0].body)["data"][0]["embedding"]
    assert isinstance(raw, str)  # base64 on the wire, floats after the SDK decodes it
    assert np.frombuffer(base64.b64decode(raw), dtype="<f4").shape == (1536,)
    assert isinstance(result, CreateEmbeddingResponse)
    vector = np.array(result.data[0].embedding, dtype=np.float32)
    assert np.array_equal(vector, static_embedding("The harbor at dawn", 1536, lift=True))
    assert result.object == "list" and result.data[0].object == "embedding"
    assert result.model == MODEL
    assert result.usage.prompt_tokens == result.usage.total_tokens > 0


def test_sdk_float_format_gives_the_same_vector() -> None:
    sdk, transport = client()
    floats = sdk.embeddings.create(model=MODEL, input="same text", encoding_format="float")
    b64 = sdk.embeddings.create(model=MODEL, input="same text")
    assert isinstance(json.loads(transport.replies[0].body)["data"][0]["embedding"], list)
    as_f32 = np.array(floats.data[0].embedding, dtype=np.float32)
    assert np.array_equal(as_f32, np.array(b64.data[0].embedding, dtype=np.float32))


def test_sdk_dimensions_and_list_input() -> None:
    sdk, _ = client()
    texts = ["first memory", "second memory", "unrelated"]
    result = sdk.embeddings.create(model=MODEL, input=texts, dimensions=256)
    assert [d.index for d in result.data] == [0, 1, 2]
    for item, text in zip(result.data, texts, strict=True):
        vector = np.array(item.embedding, dtype=np.float32)
        assert vector.shape == (256,)
        assert abs(float(np.linalg.norm(vector)) - 1.0) < 1e-5
        assert np.array_equal(vector, static_embedding(text, 256, lift=True))


async def test_async_sdk_token_id_inputs() -> None:
    transport = StubTransport("openai")
    sdk = openai.AsyncOpenAI(
        api_key="x", base_url="http://stub/v1", http_client=httpx2.AsyncClient(transport=transport)
    )
    result = await sdk.embeddings.create(model=MODEL, input=[[101, 2023], [7]])
    vector = np.array(result.data[0].embedding, dtype=np.float32)
    assert np.array_equal(vector, static_embedding("101 2023", 1536, lift=True))
    assert result.usage.prompt_tokens == 3  # token ids count one each


def test_model_native_width_and_context_default() -> None:
    large = call({"model": "text-embedding-3-large", "input": "x"})
    assert len(large["data"][0]["embedding"]) == 3072
    ctx = StubContext(embedding_dims=384)
    assert len(call({"model": "local-minilm", "input": "x"}, ctx)["data"][0]["embedding"]) == 384


def test_deterministic_bytes() -> None:
    body = {"model": MODEL, "input": ["a", "b"], "encoding_format": "base64"}
    req = StubRequest("openai", "openai.embeddings", body, body_digest(body))
    assert openai_embeddings(req, StubContext()).body == openai_embeddings(req, StubContext()).body


def test_usage_reported_to_the_proxy() -> None:
    body = {"model": MODEL, "input": ["hello there", "general kenobi"]}
    reply = openai_embeddings(StubRequest("openai", "openai.embeddings", body, b"d"), StubContext())
    assert reply.usage.input_tokens == json.loads(reply.body)["usage"]["prompt_tokens"]
    assert reply.usage.output_tokens == 0
    assert reply.model == MODEL


@pytest.mark.parametrize(
    "body",
    [
        {"input": "no model"},
        {"model": MODEL},
        {"model": MODEL, "input": ""},
        {"model": MODEL, "input": []},
        {"model": MODEL, "input": ["ok", ""]},
        {"model": MODEL, "input": [[]]},
        {"model": MODEL, "input": [1.5]},
        {"model": MODEL, "input": [True]},
        {"model": MODEL, "input": {"text": "x"}},
        {"model": MODEL, "input": ["x"] * 2049},
        {"model": MODEL, "input": "x", "dimensions": 0},
        {"model": MODEL, "input": "x", "dimensions": "256"},
        {"model": MODEL, "input": "x", "dimensions": 4096},
        {"model": "text-embedding-ada-002", "input": "x", "dimensions": 256},
        {"model": MODEL, "input": "x", "encoding_format": "int8"},
        {"model": MODEL, "input": "word " * 40000},
    ],
)
def test_bad_requests_are_400(body: dict[str, Any]) -> None:
    with pytest.raises(VendorRequestError) as err:
        openai_embeddings(StubRequest("openai", "openai.embeddings", body, b"d"), StubContext())
    assert err.value.status == 400


def test_sdk_raises_bad_request_on_empty_input() -> None:
    sdk, _ = client()
    with pytest.raises(openai.BadRequestError) as err:
        sdk.embeddings.create(model=MODEL, input="")
    assert err.value.status_code == 400
    assert err.value.param == "input"
