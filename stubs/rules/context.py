"""Settings every stub handler receives alongside the request."""

from __future__ import annotations

from dataclasses import dataclass, field

from stubs.rules.replies import ReplyBook


@dataclass(frozen=True)
class StubContext:
    book: ReplyBook = field(default_factory=ReplyBook.default)
    # The default embedding width when a request names no `dimensions` (text-embedding-3-small's).
    embedding_dims: int = 1536

    @property
    def embedding_model(self) -> str:
        """The stubs file's `[embeddings] model` (stubs.vectors.embeddings.VectorSettings)."""
        return self.book.stubs.embeddings.model
