"""Record mode's embeddings and rerank: static MiniLM vectors (the default), hash, real MiniLM,
WordPiece.

Submodules are imported where used (not here), so loading one does not load the others."""

from stubs.vectors.embeddings import embed_texts
from stubs.vectors.minilm import MinilmUnavailable, check_available
from stubs.vectors.static import table

__all__ = [
    "MinilmUnavailable",
    "check_available",
    "embed_texts",
    "table",
]
