"""Which vendor a request is for, and the vendor path it asks for.

Arms point their SDKs at `http://proxy:PORT/<vendor>` (the exports `harness proxy serve` prints),
so the first path segment names the vendor. Engines that hard-code vendor hosts come in through
HTTPS_PROXY instead and keep the vendor's host name. Anything else is told apart by the headers
each SDK always sends.
"""

from __future__ import annotations

from typing import Literal

# The vendors the proxy speaks for; stubs and live mode take the name from here.
Vendor = Literal["anthropic", "openai", "cohere", "voyage"]

VENDORS: tuple[Vendor, ...] = ("anthropic", "openai", "cohere", "voyage")

VENDOR_HOSTS: dict[str, Vendor] = {
    "api.anthropic.com": "anthropic",
    "api.openai.com": "openai",
    "api.cohere.com": "cohere",
    "api.cohere.ai": "cohere",
    "api.voyageai.com": "voyage",
}

# Anthropic paths an SDK may ask for without their /v1 (see split_vendor).
UNVERSIONED_ANTHROPIC = frozenset({"messages", "models"})

DEFAULT_UPSTREAMS: dict[Vendor, str] = {
    "anthropic": "https://api.anthropic.com",
    "openai": "https://api.openai.com",
    "cohere": "https://api.cohere.com",
    "voyage": "https://api.voyageai.com",
}


def split_vendor(path: str, host: str, headers: dict[str, str]) -> tuple[Vendor, str]:
    """(vendor, path without the vendor prefix and query string)."""
    bare = path.split("?", 1)[0]
    for vendor in VENDORS:
        prefix = "/" + vendor
        if bare == prefix or bare.startswith(prefix + "/"):
            rest = bare[len(prefix) :] or "/"
            if vendor == "anthropic" and rest.split("/")[1] in UNVERSIONED_ANTHROPIC:
                # The AI SDK's @ai-sdk/anthropic takes a base URL that ends in /v1 and posts
                # `${baseURL}/messages`: with ANTHROPIC_BASE_URL=.../anthropic that is
                # /anthropic/messages, which means Anthropic's /v1/messages (in both modes:
                # live forwards this path).
                rest = "/v1" + rest
            return vendor, rest
    hostname = host.split(":", 1)[0].lower()
    if hostname in VENDOR_HOSTS:
        return VENDOR_HOSTS[hostname], bare
    if "anthropic-version" in headers:
        return "anthropic", bare
    if bare.startswith("/v2/rerank"):
        return "cohere", bare
    if bare.startswith("/v1/rerank"):
        return "voyage", bare
    return "openai", bare


def default_purpose(route: str) -> str:
    """A call's purpose when neither its X-Harness-Purpose header nor a study's `[purposes]`
    rule (rundir/control/proxy_file.py's PurposeRule, applied by the addon) names one."""
    if route.endswith(".embeddings"):
        return "embedding"
    if route.endswith(".rerank"):
        return "rerank"
    return "main"
