"""stubs.schema.patch_doc: langmem's second extraction (trustcall's `PatchDoc` beside `Memory`,
tool_choice
required, the existing memory shown in the system prompt) gets a patch of a document the prompt
shows with the user's newest fact, and the memory call the user's words, not the instructions.

tests/stubs/schema/data/langmem_second_extraction.json is the request langmem 0.0.30 sent through a
record proxy on its second `invoke` (first "My sister lives in Lisbon.", then "I drive a red
Tesla."), read from the run's bodies."""

from __future__ import annotations

import copy
import json
import time
from pathlib import Path
from typing import Any

import jsonschema

from stubs.anthropic.messages import messages as anthropic_messages
from stubs.openai.chat import chat_completions
from stubs.prompt.grounding import grounding_from
from stubs.request import StubRequest
from stubs.rules.context import StubContext
from stubs.schema.patch_doc import is_patch_tool, patch_doc_input, shown_docs
from tests.stubs.sdk_transport import body_digest

CAPTURED = json.loads(
    (Path(__file__).parent / "data" / "langmem_second_extraction.json").read_text()
)
SHOWN_ID = "3cef046c78825fc282f864d3a36b2c47"  # the Lisbon memory's id in the captured prompt
BANNER_HUMAN = "=" * 32 + " Human Message " + "=" * 33
BANNER_AI = "=" * 34 + " Ai Message " + "=" * 34


def with_session(user: str, ai: str, system: str | None = None) -> dict[str, Any]:
    """The captured request with another exchange in its <session_...> tag."""
    body = copy.deepcopy(CAPTURED)
    head, _, rest = body["messages"][1]["content"].partition("<session_")
    tag = "session_" + rest.split(">", 1)[0]
    body["messages"][1]["content"] = (
        f"{head}<{tag}>\n{BANNER_HUMAN}\n\n{user}\n\n{BANNER_AI}\n\n{ai}\n</{tag}>"
    )
    if system is not None:
        body["messages"][0]["content"] = system
    return body


def calls(body: dict[str, Any], forced: str | None = None) -> list[tuple[str, Any]]:
    if forced is not None:
        body = {**body, "tool_choice": {"type": "function", "function": {"name": forced}}}
    reply = chat_completions(
        StubRequest("openai", "openai.chat", body, body_digest(body)), StubContext()
    )
    message = json.loads(b"".join(reply.chunks))["choices"][0]["message"]
    return [
        (c["function"]["name"], json.loads(c["function"]["arguments"]))
        for c in message.get("tool_calls") or []
    ]


def patch_schema() -> dict[str, Any]:
    (tool,) = [t for t in CAPTURED["tools"] if t["function"]["name"] == "PatchDoc"]
    schema: dict[str, Any] = tool["function"]["parameters"]
    return schema


def apply(doc: dict[str, Any], patches: list[dict[str, Any]]) -> dict[str, Any]:
    """trustcall's replace of a top-level field, the only op the stub sends."""
    out = dict(doc)
    for patch in patches:
        assert patch["op"] == "replace" and patch["path"].count("/") == 1
        key = patch["path"][1:].replace("~1", "/").replace("~0", "~")
        assert key in out  # a path into the document, or trustcall fails to apply it
        out[key] = patch["value"]
    return out


def test_the_captured_second_extraction_stores_the_new_fact_not_the_instructions() -> None:
    assert calls(CAPTURED) == [("Memory", {"content": "I drive a red Tesla."})]


def test_patchdoc_names_the_shown_document_and_writes_the_users_fact_into_it() -> None:
    body = with_session("My sister moved to Porto.", "Noted.")
    ((name, args),) = calls(body, forced="PatchDoc")
    assert name == "PatchDoc"
    jsonschema.validate(args, patch_schema())
    assert args["json_doc_id"] == SHOWN_ID
    patched = apply({"content": "My sister lives in Lisbon."}, args["patches"])
    assert patched == {"content": "My sister moved to Porto."}
    assert "You are" not in json.dumps(args)


