"""The `graphiti` engine arm: Graphiti (graphiti-core 0.31) with an embedded Kuzu graph.

Each seam session is its own Kuzu database in the arm's store (`<session>.kuzu`), with
Graphiti's default group: graphiti-core 0.31.2's `add_episode(group_id=...)` reads a
`_database` attribute the Kuzu driver does not have (AttributeError), and a database per
session keeps items apart as well. Each finished turn's user message is one `message` episode at
the item's pinned clock; a turn recalls the facts (edges) Graphiti's hybrid search finds.

Kuzu's full-text indexes are made here: Graphiti's `build_indices_and_constraints` is a no-op
for Kuzu (driver/kuzu_driver.py) while its searches call QUERY_FTS_INDEX on them, so without
them the first edge search fails ("doesn't have an index with name edge_name_and_fact"). The
FTS extension ships inside the kuzu 0.11 wheel, so nothing is downloaded.

Telemetry is off unless the study turns it on: Graphiti reads GRAPHITI_TELEMETRY_ENABLED
("true" by default, then posthog) when it first reports, so the default is set at start.
"""

from __future__ import annotations

import os
import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import openai

from arms.chat import ChatConfig
from arms.engine import UTILITY_HEADERS, EngineArm, safe_name
from arms.seam import Ingest, OpenSession, Turn

if TYPE_CHECKING:
    from graphiti_core import Graphiti

DEFAULT_LLM = "gpt-4.1-mini"
DEFAULT_SMALL_LLM = "gpt-4.1-nano"
DEFAULT_EMBEDDER = "text-embedding-3-small"


@dataclass
class Graph:
    graphiti: Graphiti
    episodes: int = 0
    # The graph was on disk when its session opened (a copy of an ingested store, seam v2):
    # it may hold facts though this process added no episode.
    reopened: bool = False


