"""Record mode's embeddings and rerank: static MiniLM vectors (the default), hash, real MiniLM,
WordPiece.

Submodules are imported where used (not here), so loading one does not load the others."""

__all__ = [
    "embeddings",
    "minilm",
    "rerank",
    "static",
    "wordpiece",
]
