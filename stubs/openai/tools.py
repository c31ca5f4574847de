"""The functions a stub reply calls, for chat completions and Responses alike (the request's
`tools` and `tool_choice` are read and checked by vendors.requests.openai_tools)."""

from __future__ import annotations

from typing import Any

from stubs.openai.common import forced_function
from stubs.prompt import OfferedTool, focus_of, tools_to_call, turn_of
from stubs.request import StubRequest
from stubs.rules import ReplyBook
from stubs.schema import patch_when_nothing_new
from vendors.requests import FunctionSpec


def functions_to_call(
    req: StubRequest,
    book: ReplyBook,
    functions: list[FunctionSpec],
    tool_choice: Any,
    named: str | None,
) -> list[tuple[FunctionSpec, str]]:
    """The functions a reply calls (stubs.prompt.tool_policy), each with the part of the user's
    message its arguments answer (stubs.prompt.tool_policy.focus_of); [] for a text answer. A
    choice that
    names a function forces it; `none` never calls; unset, `auto` and `required` ask the
    policy, which honours `parallel_tool_calls` and the stubs file's `tools` rules."""
    if named is not None:
        forced = forced_function(req, "", functions, tool_choice, named)
        return [(forced, "")] if forced is not None else []
    if tool_choice not in (None, "auto", "required") or not functions:
        return []
    offered = [OfferedTool(f.name, f.description) for f in functions]
    turn = turn_of(req.body)
    chosen = tools_to_call(
        offered,
        "required" if tool_choice == "required" else "auto",
        turn,
        parallel=req.body.get("parallel_tool_calls") is not False,
        override=book.tool_override(req),
        embedder=book.stubs.embeddings.model,
    )
    by_name = {f.name: f for f in functions}
    if tool_choice == "required" and book.tool_override(req) is None:
        patcher = patch_when_nothing_new(req.body, {f.name: f.parameters for f in functions})
        if patcher is not None:
            return [(by_name[patcher], "")]
    if len(chosen) == 1:
        return [(by_name[chosen[0].name], "")]
    embedder = book.stubs.embeddings.model
    return [(by_name[t.name], focus_of(turn.user, t, embedder)) for t in chosen]
