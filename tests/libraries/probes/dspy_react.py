"""dspy's ReAct with two tools (its `[[ ## field ## ]]` protocol through litellm), run in
.cache/libs-venv against the proxy named by OPENAI_API_BASE and OPENAI_API_KEY. Prints the
answer and the trajectory as JSON."""

import json
import os

import dspy


def get_weather(city: str) -> str:
    """Get the current weather for a city."""
    return f"Sunny and 21 C in {city}"


def convert_currency(amount: float, from_currency: str, to_currency: str) -> str:
    """Convert an amount of money from one currency to another."""
    return f"{amount:g} {from_currency} is {amount * 1.08:.2f} {to_currency}"


lm = dspy.LM(
    "openai/gpt-4.1-mini",
    api_base=os.environ["OPENAI_API_BASE"],
    api_key=os.environ["OPENAI_API_KEY"],
    cache=False,
    num_retries=0,
)
dspy.configure(lm=lm)
react = dspy.ReAct("question -> answer", tools=[get_weather, convert_currency], max_iters=5)
prediction = react(question="What is the weather in Lisbon right now?")
print(json.dumps({"answer": prediction.answer, "trajectory": prediction.trajectory}, default=str))
