"""Drive the real mem0 (engines venv) against a harness proxy; print what it stored and found.

Run by tests/stubs/test_engines.py with the engines venv's Python, never imported by the project:
    python mem0_probe.py BASE_URL WORKDIR MESSAGES_JSON QUERY
BASE_URL is the proxy's OpenAI base (http://127.0.0.1:PORT/openai/v1). Prints one JSON object:
{"added": [...], "stored": [memory texts], "found": [memory texts of the search]}. A QUERY that
is a JSON list runs a search for each, and "found" is the list of their results.
"""

from __future__ import annotations

import json
import os
import sys

# Before mem0 is imported: its telemetry would try the network at import time.
os.environ["MEM0_TELEMETRY"] = "False"


def main() -> None:
    base_url, workdir, messages_json, query = sys.argv[1:5]
    os.environ["MEM0_DIR"] = os.path.join(workdir, "mem0home")
    from mem0 import Memory

    config = {
        "vector_store": {
            "provider": "qdrant",
            "config": {
                "collection_name": "probe",
                "path": os.path.join(workdir, "qdrant"),
                "embedding_model_dims": 1536,
                "on_disk": True,
            },
        },
        "llm": {
            "provider": "openai",
            "config": {
                "model": "gpt-4.1-nano",
                "api_key": "sk-placeholder",
                "openai_base_url": base_url,
            },
        },
        "embedder": {
            "provider": "openai",
            "config": {
                "model": "text-embedding-3-small",
                "api_key": "sk-placeholder",
                "openai_base_url": base_url,
            },
        },
        "history_db_path": os.path.join(workdir, "history.db"),
    }
    memory = Memory.from_config(config)
    added = []
    for turn in json.loads(messages_json):
        added.append(memory.add(turn, user_id="alice"))
    stored = [m["memory"] for m in memory.get_all(filters={"user_id": "alice"})["results"]]

    def search(text: str) -> list[str]:
        hits = memory.search(text, filters={"user_id": "alice"}, top_k=3)["results"]
        return [m["memory"] for m in hits]

    found = [search(q) for q in json.loads(query)] if query.startswith("[") else search(query)
    print(json.dumps({"added": added, "stored": stored, "found": found}))


if __name__ == "__main__":
    main()
