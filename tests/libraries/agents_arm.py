"""An openai-agents arm: a two-tool agent, `tool_choice` left unset, as its docs write one.

Run in .cache/libs-venv (scripts/library-venvs) with the repository on PYTHONPATH, by a study of
tests/libraries/test_agent_loops.py. The SDK finds the proxy by itself (OPENAI_BASE_URL and the
placeholder key the harness gives every arm); tracing is off, since it would post to OpenAI.
Each turn runs the agent on the conversation so far; the reply is the agent's final output.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from typing import Any

from agents import Agent, Runner, function_tool, set_tracing_disabled

from arms.arm import Arm
from arms.seam import OpenSession, Turn
from arms.server import main

# What the tools answer: fixed, so a reply that uses a result is recognisable.
WEATHER = "Sunny and 21 C"
RATE = 1.08


@function_tool
def get_weather(city: str) -> str:
    """Get the current weather for a city."""
    return f"{WEATHER} in {city}"


@function_tool
def convert_currency(amount: float, from_currency: str, to_currency: str) -> str:
    """Convert an amount of money from one currency to another."""
    return f"{amount:g} {from_currency} is {amount * RATE:.2f} {to_currency}"


class AgentsArm(Arm):
    name = "openai-agents"

    def __init__(self) -> None:
        set_tracing_disabled(True)
        self.agent = Agent(
            name="assistant",
            instructions="You are a helpful assistant. Use your tools when they help.",
            model=os.environ.get("ARM_MODEL", "gpt-4.1-mini"),
            tools=[get_weather, convert_currency],
        )
        self.history: dict[str, list[Any]] = {}

    async def open_session(self, session: OpenSession) -> None:
        self.history[session.session_id] = []

    async def turn(self, session_id: str, turn: Turn) -> AsyncIterator[str]:
        given = [*self.history[session_id], {"role": "user", "content": turn.user_message()}]
        result = await Runner.run(self.agent, given, max_turns=6)
        self.history[session_id] = result.to_input_list()
        yield str(result.final_output)


if __name__ == "__main__":
    main(AgentsArm)
