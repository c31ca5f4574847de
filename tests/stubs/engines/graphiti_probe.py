"""Drive the real graphiti-core (engines venv, kuzu store) against a harness proxy.

Run by tests/stubs/test_engines.py with the engines venv's Python, never imported by the project:
    python graphiti_probe.py BASE_URL WORKDIR EPISODES_JSON QUERY
EPISODES_JSON is a list of [text, iso reference time]. Prints one JSON object: {"entities":
[entity names], "edges": [[name, fact]], "found": [facts the search returned], "stored":
[the graph's entity names at the end]}.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from datetime import datetime

# kuzu in graphiti-core 0.31.2 fails on any explicit group_id (KuzuDriver has no `_database`),
# so episodes go to the default group.
# Before graphiti is imported: its telemetry would try the network.
os.environ["GRAPHITI_TELEMETRY_ENABLED"] = "false"


async def run(base_url: str, workdir: str, episodes: list[list[str]], query: str) -> dict:
    import kuzu
    from graphiti_core import Graphiti
    from graphiti_core.cross_encoder.openai_reranker_client import OpenAIRerankerClient
    from graphiti_core.driver.driver import GraphProvider
    from graphiti_core.driver.kuzu_driver import KuzuDriver
    from graphiti_core.embedder.openai import OpenAIEmbedder, OpenAIEmbedderConfig
    from graphiti_core.graph_queries import get_fulltext_indices
    from graphiti_core.llm_client.config import LLMConfig
    from graphiti_core.llm_client.openai_client import OpenAIClient

    llm_config = LLMConfig(
        api_key="sk-placeholder",
        base_url=base_url,
        model="gpt-4.1-mini",
        small_model="gpt-4.1-nano",
    )
    driver = KuzuDriver(db=os.path.join(workdir, "graph.kuzu"))
    # The kuzu driver's build_indices_and_constraints is a no-op that leaves out the full-text
    # indexes its own search queries need, so they are made here, as a user must.
    conn = kuzu.Connection(driver.db)
    for statement in get_fulltext_indices(GraphProvider.KUZU):
        conn.execute(statement)
    conn.close()
    graphiti = Graphiti(
        graph_driver=driver,
        llm_client=OpenAIClient(config=llm_config),
        embedder=OpenAIEmbedder(
            OpenAIEmbedderConfig(
                api_key="sk-placeholder",
                base_url=base_url,
                embedding_model="text-embedding-3-small",
            )
        ),
        cross_encoder=OpenAIRerankerClient(config=llm_config),
    )
    await graphiti.build_indices_and_constraints()
    entities: list[str] = []
    edges: list[list[str]] = []
    for i, (text, when) in enumerate(episodes):
        result = await graphiti.add_episode(
            name=f"turn-{i}",
            episode_body=text,
            source_description="chat",
            reference_time=datetime.fromisoformat(when),
        )
        entities.extend(n.name for n in result.nodes)
        edges.extend([e.name, e.fact] for e in result.edges)
    # A query that is a JSON list runs a search for each; "found" is then a list of results.
    if query.startswith("["):
        found: list = [[e.fact for e in await graphiti.search(q)] for q in json.loads(query)]
    else:
        found = [e.fact for e in await graphiti.search(query)]
    # What the graph holds at the end (the nodes after graphiti's own merging), as the arm's
    # snapshot exports it.
    from graphiti_core.helpers import get_default_group_id
    from graphiti_core.nodes import EntityNode

    group = [get_default_group_id(driver.provider)]
    stored = sorted(n.name for n in await EntityNode.get_by_group_ids(driver, group))
    await graphiti.close()
    return {"entities": entities, "edges": edges, "found": found, "stored": stored}


def main() -> None:
    base_url, workdir, episodes_json, query = sys.argv[1:5]
    print(json.dumps(asyncio.run(run(base_url, workdir, json.loads(episodes_json), query))))


if __name__ == "__main__":
    main()
