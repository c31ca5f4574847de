"""A langmem arm, written as its docs write a memory agent: each turn recalls from a LangGraph
store by the user's words into the system prompt, answers with ChatOpenAI, then hands the
exchange to langmem's memory store manager, which decides what to store.

Run in .cache/libs-venv with the repository on PYTHONPATH, by tests/libraries/test_langmem_arm.py.
langmem gives each memory a random uuid and shows the ids to its extractor, so a study of it
masks them (`mask = ["~uuid"]`, docs/studies.md).
"""

from __future__ import annotations

from collections.abc import AsyncIterator

from langchain_openai import ChatOpenAI, OpenAIEmbeddings
from langgraph.store.memory import InMemoryStore
from langmem import create_memory_store_manager

from arms.arm import Arm
from arms.seam import OpenSession, Turn
from arms.server import main

DIMS = 256


class LangmemArm(Arm):
    name = "langmem"

    def __init__(self) -> None:
        # check_embedding_ctx_length=False: the default counts tokens with tiktoken, whose first
        # use downloads its encoding (a library need, not the proxy's).
        embeddings = OpenAIEmbeddings(
            model="text-embedding-3-small", dimensions=DIMS, check_embedding_ctx_length=False
        )
        self.store = InMemoryStore(index={"dims": DIMS, "embed": embeddings})
        self.llm = ChatOpenAI(model="gpt-4.1-mini", max_retries=0)
        self.manager = create_memory_store_manager(
            self.llm, namespace=("memories", "{session}"), store=self.store
        )

    async def open_session(self, session: OpenSession) -> None:
        pass

    async def turn(self, session_id: str, turn: Turn) -> AsyncIterator[str]:
        said = turn.user_message()
        user = session_id.replace(".", "_")  # LangGraph's namespace labels refuse periods
        found = await self.store.asearch(("memories", user), query=said, limit=3)
        remembered = "\n".join(f"- {item.value['content']}" for item in found)
        system = "You are a helpful assistant."
        if remembered:
            system += f"\n\nWhat you remember about the user:\n{remembered}"
        reply = await self.llm.ainvoke([("system", system), ("user", said)])
        text = str(reply.content)
        exchange = [{"role": "user", "content": said}, {"role": "assistant", "content": text}]
        await self.manager.ainvoke(
            {"messages": exchange}, config={"configurable": {"session": user}}
        )
        yield text


if __name__ == "__main__":
    main(LangmemArm)
