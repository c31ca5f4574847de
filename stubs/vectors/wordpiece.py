"""BERT's uncased WordPiece tokenizer in pure Python: text to vocabulary ids, no native code.

The static embedder (stubs.vectors.static) looks up one vector per WordPiece token of
all-MiniLM-L6-v2's vocabulary, so it must split text exactly as that model's tokenizer does
(BertNormalizer, BertPreTokenizer, WordPiece with `##` continuations). Written out here rather
than taken from the `tokenizers` package because the project does not depend on it, and a pure
function of the text and the vocabulary is the same on every machine by construction (the one
machine-dependent input is the Python's Unicode database, as for `str.lower`).

The steps follow the Rust `tokenizers` order: drop control characters and map whitespace to a
space, put spaces around CJK ideographs, strip accents (NFD, drop nonspacing marks), lowercase,
split on whitespace and punctuation, then greedy longest-match WordPiece per word; a word longer
than 100 characters, or one no vocabulary pieces spell, is a single [UNK].
"""

from __future__ import annotations

import functools
import re
import unicodedata

UNK = "[UNK]"
_MAX_WORD_CHARS = 100  # BERT's max_input_chars_per_word
# The CJK Unified Ideographs blocks BERT treats as one token each (its _is_chinese_char).
_CJK_RANGES = (
    (0x4E00, 0x9FFF),
    (0x3400, 0x4DBF),
    (0x20000, 0x2A6DF),
    (0x2A700, 0x2B73F),
    (0x2B740, 0x2B81F),
    (0x2B820, 0x2CEAF),
    (0xF900, 0xFAFF),
    (0x2F800, 0x2FA1F),
)


# ASCII text (most of what an arm embeds) takes a fast path with the same result: its control
# characters dropped, tab and newlines made spaces, then runs of letters and digits and single
# punctuation marks (everything else printable in ASCII is punctuation to BERT).
_ASCII_CLEAN = {cp: None for cp in [*range(32), 127] if chr(cp) not in "\t\n\r"} | {
    ord(c): " " for c in "\t\n\r"
}
_ASCII_WORDS = re.compile(r"[a-z0-9]+|[!-/:-@\[-`{-~]")


def _is_cjk(cp: int) -> bool:
    return any(lo <= cp <= hi for lo, hi in _CJK_RANGES)


@functools.lru_cache(maxsize=4096)
def _is_punctuation(char: str) -> bool:
    cp = ord(char)
    # All non-letter, non-digit ASCII counts, "^" and "$" and "`" included, as BERT has it.
    if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126:
        return True
    return unicodedata.category(char).startswith("P")


def _normalise(text: str) -> str:
    out: list[str] = []
    for char in text:
        cp = ord(char)
        if char in " \t\n\r":
            out.append(" ")
            continue
        category = unicodedata.category(char)
        # Unassigned code points (Cn) stay, as the Rust tokenizer keeps them (they become [UNK]).
        if cp == 0 or cp == 0xFFFD or (category.startswith("C") and category != "Cn"):
            continue
        if category == "Zs":
            out.append(" ")
        elif _is_cjk(cp):
            out.append(f" {char} ")
        else:
            out.append(char)
    stripped = "".join(
        c for c in unicodedata.normalize("NFD", "".join(out)) if unicodedata.category(c) != "Mn"
    )
    # Python lowercases a final capital sigma to "ς"; the Rust tokenizer, char by char, to "σ".
    return stripped.replace("Σ", "σ").lower()


def _split_words(text: str) -> list[str]:
    words: list[str] = []
    for chunk in text.split():
        start = 0
        for i, char in enumerate(chunk):
            if _is_punctuation(char):
                if i > start:
                    words.append(chunk[start:i])
                words.append(char)
                start = i + 1
        if start < len(chunk):
            words.append(chunk[start:])
    return words


class WordPiece:
    """A tokenizer over one vocabulary (its lines, in id order)."""

    def __init__(self, vocab: list[str]) -> None:
        self._ids = {token: i for i, token in enumerate(vocab)}
        if UNK not in self._ids:
            raise ValueError("the vocabulary has no [UNK] token")
        self._unk = self._ids[UNK]
        # No piece is longer than the longest token: bounds the greedy search per position.
        self._longest = max(len(t) for t in vocab)
        self.word_ids = functools.lru_cache(maxsize=65536)(self._word_ids)

    def ids(self, text: str) -> list[int]:
        """The vocabulary ids of `text`'s pieces, in order (no [CLS]/[SEP])."""
        if text.isascii():
            words = _ASCII_WORDS.findall(text.translate(_ASCII_CLEAN).lower())
        else:
            words = _split_words(_normalise(text))
        out: list[int] = []
        for word in words:
            out.extend(self.word_ids(word))
        return out

    def _word_ids(self, word: str) -> tuple[int, ...]:
        if len(word) > _MAX_WORD_CHARS:
            return (self._unk,)
        pieces: list[int] = []
        start = 0
        while start < len(word):
            prefix = "##" if start else ""
            end = min(len(word), start + self._longest)
            found = None
            while end > start:
                found = self._ids.get(prefix + word[start:end])
                if found is not None:
                    break
                end -= 1
            if found is None:
                return (self._unk,)
            pieces.append(found)
            start = end
        return tuple(pieces)
