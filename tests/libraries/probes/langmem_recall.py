"""langmem's memory store manager stores what the user says and the store recalls it by meaning,
run in .cache/libs-venv against the proxy named by the exports in this process's environment.
Prints the stored memories and what a search for a paraphrase found, as JSON."""

import json

from langchain_openai import ChatOpenAI, OpenAIEmbeddings
from langgraph.store.memory import InMemoryStore
from langmem import create_memory_store_manager

DIMS = 256
# check_embedding_ctx_length=False: the default counts tokens with tiktoken, whose first use
# downloads its encoding (a library need, not the proxy's).
embeddings = OpenAIEmbeddings(
    model="text-embedding-3-small", dimensions=DIMS, check_embedding_ctx_length=False
)
store = InMemoryStore(index={"dims": DIMS, "embed": embeddings})
manager = create_memory_store_manager(
    ChatOpenAI(model="gpt-4.1-mini", max_retries=0), namespace=("memories",), store=store
)
said = [
    {"role": "user", "content": "My sister lives in Lisbon."},
    {"role": "assistant", "content": "Good to know."},
]
manager.invoke({"messages": said})
stored = [item.value for item in store.search(("memories",))]
found = [item.value for item in store.search(("memories",), query="Where does my family live?")]
print(json.dumps({"stored": stored, "found": found}, default=str))
