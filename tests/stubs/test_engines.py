"""The real mem0 and graphiti-core, with only the default stubs, store the user's facts and
recall them through a record-mode proxy (a real `harness proxy serve` process).

The engines live in a venv of their own (`.cache/engines-venv`, or HARNESS_ENGINES_PYTHON), so
the project's .venv stays light: these tests skip without it, except under CI=true, where a
missing engine is a failure (.ci/run creates the venv). Each engine runs as a subprocess script
(tests/stubs/engines/*_probe.py) that prints what the engine stored and what its search found.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.proxy.proxy_process import ProxyProcess

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
ENGINES_PYTHON = Path(
    os.environ.get("HARNESS_ENGINES_PYTHON", ROOT / ".cache" / "engines-venv" / "bin" / "python")
)
PROBES = Path(__file__).parent / "engines"
PROBE_TIMEOUT = 300


def _engines_ready() -> str | None:
    if not ENGINES_PYTHON.exists():
        return f"no engines venv at {ENGINES_PYTHON}"
    found = subprocess.run(
        [str(ENGINES_PYTHON), "-c", "import mem0, graphiti_core, kuzu, qdrant_client"],
        capture_output=True,
        text=True,
        check=False,
    )
    return None if found.returncode == 0 else f"engines venv lacks a package: {found.stderr[-300:]}"


@pytest.fixture(scope="module")
def engines() -> None:
    missing = _engines_ready()
    if missing is None:
        return
    if os.environ.get("CI") == "true":
        pytest.fail(f"{missing}: .ci/run must create it (see tests/stubs/test_engines.py)")
    pytest.skip(missing)


@pytest.fixture
def proxy(tmp_path: Path, engines: None) -> Iterator[ProxyProcess]:
    proxy = ProxyProcess(tmp_path / "run", "--mode", "record")
    yield proxy
    proxy.stop()


def probe(name: str, proxy: ProxyProcess, workdir: Path, *args: str) -> dict[str, Any]:
    workdir.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "HTTP", "http"))}
    done = subprocess.run(
        [
            str(ENGINES_PYTHON),
            str(PROBES / f"{name}_probe.py"),
            proxy.openai_base,
            str(workdir),
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=PROBE_TIMEOUT,
        env={**env, "HF_HUB_OFFLINE": "1", "PYTHONWARNINGS": "ignore"},
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def calls(proxy: ProxyProcess) -> list[dict[str, Any]]:
    path = proxy.run_dir / "calls.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


TURNS = [
    [
        {"role": "user", "content": "My sister Ana lives in Lisbon and teaches chemistry."},
        {"role": "assistant", "content": "That sounds lovely."},
    ],
    [{"role": "user", "content": "I am allergic to peanuts. I play the cello on Sundays."}],
]


def test_mem0_stores_the_users_sentences_as_clean_memories_and_finds_them(
    proxy: ProxyProcess, tmp_path: Path
) -> None:
    result = probe(
        "mem0", proxy, tmp_path / "mem0", json.dumps(TURNS), "Where does my sister live?"
    )
    assert sorted(result["stored"]) == sorted(
        [
            "My sister Ana lives in Lisbon and teaches chemistry.",
            "I am allergic to peanuts.",
            "I play the cello on Sundays.",
        ]
    )
    # Clean: no prompt text, no JSON, nothing the assistant said.
    for memory in result["stored"]:
        assert "##" not in memory and "{" not in memory and "lovely" not in memory
    assert "My sister Ana lives in Lisbon and teaches chemistry." in result["found"]
    assert all(c["status"] == 200 for c in calls(proxy))


EPISODES = [
    ["user: My sister Ana lives in Lisbon and teaches chemistry.", "2024-05-01T10:00:00+00:00"],
    ["user: Ana adopted a cat named Miso last week.", "2024-05-02T10:00:00+00:00"],
]


def test_graphiti_names_entities_from_the_episode_and_its_search_returns_facts(
    proxy: ProxyProcess, tmp_path: Path
) -> None:
    result = probe("graphiti", proxy, tmp_path / "graphiti", json.dumps(EPISODES), "Ana")
    said = " ".join(text for text, _ in EPISODES)
    assert {"Ana", "Lisbon", "Miso"} <= set(result["entities"])
    for name in result["entities"]:
        assert name == "user" or name in said, f"entity {name!r} is not from the text"
    facts = {fact for _, fact in result["edges"]}
    assert facts <= {
        "My sister Ana lives in Lisbon and teaches chemistry.",
        "Ana adopted a cat named Miso last week.",
    }
    assert facts, "graphiti stored no fact"
    assert result["found"] and set(result["found"]) <= facts
    assert all(c["status"] == 200 for c in calls(proxy))


FACTS = [
    "My sister Ana lives in Lisbon and teaches chemistry.",
    "I am allergic to peanuts.",
    "I play the cello on Sundays.",
    "My Tesla is parked in the garage.",
    "I work as a nurse at the city hospital.",
    "Our dog Biscuit loves the beach.",
    "I was born in a small village in Portugal.",
    "Every August we rent a cabin by the sea.",
]
# Each question shares no content word with the fact that answers it (on hash embeddings mem0
# puts 3 of these 7 first): only retrieval by meaning finds them all.
BY_MEANING = {
    "Tell me about my family.": FACTS[0],
    "What car do I drive?": FACTS[3],
    "What food should I avoid?": FACTS[1],
    "Which instrument do I practise?": FACTS[2],
    "Do I have any pets?": FACTS[5],
    "Where do I spend my vacations?": FACTS[7],
    "What is my job?": FACTS[4],
}


def test_mem0_recalls_by_meaning_on_the_default_embedder(
    proxy: ProxyProcess, tmp_path: Path
) -> None:
    turns = [[{"role": "user", "content": fact}] for fact in FACTS]
    questions = list(BY_MEANING)
    result = probe("mem0", proxy, tmp_path / "mem0", json.dumps(turns), json.dumps(questions))
    assert sorted(result["stored"]) == sorted(FACTS)
    found = dict(zip(questions, result["found"], strict=True))
    assert {q: hits[0] if hits else None for q, hits in found.items()} == BY_MEANING


def test_graphiti_recalls_by_meaning_on_the_default_embedder(
    proxy: ProxyProcess, tmp_path: Path
) -> None:
    # graphiti keeps an edge only at cosine >= 0.6 and its full-text search finds no shared
    # word here: on hash embeddings it recalls none of these 7.
    episodes = [[f"user: {f}", f"2024-05-{i + 1:02d}T10:00:00+00:00"] for i, f in enumerate(FACTS)]
    questions = list(BY_MEANING)
    result = probe(
        "graphiti", proxy, tmp_path / "graphiti", json.dumps(episodes), json.dumps(questions)
    )
    found = dict(zip(questions, result["found"], strict=True))
    assert {q: hits[0] if hits else None for q, hits in found.items()} == BY_MEANING


# Sessions as LongMemEval writes them: a user and a chatty assistant, one episode per session
# (as the graphiti arm ingests a history), names among many sentence-opening capitals.
HISTORY = [
    [
        "user: I'm planning a trip to Japan next month and want to see the temples in Kyoto. "
        "Any tips?\n"
        "assistant: Sure! Kyoto is lovely in spring. Kinkaku-ji and Fushimi Inari Shrine are "
        "worth a morning each, and the Philosopher's Path is a quiet walk. Go early to avoid "
        "the crowds.\n"
        "user: Great, my friend Priya recommended Fushimi Inari too. I'll be staying near Gion "
        "for five nights.\n"
        "assistant: That's a perfect base. Gion is walkable and the buses cover the rest.",
        "2023-04-02T10:00:00+00:00",
    ],
    [
        "user: I just adopted a beagle puppy named Waffles from the Riverside Animal Shelter.\n"
        "assistant: Congratulations! Beagles are curious, so plenty of walks will help. Keep "
        "treats handy for training.\n"
        "user: Thanks. My partner Tom wants to enroll him in puppy classes at PetSmart.\n"
        "assistant: Good idea. Classes help with socialising, and Saturday mornings are usually "
        "quieter.",
        "2023-04-09T10:00:00+00:00",
    ],
    [
        "user: I've been training for the Chicago Marathon in October with a Garmin watch.\n"
        "assistant: That's exciting. Steady long runs and easy recovery days matter most. Also, "
        "remember to practise your race-day breakfast.\n"
        "user: My coach Elena says I should add hill repeats at Lincoln Park.\n"
        "assistant: Absolutely. Hill repeats build strength. Start with six and add one a week.",
        "2023-04-16T10:00:00+00:00",
    ],
    [
        "user: Can you suggest an easy dinner? I'm tired of pasta.\n"
        "assistant: Of course. A sheet-pan chicken with vegetables takes thirty minutes. "
        "Honestly, it's hard to beat.\n"
        "user: Perfect. My sister Mei is visiting from Vancouver on Friday, so I'll make that.\n"
        "assistant: Wonderful. Enjoy the visit, and maybe add a simple salad.",
        "2023-04-23T10:00:00+00:00",
    ],
]


def said_as_name(name: str, text: str) -> bool:
    """Whether `text` writes `name` as a name: a speaker label, a phrase of several words, or a
    word it capitalises somewhere other than at the start of a sentence. "Great" in "Great,
    thanks." is in the text, but only as any sentence's first word is: not a name it says."""
    if re.search(rf"(?m)^{re.escape(name)}:", text):
        return True
    if name.replace("’", "'").split("'")[0] == "I":
        return False  # the pronoun, capitalised everywhere
    for found in re.finditer(rf"(?<![\w'’-]){re.escape(name)}(?!\w)", text):
        before = text[: found.start()].rstrip(" \t\"'(")
        if " " in name or (before and before[-1] not in ".!?:\n"):
            return True
    return False


def test_graphiti_stores_the_names_the_sessions_say(proxy: ProxyProcess, tmp_path: Path) -> None:
    result = probe("graphiti", proxy, tmp_path / "graphiti", json.dumps(HISTORY), "Waffles")
    text = "\n".join(body for body, _ in HISTORY)
    stored = result["stored"]
    named = [name for name in stored if said_as_name(name, text)]
    # Issue 37 item 6: at least 80% of what graphiti stores are names the text says.
    assert len(named) >= 0.8 * len(stored), sorted(set(stored) - set(named))
    assert all(re.search(rf"(?<!\w){re.escape(n)}(?!\w)", text) for n in stored), stored
    assert {"Kyoto", "Fushimi Inari Shrine", "Waffles", "Riverside Animal Shelter"} <= set(stored)
    assert {"Priya", "Tom", "Elena", "Mei", "Vancouver", "Chicago Marathon"} <= set(stored)
    assert result["found"], "graphiti's search found no fact about Waffles"
    assert all(c["status"] == 200 for c in calls(proxy))
