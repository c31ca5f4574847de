"""A toy arm for gate and audit tests: one OpenAI chat call per turn through the proxy.

GATE_ARM_VOLATILE chooses what the arm lets vary between two runs of the same script:
`time` puts time.time() in its system prompt (messages.0.content), `uuid` puts a random id in
the request's metadata (metadata.trace_id), anything else nothing. The reply's text is the
model's, so a turn's answer depends on the call going through.
"""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import AsyncIterator
from typing import Any

import openai

from arms.arm import Arm
from arms.seam import OpenSession, Turn
from arms.server import main


class GateToyArm(Arm):
    name = "gate-toy"

    def __init__(self) -> None:
        self.client = openai.AsyncOpenAI(max_retries=0)
        self.volatile = os.environ.get("GATE_ARM_VOLATILE", "")

    async def open_session(self, session: OpenSession) -> None:
        pass

    async def turn(self, session_id: str, turn: Turn) -> AsyncIterator[str]:
        system = "You answer briefly."
        extra: dict[str, Any] = {}
        if self.volatile == "time":
            system += f" The request was sent at {time.time()}."
        elif self.volatile == "uuid":
            extra["metadata"] = {"trace_id": uuid.uuid4().hex}
        reply = await self.client.chat.completions.create(
            model="gpt-4.1-mini",
            messages=[
                {"role": "system", "content": system},
                {"role": "user", "content": turn.user},
            ],
            max_completion_tokens=64,
            extra_body=extra or None,
            extra_headers={"X-Harness-Purpose": "main"},
        )
        yield reply.choices[0].message.content or ""


if __name__ == "__main__":
    main(GateToyArm)