def test_of_several_documents_the_one_the_user_speaks_of_is_patched() -> None:
    system = (
        "You are a memory subroutine for an AI.\n\nGenerate JSONPatches.\n<existing>\n"
        '<instance id=aaa111 schema_type="Memory">\n'
        "{'content': 'I drive a red Tesla.'}\n</instance>\n"
        '<instance id=bbb222 schema_type="Memory">\n'
        "{'content': 'My sister lives in Lisbon.'}\n</instance>\n</existing>\n"
    )
    body = with_session("My sister now lives in Porto.", "Noted.", system)
    ((_, args),) = calls(body, forced="PatchDoc")
    assert args["json_doc_id"] == "bbb222"
    assert args["patches"] == [
        {"op": "replace", "path": "/content", "value": "My sister now lives in Porto."}
    ]


def test_a_question_patches_nothing() -> None:
    body = with_session("Where does my family live?", "I understand.")
    ((_, args),) = calls(body, forced="PatchDoc")
    assert args["json_doc_id"] == SHOWN_ID and args["patches"] == []


def test_without_a_shown_document_the_input_is_the_schema_instance() -> None:
    body = with_session("My sister moved to Porto.", "Noted.", "You are a memory subroutine.")
    ((_, args),) = calls(body, forced="PatchDoc")
    jsonschema.validate(args, patch_schema())  # still valid, just not a known id
    assert patch_doc_input(["no documents here"], grounding_from("I moved.")) is None


def test_the_patch_tool_is_recognised_by_its_shape_only() -> None:
    assert is_patch_tool(patch_schema())
    memory = CAPTURED["tools"][1]["function"]["parameters"]
    assert not is_patch_tool(memory)
    assert not is_patch_tool({"properties": {"json_doc_id": {}, "patches": {"type": "string"}}})
    assert not is_patch_tool({"properties": []})


def test_documents_are_read_as_json_or_python_and_odd_keys_are_escaped() -> None:
    texts = [
        '<instance id="x1" schema_type="Note">{"a/b~c": "old"}</instance>'
        "<instance id=x2>not a document</instance><instance id=x1>{'dup': 'x'}</instance>"
    ]
    docs = shown_docs(texts)
    assert [(d.doc_id, d.value) for d in docs] == [("x1", {"a/b~c": "old"}), ("x2", None)]
    args = patch_doc_input(texts, grounding_from("The note is new."))
    assert args is not None and args["json_doc_id"] == "x1"
    assert args["patches"][0]["path"] == "/a~1b~0c"


def test_hostile_instance_text_is_read_in_a_moment() -> None:
    hostile = "<instance id=" + "a" * 50_000 + ("<instance id=z>" + "{" * 30_000) * 20
    start = time.process_time()
    patch_doc_input([hostile], grounding_from("I moved to Porto."))
    assert time.process_time() - start < 2.0


def test_a_required_call_after_only_a_question_patches_nothing_instead_of_storing_it() -> None:
    # The langmem arm's recall turn: the user asked, stated nothing; storing the question as a
    # memory is what a model would not do.
    body = with_session("Where does my family live?", "Your sister lives in Lisbon.")
    assert calls(body) == [
        (
            "PatchDoc",
            {
                "json_doc_id": SHOWN_ID,
                "planned_edits": "Nothing new was stated; the document stays as it is.",
                "patches": [],
            },
        )
    ]
    # Without a shown document there is nothing to patch: the policy's tool is called.
    bare = with_session("Where does my family live?", "I do not know.", "You are a subroutine.")
    assert [name for name, _ in calls(bare)] == ["Memory"]


def test_anthropic_any_after_only_a_question_patches_the_shown_document() -> None:
    body = with_session("Where does my family live?", "Your sister lives in Lisbon.")
    anthropic_body = {
        "model": "claude-haiku-4-5-20251001",
        "max_tokens": 500,
        "system": body["messages"][0]["content"],
        "messages": [body["messages"][1]],
        "tools": [
            {
                "name": t["function"]["name"],
                "description": t["function"]["description"],
                "input_schema": t["function"]["parameters"],
            }
            for t in body["tools"]
        ],
        "tool_choice": {"type": "any"},
    }
    reply = anthropic_messages(
        StubRequest("anthropic", "anthropic.messages", anthropic_body, body_digest(anthropic_body)),
        StubContext(),
    )
    (use,) = json.loads(b"".join(reply.chunks))["content"]
    assert (use["name"], use["input"]["json_doc_id"], use["input"]["patches"]) == (
        "PatchDoc",
        SHOWN_ID,
        [],
    )
