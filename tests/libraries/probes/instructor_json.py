"""instructor in JSON mode (response_format json_object, the schema in the prompt), run in
.cache/libs-venv against the proxy named by the exports in this process's environment. Prints
the validated object as JSON."""

import json

import instructor
import openai
from pydantic import BaseModel


class Person(BaseModel):
    name: str
    age: int
    city: str


client = instructor.from_openai(openai.OpenAI(max_retries=0), mode=instructor.Mode.JSON)
person = client.chat.completions.create(
    model="gpt-4.1-mini",
    response_model=Person,
    messages=[{"role": "user", "content": "Lena is 34 years old and lives in Porto."}],
    max_retries=1,
)
print(json.dumps(person.model_dump()))
