"""What each vendor route accepts: the checks that decide a vendor's 400, word for word, and the
parameters a body is read into. Run by proxy.flow.intake in every mode (`body.check_body`); the
record-mode stubs answer by what they return.

Submodules are imported where used (not here), so loading one does not load the others."""

__all__ = [
    "anthropic_cache",
    "anthropic_compat",
    "anthropic_messages",
    "body",
    "embeddings",
    "openai_chat",
    "openai_common",
    "openai_options",
    "openai_responses",
    "openai_tools",
    "rerank",
]
