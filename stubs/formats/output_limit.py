"""The caller's output limit (`max_tokens` and its kin), honoured by the text stubs.

A reranker that asks for one token with logprobs (graphiti's OpenAIRerankerClient) reads the
first token's alternatives; a 21-token reply starting "Noted" tells it nothing and breaks its
parse. So a reply is cut at the limit, as the model would stop: the text is exactly the first N
tokens of the usual reply, the usage says N, and logprobs are made for those same tokens.
"""

from __future__ import annotations

from vendors.tokens import estimate_tokens


def cut_to_tokens(
    text: str, tokens: list[str], room: int | None
) -> tuple[str, list[str], int, bool]:
    """(text, its tokens, tokens billed, whether it was cut) for a reply with `room` tokens."""
    if room is None:
        return text, tokens, estimate_tokens(text), False
    if len(tokens) > room:
        kept = tokens[:room]
        return "".join(kept), kept, len(kept), True
    # A short reply never bills past the limit, even where the estimate would round up.
    return text, tokens, min(estimate_tokens(text), room) if room else 0, False
