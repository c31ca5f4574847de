"""litellm's Anthropic structured output (`response_format=Model`, which litellm sends as the
structured-outputs beta's top-level `output_format` for models that have it), plain and streamed,
run in .cache/libs-venv against the proxy named by the exports in this process's environment.
Prints both validated objects as JSON."""

import json
import os

# The bundled price table and beta-header list: a probe has no internet to fetch them from.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("LITELLM_LOCAL_ANTHROPIC_BETA_HEADERS", "True")

import litellm
from pydantic import BaseModel


class Person(BaseModel):
    name: str
    age: int
    city: str


MESSAGES = [{"role": "user", "content": "Lena is 34 years old and lives in Porto."}]
MODEL = "anthropic/claude-sonnet-4-5-20250929"

plain = litellm.completion(model=MODEL, messages=MESSAGES, response_format=Person, max_tokens=500)
streamed = litellm.completion(
    model=MODEL, messages=MESSAGES, response_format=Person, max_tokens=500, stream=True
)
text = "".join(chunk.choices[0].delta.content or "" for chunk in streamed)
print(
    json.dumps(
        {
            "plain": Person.model_validate_json(plain.choices[0].message.content).model_dump(),
            "streamed": Person.model_validate_json(text).model_dump(),
        }
    )
)
