"""The environment that points the official SDKs at an arm's proxy listener.

Every arm gets placeholder keys only: the study's real keys stay with the proxy (live mode), so an
arm that logs or leaks its environment leaks nothing. Both backends set these last, over the arm's
own environment, and `harness proxy serve` prints them as shell exports.
"""

from __future__ import annotations

PLACEHOLDER_KEY = "harness-placeholder-key"


def sdk_env(host: str, port: int) -> dict[str, str]:
    """The variables that point the official SDKs at the proxy, with placeholder keys."""
    shown = "127.0.0.1" if host in ("0.0.0.0", "") else host
    base = f"http://{shown}:{port}"
    return {
        "ANTHROPIC_BASE_URL": f"{base}/anthropic",
        "ANTHROPIC_API_KEY": PLACEHOLDER_KEY,
        "OPENAI_BASE_URL": f"{base}/openai/v1",
        # The older name, still the one llama-index, langchain's older integrations and litellm
        # read: without it they go for api.openai.com.
        "OPENAI_API_BASE": f"{base}/openai/v1",
        "OPENAI_API_KEY": PLACEHOLDER_KEY,
        "CO_API_URL": f"{base}/cohere",
        "CO_API_KEY": PLACEHOLDER_KEY,
        "VOYAGE_API_BASE": f"{base}/voyage/v1",
        "VOYAGE_API_KEY": PLACEHOLDER_KEY,
    }
