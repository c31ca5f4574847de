"""Record mode's embeddings and rerank: static MiniLM vectors (the default), hash, real MiniLM,
WordPiece.

What other parts use is imported here and listed in `__all__`: they import it from this face,
never from a module inside (tests/test_layout.py holds that)."""

from stubs.vectors.embeddings import embed_texts
from stubs.vectors.minilm import MinilmUnavailable, check_available
from stubs.vectors.static import table

__all__ = [
    "MinilmUnavailable",
    "check_available",
    "embed_texts",
    "table",
]
