"""Record-mode embedders side by side (issue 21): ms per text and recall@k, hash vs the static
default vs MiniLM, in one run.

    .venv/bin/python -m bench.embedder_bench [--repeats 5] [--write BENCHMARKS.md]

Each embedder runs in a child process of its own, pinned to one core (`sched_setaffinity`), so
no figure borrows the other core and each load is cold: hash and static in the project's .venv,
MiniLM (torch) in `.cache/minilm-venv` (scripts/engine-venvs; skipped with a note without it).
Every embedder goes through `stubs.vectors.embeddings.embed_texts`, the function the /v1/embeddings
stub and rerank call (MiniLM through `stubs.vectors.minilm`, which it calls), at
text-embedding-3-small's
width (1536), on the 80 texts of bench/paraphrases.py:
- load: the first call's extra time (the static table and tokenizer, the model);
- ms per text, cold: the first pass over the 80 texts (the tokenizer's word cache empty);
- ms per text, warm: the median of `--repeats` later passes; both CPU time of the process
  (what one core spends) and wall time;
- a paragraph (ten facts joined, as an engine stores a turn): warm CPU ms each;
- recall@1/3/5: each question ranked against the 40 facts, by cosine;
- a digest of the 80 vectors' bytes: the same on every machine for static and hash.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
SECTION = "Record-mode embedders"
MINILM_PYTHON = REPO / ".cache" / "minilm-venv" / "bin" / "python"
WIDTH = 1536
TARGET_MS = 0.5  # static, warm CPU ms per text on one core
MODELS = ("hash", "static", "minilm")


def worker(model: str, repeats: int) -> dict[str, Any]:
    """Runs in the child: every figure of one embedder."""
    import numpy as np

    from bench.paraphrases import PAIRS

    embed_texts: Callable[[list[str], int, str], Sequence[Any]]
    if model == "minilm":  # its venv has torch, not the packages stubs.vectors.embeddings imports
        from stubs.vectors.minilm import minilm_embeddings

        def embed_texts(texts: list[str], dims: int, _: str) -> list[Any]:
            return minilm_embeddings(texts, dims)
    else:
        from stubs.vectors import embeddings

        embed_texts = embeddings.embed_texts

    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    texts = [t for pair in PAIRS for t in pair]
    started = time.perf_counter()
    embed_texts(["load"], WIDTH, model)  # the table, tokenizer or model
    load_s = time.perf_counter() - started

    def timed() -> tuple[float, float, list[Any]]:
        cpu, wall = time.process_time(), time.perf_counter()
        vectors = embed_texts(texts, WIDTH, model)
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        return cpu * 1e3 / len(texts), wall * 1e3 / len(texts), vectors

    cold_cpu, cold_wall, vectors = timed()
    warm = [timed()[:2] for _ in range(repeats)]
    # Longer texts, as an engine stores a conversation's turn: ten facts to a paragraph.
    facts = [f for _, f in PAIRS]
    paragraphs = [" ".join(facts[i : i + 10]) for i in range(0, len(facts), 10)]
    paragraph_cpu = []
    for _ in range(repeats):
        cpu = time.process_time()
        embed_texts(paragraphs, WIDTH, model)
        paragraph_cpu.append((time.process_time() - cpu) * 1e3 / len(paragraphs))
    matrix = np.stack(vectors).astype(np.float64)
    questions, fact_vectors = matrix[0::2], matrix[1::2]
    scores = questions @ fact_vectors.T
    ranks = (scores > np.diag(scores)[:, None]).sum(axis=1)
    return {
        "model": model,
        "load_s": load_s,
        "cold_cpu_ms": cold_cpu,
        "cold_wall_ms": cold_wall,
        "warm_cpu_ms": statistics.median(c for c, _ in warm),
        "warm_wall_ms": statistics.median(w for _, w in warm),
        "paragraph_cpu_ms": statistics.median(paragraph_cpu),
        "recall": {k: float((ranks < k).mean()) for k in (1, 3, 5)},
        "pairs": len(PAIRS),
        "digest": hashlib.sha256(b"".join(v.astype("<f4").tobytes() for v in vectors)).hexdigest(),
    }


def run_worker(model: str, repeats: int) -> dict[str, Any] | str:
    python = Path(sys.executable) if model != "minilm" else MINILM_PYTHON
    if not python.exists():
        return f"no {python} (scripts/engine-venvs makes it)"
    env = {**os.environ, "PYTHONPATH": str(REPO), "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1"}
    done = subprocess.run(
        [str(python), "-m", "bench.embedder_bench", "--worker", model, "--repeats", str(repeats)],
        capture_output=True,
        text=True,
        cwd=REPO,
        env=env,
        timeout=1800,
        check=False,
    )
    if done.returncode != 0:
        return f"failed: {done.stderr.strip().splitlines()[-1:]}"
    return json.loads(done.stdout.strip().splitlines()[-1])


def render(results: dict[str, dict[str, Any] | str], repeats: int) -> str:
    load = os.getloadavg()[0]
    lines = [
        f"## {SECTION}",
        "",
        f"Measured {datetime.now(UTC):%Y-%m-%d %H:%M} UTC on {os.cpu_count()} cores (each "
        f"embedder pinned to one), Python {platform.python_version()}; load average {load:.2f}. "
        "Repeat from the repository root with:",
        "",
        "```sh",
        f".venv/bin/python -m bench.embedder_bench --repeats {repeats} --write BENCHMARKS.md",
        "```",
        "",
        "What: the record-mode embedders behind `/v1/embeddings` and rerank "
        "(`stubs.vectors.embeddings.embed_texts`, width 1536), each in its own process on one "
        "core, on "
        "bench/paraphrases.py: 40 questions, each ranked against 40 facts that share few or no "
        'words with it ("Tell me about my family." / "My sister Ana lives in Lisbon."). '
        f"ms per text: CPU time over the 80 texts, cold (first pass) and warm (median of {repeats}"
        " passes); a paragraph is ten facts joined (about 80 words), warm. The digest is of the 80"
        " vectors' bytes (static and hash repeat it anywhere).",
        "",
        "| embedder | load s | cold ms/text (CPU) | warm ms/text (CPU) | warm ms/text (wall) "
        "| paragraph ms (CPU) | recall@1 | recall@3 | recall@5 | digest |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for model in MODELS:
        r = results[model]
        if isinstance(r, str):
            lines.append(f"| {model} | {r} |  |  |  |  |  |  |  |  |")
            continue
        rec = r["recall"]
        lines.append(
            f"| {model} | {r['load_s']:.2f} | {r['cold_cpu_ms']:.3f} | {r['warm_cpu_ms']:.3f} "
            f"| {r['warm_wall_ms']:.3f} | {r['paragraph_cpu_ms']:.3f} "
            f"| {rec['1']:.3f} | {rec['3']:.3f} | {rec['5']:.3f} "
            f"| `{r['digest'][:12]}` |"
        )
    lines += ["", *_verdict(results), ""]
    return "\n".join(lines)


def _verdict(results: dict[str, dict[str, Any] | str]) -> list[str]:
    static, hashed, minilm = results["static"], results["hash"], results["minilm"]
    if isinstance(static, str):
        return [f"Static embedder {static}."]
    met = "met" if static["warm_cpu_ms"] <= TARGET_MS else "NOT met"
    out = [
        f"Target: static <= {TARGET_MS} ms a text on one core: {static['warm_cpu_ms']:.3f} ms "
        f"warm, {static['cold_cpu_ms']:.3f} ms cold: {met}."
    ]
    for name, base in (("hash", hashed), ("MiniLM", minilm)):
        if isinstance(base, str):
            out.append(f"{name}: {base}.")
            continue
        speed = static["warm_cpu_ms"] / base["warm_cpu_ms"]
        recalls = ", ".join(
            f"@{k} x{static['recall'][k] / base['recall'][k]:.2f}" if base["recall"][k] else
            f"@{k} {static['recall'][k]:.3f} against 0"
            for k in ("1", "3", "5")
        )  # fmt: skip
        out.append(
            f"Static / {name}, same run: warm CPU ms per text x{speed:.3g}, recall {recalls}."
        )
    return [" ".join(out)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--write", type=Path, help="rewrite this bench's section of the file")
    parser.add_argument("--worker", choices=MODELS, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(worker(args.worker, args.repeats)))
        return
    results = {model: run_worker(model, args.repeats) for model in MODELS}
    section = render(results, args.repeats)
    print(section)
    if args.write:
        from bench.markdown import replace_section

        replace_section(args.write, SECTION, section)


if __name__ == "__main__":
    main()