class GraphitiArm(EngineArm):
    name = "graphiti"
    recall_title = "Facts you remember from earlier in this conversation"

    def __init__(self, config: ChatConfig | None = None) -> None:
        super().__init__(config)
        os.environ.setdefault("GRAPHITI_TELEMETRY_ENABLED", "false")
        from graphiti_core.cross_encoder.openai_reranker_client import OpenAIRerankerClient
        from graphiti_core.embedder.openai import OpenAIEmbedder, OpenAIEmbedderConfig
        from graphiti_core.llm_client.config import LLMConfig
        from graphiti_core.llm_client.openai_client import OpenAIClient

        llm = LLMConfig(
            model=os.environ.get("ARM_ENGINE_MODEL", DEFAULT_LLM),
            small_model=os.environ.get("ARM_ENGINE_SMALL_MODEL", DEFAULT_SMALL_LLM),
        )
        # One set of clients for every session's graph; their calls are the engine's, not the
        # arm's main call.
        utility = openai.AsyncOpenAI(default_headers=UTILITY_HEADERS)
        self.clients: dict[str, Any] = {
            "llm_client": OpenAIClient(llm, client=utility),
            "embedder": OpenAIEmbedder(
                OpenAIEmbedderConfig(embedding_model=self.embed_model),
                client=openai.AsyncOpenAI(),
            ),
            "cross_encoder": OpenAIRerankerClient(
                llm, client=openai.AsyncOpenAI(default_headers={"X-Harness-Purpose": "rerank"})
            ),
        }
        self.graphs: dict[str, Graph] = {}

    def _open_graph(self, session: OpenSession) -> Graph:
        import kuzu
        from graphiti_core import Graphiti
        from graphiti_core.driver.driver import GraphProvider
        from graphiti_core.driver.kuzu_driver import KuzuDriver
        from graphiti_core.graph_queries import get_fulltext_indices

        with warnings.catch_warnings():
            # "The Kuzu backend is deprecated": the pinned version is what the study measures.
            warnings.simplefilter("ignore", DeprecationWarning)
            path = self.store / f"{safe_name(session.session_id)}.kuzu"
            reopened = path.exists()
            driver = KuzuDriver(db=str(path))
        # A reopened graph (a copy of an ingested store, seam v2) has its indexes already.
        connection = kuzu.Connection(driver.db)
        try:
            for query in [] if reopened else get_fulltext_indices(GraphProvider.KUZU):
                connection.execute(query)
        finally:
            connection.close()
        return Graph(Graphiti(graph_driver=driver, **self.clients), reopened=reopened)

    async def open_session(self, session: OpenSession) -> None:
        await super().open_session(session)
        self.graphs[session.session_id] = self._open_graph(session)

    async def recall(self, session: OpenSession, query: str) -> list[str]:
        graph = self.graphs[session.session_id]
        if not graph.episodes and not graph.reopened:  # empty: save the search's embedding
            return []
        # Graphiti's `search` ranks by reciprocal rank fusion, whose ties (a fact first by words
        # and second by meaning, another the other way round) keep the order Kuzu's full-text
        # query returned them in, which is not fixed: the same store then gave the model its
        # facts in another order, so a replay missed its recorded request. `search_` gives the
        # fused scores; ties are broken by the fact's text. (It also leaves the shared
        # EDGE_HYBRID_SEARCH_RRF config alone, which `search` sets the limit on.)
        from graphiti_core.search.search_config_recipes import EDGE_HYBRID_SEARCH_RRF

        config = EDGE_HYBRID_SEARCH_RRF.model_copy(update={"limit": self.k_for(session)})
        results = await graph.graphiti.search_(query, config=config)
        scores = results.edge_reranker_scores or [0.0] * len(results.edges)
        ranked = sorted(zip(scores, results.edges, strict=True), key=lambda p: (-p[0], p[1].fact))
        return [edge.fact for _, edge in ranked]

    async def remember(self, session: OpenSession, turn: Turn, message: str) -> None:
        from graphiti_core.nodes import EpisodeType

        graph = self.graphs[session.session_id]
        await graph.graphiti.add_episode(
            name=f"turn-{turn.turn}",
            episode_body=f"user: {message}",
            source=EpisodeType.message,
            source_description="conversation with the user",
            reference_time=turn.clock,
        )
        graph.episodes += 1

    async def remember_session(self, session: OpenSession, ingest: Ingest) -> int:
        from graphiti_core.nodes import EpisodeType

        # One episode per history session, at its date: Graphiti dates the facts it extracts
        # by the episode's reference time.
        graph = self.graphs[session.session_id]
        body = "\n".join(f"{m.speaker or m.role}: {m.content}" for m in ingest.messages)
        if not body:
            return 0
        await graph.graphiti.add_episode(
            name=f"history-{ingest.session_id}",
            episode_body=body,
            source=EpisodeType.message,
            source_description="earlier conversation with the user",
            reference_time=ingest.date,
        )
        graph.episodes += 1
        return 1

    async def dump(self, session: OpenSession) -> dict[str, Any]:
        from graphiti_core.edges import EntityEdge
        from graphiti_core.helpers import get_default_group_id
        from graphiti_core.nodes import EntityNode

        graph = self.graphs[session.session_id]
        driver = graph.graphiti.driver
        group = [get_default_group_id(driver.provider)]
        nodes = await EntityNode.get_by_group_ids(driver, group)
        edges = await EntityEdge.get_by_group_ids(driver, group)
        names = {node.uuid: node.name for node in nodes}
        return {
            "engine": "graphiti",
            "episodes": graph.episodes,
            "entities": [{"name": n.name, "summary": n.summary} for n in nodes],
            "facts": [
                {
                    "name": e.name,
                    "fact": e.fact,
                    "source": names.get(e.source_node_uuid),
                    "target": names.get(e.target_node_uuid),
                }
                for e in edges
            ],
        }

    async def forget(self, session: OpenSession) -> None:
        graph = self.graphs.pop(session.session_id, None)
        if graph is not None:
            await graph.graphiti.close()

    async def shutdown(self) -> None:
        await super().shutdown()
        for graph in list(self.graphs.values()):
            await graph.graphiti.close()
        self.graphs.clear()
