"""The default record-mode embedder (stubs.vectors.static): recall by meaning, the same bytes
in every process, widths cut or padded, hostile text handled, and the stubs-file choice.

Its speed (<= 0.5 ms a text) is a benchmark, not a test: bench/embedder_bench.py.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from stubs.request import StubRequest
from stubs.rules.context import StubContext
from stubs.rules.replies import ReplyBook, StubsFileError
from stubs.vectors.embeddings import embed_texts, hash_embedding, openai_embeddings
from stubs.vectors.static import static_embedding, table

ROOT = Path(__file__).resolve().parents[3]

# A question and the fact that answers it, sharing no content word; the other facts and a few
# office sentences are the corpus each question is ranked against. Not the bench's set.
RECALL = [
    ("Tell me about my family.", "My sister Ana lives in Lisbon."),
    ("What car do I drive?", "My Tesla is parked outside."),
    ("Where was I born?", "I'm originally from a small village in Portugal."),
    ("What do I drink?", "I have three cups of coffee a day."),
    ("Which sport do I do?", "I play tennis every Tuesday."),
    ("When is my wedding?", "We are getting married on June 12th."),
    ("What is my partner's name?", "My husband is called Tom."),
    ("Where do I spend my vacations?", "Every August we rent a cabin by the sea."),
    ("What's wrong with my back?", "A slipped disc keeps me from lifting things."),
]
DISTRACTORS = [
    "The invoice is due on Friday.",
    "The meeting moved to room 4.",
    "Please update the quarterly report.",
    "It rained all weekend in the city.",
    "The printer on the second floor is out of toner.",
]


def nearest(query: str, corpus: list[str], model: str = "static") -> str:
    q, *docs = embed_texts([query, *corpus], 256, model)
    return corpus[int(np.argmax([float(d @ q) for d in docs]))]


@pytest.mark.parametrize(("question", "fact"), RECALL)
def test_a_question_finds_the_fact_that_answers_it_by_meaning(question: str, fact: str) -> None:
    corpus = [f for _, f in RECALL] + DISTRACTORS
    assert nearest(question, corpus) == fact


def test_hash_misses_what_static_finds() -> None:
    # The reason for the new default: by spelling alone, "family" does not find "sister".
    corpus = [f for _, f in RECALL] + DISTRACTORS
    misses = [q for q, f in RECALL if nearest(q, corpus, "hash") != f]
    assert len(misses) >= len(RECALL) // 2, misses


def test_unit_length_and_width_cut_or_padded() -> None:
    native = table().width
    full = static_embedding("My sister Ana lives in Lisbon.", 1536)
    assert full.dtype == np.float32 and full.shape == (1536,)
    assert abs(float(np.linalg.norm(full.astype(np.float64))) - 1.0) < 1e-6
    assert full[native - 1] and not full[native:].any()  # padded after the native components
    narrow = static_embedding("My sister Ana lives in Lisbon.", 32)
    assert abs(float(np.linalg.norm(narrow.astype(np.float64))) - 1.0) < 1e-6
    # The narrow vector is the leading components, renormalised: the same direction.
    lead = full[:32].astype(np.float64)
    assert np.allclose(narrow, lead / np.linalg.norm(lead), atol=1e-6)


def test_lifted_vectors_carry_the_shared_component_first() -> None:
    raw = static_embedding("My sister Ana lives in Lisbon.", 1536)
    lifted = static_embedding("My sister Ana lives in Lisbon.", 1536, lift=True)
    assert lifted[0] == np.float32(0.5**0.5)
    assert abs(float(np.linalg.norm(lifted.astype(np.float64))) - 1.0) < 1e-6
    # The rest is the raw vector, one place on, scaled by 1/sqrt(2) (its last component cut).
    native = table().width
    assert np.allclose(lifted[1 : native + 1], raw[:native] * 0.5**0.5, atol=1e-7)
    assert np.array_equal(static_embedding("x", 1, lift=True), np.array([1.0], np.float32))


def test_lifted_cosines_let_a_question_find_its_answer_over_graphitis_floor() -> None:
    # graphiti-core keeps an edge only at cosine >= 0.6: a question and the fact that answers it
    # clear it, unrelated office text does not, and no cosine is negative.
    texts = ["Tell me about my family.", "My sister Ana lives in Lisbon.", DISTRACTORS[0]]
    q, fact, other = (static_embedding(t, 1536, lift=True) for t in texts)
    assert float(q @ fact) >= 0.6 > float(q @ other) >= 0.0
    raw_q, raw_fact = (static_embedding(t, 1536) for t in texts[:2])
    assert abs(float(q @ fact) - (1 + float(raw_q @ raw_fact)) / 2) < 1e-6


def test_case_and_spacing_do_not_matter_but_words_do() -> None:
    a = static_embedding("My  Sister lives in LISBON", 256)
    assert np.array_equal(a, static_embedding("my sister lives in lisbon", 256))
    assert not np.array_equal(a, static_embedding("my brother lives in lisbon", 256))


@pytest.mark.parametrize(
    "text",
    ["", "   \n\t", "\x00\x07\x1f", "🙂🙂", "x" * 5000, "é" * 300, "我住在北京", "Σ" * 50],
)
def test_hostile_or_empty_text_is_still_a_unit_vector(text: str) -> None:
    vector = static_embedding(text, 64)
    assert vector.shape == (64,) and np.isfinite(vector).all()
    assert abs(float(np.linalg.norm(vector.astype(np.float64))) - 1.0) < 1e-6


def test_a_long_text_sums_exactly_without_overflow() -> None:
    # 40,000 tokens of the heaviest kind stay exact: the squared norm leaves int64 for Python ints.
    vector = static_embedding("peanuts " * 40000, 256)
    assert np.array_equal(vector, static_embedding("peanuts", 256))


def test_bad_width_is_refused() -> None:
    with pytest.raises(ValueError):
        static_embedding("x", 0)


SCRIPT = """
import json, sys
from stubs.vectors.embeddings import embed_texts
texts = json.loads(sys.argv[1])
print(json.dumps([v.astype("<f4").tobytes().hex() for v in embed_texts(texts, 1536, "static")]))
"""
TEXTS = ["My sister Ana lives in Lisbon.", "What car do I drive?", "Café São Paulo, 我住在北京 🙂"]


def test_the_same_bytes_in_another_process_with_other_threads() -> None:
    here = [v.astype("<f4").tobytes().hex() for v in embed_texts(TEXTS, 1536, "static")]
    for threads in ("1", "2"):
        env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": threads,
               "OPENBLAS_NUM_THREADS": threads, "PYTHONHASHSEED": threads}  # fmt: skip
        done = subprocess.run(
            [sys.executable, "-c", SCRIPT, json.dumps(TEXTS)],
            capture_output=True, text=True, env=env, timeout=120, check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr[-2000:]
        assert json.loads(done.stdout) == here


def test_the_default_stubs_embed_by_meaning_and_a_stubs_file_may_choose_hash(
    tmp_path: Path,
) -> None:
    assert ReplyBook.default().stubs.embeddings.model == "static"
    body = {"model": "text-embedding-3-small", "input": "What car do I drive?", "dimensions": 64}
    req = StubRequest("openai", "openai.embeddings", body, b"d")

    def vector(ctx: StubContext) -> np.ndarray:
        data = json.loads(openai_embeddings(req, ctx).body)["data"]
        return np.array(data[0]["embedding"], dtype=np.float32)

    # The route sends the lifted vectors (engines' similarity floors; stubs.vectors.static).
    expected = static_embedding("What car do I drive?", 64, lift=True)
    assert np.array_equal(vector(StubContext()), expected)
    path = tmp_path / "stubs.toml"
    path.write_text('schema = 1\n[embeddings]\nmodel = "hash"\n')
    hashed = vector(StubContext(book=ReplyBook.load(path)))
    assert np.array_equal(hashed, hash_embedding("What car do I drive?", 64))
    path.write_text('schema = 1\n[embeddings]\nmodel = "word2vec"\n')
    with pytest.raises(StubsFileError):
        ReplyBook.load(path)


def _fixed_inputs() -> list[str]:
    rng = random.Random(37)
    words = [
        "the",
        "sister",
        "Ana",
        "lives",
        "in",
        "Lisbon",
        "bicycle",
        "café",
        "naïve",
        "Σίσυφος",
        "東京",
        "emoji",
        "🐕",
        "x",
    ]
    texts = ["", " ", "Hello, world!", "a " * 3000, "Ünïcödé ÀÉÎ façade", "\u2028line\tsep\r\n"]
    texts += [" ".join(rng.choice(words) for _ in range(rng.randint(1, 400))) for _ in range(40)]
    return texts


# SHA-256 of the vectors of _fixed_inputs() at five widths, lifted and not, as the embedder
# made them before its hot path was made fast (an int64 matmul over every token, no cache):
# the bytes an arm receives must not move.
BEFORE_FAST_PATH = "599ac2f29085f19a80a2b3e750667aa426bfc66939d7f0c4f86ad0896e679ad8"


def test_the_fast_path_and_its_cache_send_the_bytes_the_embedder_always_sent() -> None:
    for _ in range(2):  # computed, then from the cache
        digest = hashlib.sha256()
        for text in _fixed_inputs():
            for dims, lift in ((1536, True), (384, False), (64, True), (3, False), (1, True)):
                digest.update(static_embedding(text, dims, lift).tobytes())
        assert digest.hexdigest() == BEFORE_FAST_PATH


def test_a_cached_vector_handed_out_cannot_change_the_next_one() -> None:
    first = static_embedding("My sister Ana lives in Lisbon.", 16)
    first[:] = 0.0
    assert static_embedding("My sister Ana lives in Lisbon.", 16).any()
