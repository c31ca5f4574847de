"""A toy engine that hard-codes the vendors' hosts, started by the harness as
`python hardcoded_arm.py`: it ignores the base URLs the harness exports and calls
https://api.openai.com and https://api.anthropic.com itself, as some memory engines do. Only the
harness's HTTPS_PROXY and CA variables (inherited, never named here) get it to the proxy.

Each user message is a command: `openai WORDS` (a chat completion, the reply's text);
`anthropic WORDS` (a streamed Messages call, the streamed text); `fetch URL` (a plain GET
through the same environment, e.g. to a host that is not a vendor: says what happened).
"""

from __future__ import annotations

import asyncio
import urllib.request
from collections.abc import AsyncIterator

import anthropic
import openai

from arms.arm import Arm
from arms.seam import OpenSession, Turn
from arms.server import main

OPENAI_URL = "https://api.openai.com/v1"
ANTHROPIC_URL = "https://api.anthropic.com"


def _openai(words: str) -> str:
    client = openai.OpenAI(base_url=OPENAI_URL, max_retries=0)
    with client:
        reply = client.chat.completions.create(
            model="gpt-4.1-mini", messages=[{"role": "user", "content": words}], max_tokens=64
        )
    return reply.choices[0].message.content or ""


def _anthropic(words: str) -> str:
    client = anthropic.Anthropic(base_url=ANTHROPIC_URL, max_retries=0)
    with (
        client,
        client.messages.stream(
            model="claude-haiku-4-5-20251001",
            max_tokens=64,
            messages=[{"role": "user", "content": words}],
        ) as stream,
    ):
        return "".join(stream.text_stream)


def _fetch(url: str) -> str:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return f"fetched {response.status}"
    except Exception as e:  # any failure is the answer: the test reads what happened
        return f"failed: {type(e).__name__}: {e}"


class HardcodedHostsArm(Arm):
    name = "hardcoded-hosts"

    async def open_session(self, session: OpenSession) -> None:
        pass

    async def turn(self, session_id: str, turn: Turn) -> AsyncIterator[str]:
        command, _, rest = turn.user.partition(" ")
        call = {"openai": _openai, "anthropic": _anthropic, "fetch": _fetch}[command]
        yield await asyncio.to_thread(call, rest)


if __name__ == "__main__":
    main(HardcodedHostsArm)
