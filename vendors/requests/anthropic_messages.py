"""Validation of an Anthropic Messages request, as the vendor would refuse it.

Record mode must refuse what live mode would refuse, or an arm that works against the stubs fails
on its first paid call. Every check here mirrors a documented (or observed) 400 from
`POST /v1/messages`; anything the vendor tolerates is tolerated here too. The result is a
`MessagesPlan`: the request's settings, checked, so the reply builder never meets a bad shape.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from vendors.errors import VendorRequestError, require
from vendors.requests.anthropic_cache import cache_writes, check_cache_control

_ROLES = ("user", "assistant")
_TOOL_CHOICES = ("auto", "any", "tool", "none")
_THINKING_TYPES = ("enabled", "disabled", "adaptive", "between_tools")
_EFFORTS = ("low", "medium", "high", "xhigh", "max")
_MIN_THINKING_BUDGET = 1024
# Blocks whose payload is a `source` object (base64, URL or file id).
_SOURCED_BLOCKS = ("image", "document")
# Optional string options (`Optional[str]`/`Literal` in the 2.14 SDK's MessageCreateParams). Only
# the type is checked: a new value the vendor adds must not be refused here, and the live proxy
# refuses the premium values its table cannot price (proxy.metering.billing).
_STRING_OPTIONS = ("speed", "inference_geo", "service_tier", "container")
_DOCS = "https://docs.claude.com/en/docs/build-with-claude/extended-thinking"


@dataclass(frozen=True)
class MessagesPlan:
    """What a valid request asks for, in the terms the reply builder needs."""

    model: str
    max_tokens: int
    stream: bool
    thinking: bool  # a thinking block goes before the answer
    thinking_budget: int | None  # `budget_tokens` of manual extended thinking
    thinking_omitted: bool  # `display: "omitted"`: signature only, no thinking text
    forced_tool: str | None  # "tool" choice name; "" means "any" (the builder picks one)
    tools: dict[str, dict[str, Any]]  # client tools (those with an input_schema) by name
    output_schema: dict[str, Any] | None
    stop_sequences: tuple[str, ...]
    cache_5m: int  # input tokens written to the 5-minute cache
    cache_1h: int  # input tokens written to the 1-hour cache


def _fail(message: str, param: str | None = None) -> VendorRequestError:
    return VendorRequestError(400, message, param)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _check_blocks(content: Any, where: str) -> None:
    if isinstance(content, str):
        return
    if not isinstance(content, list):
        raise _fail(f"{where}: Input should be a valid string or a list of content blocks", where)
    for j, block in enumerate(content):
        here = f"{where}.{j}"
        if not isinstance(block, dict) or not isinstance(block.get("type"), str):
            raise _fail(f"{here}.type: Field required", here)
        if block["type"] == "text" and not isinstance(block.get("text"), str):
            raise _fail(f"{here}.text: Input should be a valid string", here)
        if block["type"] in _SOURCED_BLOCKS and not isinstance(block.get("source"), dict):
            raise _fail(f"{here}.{block['type']}.source: Input should be a valid dictionary", here)
        check_cache_control(block.get("cache_control"), here)


def check_messages(body: dict[str, Any]) -> None:
    """`model` and `messages` (with `system`) as both /v1/messages and count_tokens need them."""
    require(body, "model", "messages")
    if not isinstance(body["model"], str) or not body["model"]:
        raise _fail("model: Input should be a valid string", "model")
    messages = body["messages"]
    if not isinstance(messages, list):
        raise _fail("messages: Input should be a valid list", "messages")
    if not messages:
        raise _fail("messages: at least one message is required", "messages")
    for i, msg in enumerate(messages):
        if not isinstance(msg, dict):
            raise _fail(f"messages.{i}: Input should be a valid dictionary", "messages")
        if msg.get("role") not in _ROLES:
            if msg.get("role") == "system":
                raise _fail(
                    'messages: Unexpected role "system". The Messages API accepts a top-level '
                    '`system` parameter, not "system" as an input message role.',
                    "messages",
                )
            raise _fail(f"messages.{i}.role: Input should be 'user' or 'assistant'", "messages")
        if "content" not in msg or msg["content"] is None:
            raise _fail(f"messages.{i}.content: Field required", "messages")
        _check_blocks(msg["content"], f"messages.{i}.content")
    if "system" in body and body["system"] is not None:
        _check_blocks(body["system"], "system")
    _check_tools(body)


def _check_tools(body: dict[str, Any]) -> dict[str, dict[str, Any]]:
    tools = body.get("tools")
    if tools is None:
        return {}
    if not isinstance(tools, list):
        raise _fail("tools: Input should be a valid list", "tools")
    client: dict[str, dict[str, Any]] = {}
    seen: set[str] = set()
    for i, tool in enumerate(tools):
        if not isinstance(tool, dict) or not isinstance(tool.get("name"), str):
            raise _fail(f"tools.{i}.name: Field required", "tools")
        name = tool["name"]
        if name in seen:
            raise _fail("tools: Tool names must be unique.", "tools")
        seen.add(name)
        check_cache_control(tool.get("cache_control"), f"tools.{i}")
        # Server tools (web search, code execution...) carry a versioned `type` and no schema.
        if tool.get("type") in (None, "custom"):
            schema = tool.get("input_schema")
            if not isinstance(schema, dict):
                raise _fail(f"tools.{i}.custom.input_schema: Field required", "tools")
            if schema.get("type") != "object":
                raise _fail(
                    f"tools.{i}.custom.input_schema.type: Input should be 'object'", "tools"
                )
            client[name] = tool
    return client


def _check_tool_choice(body: dict[str, Any], tools: dict[str, dict[str, Any]]) -> str | None:
    choice = body.get("tool_choice")
    if choice is None:
        return None
    if not isinstance(choice, dict) or choice.get("type") not in _TOOL_CHOICES:
        raise _fail(
            "tool_choice.type: Input should be 'auto', 'any', 'tool' or 'none'", "tool_choice"
        )
    if choice["type"] == "tool":
        name = choice.get("name")
        if not isinstance(name, str):
            raise _fail("tool_choice.tool.name: Field required", "tool_choice")
        if name not in tools:
            raise _fail(f"tool_choice: Tool '{name}' not found in `tools`", "tool_choice")
        return name
    if choice["type"] == "any":
        if not tools:
            raise _fail("tool_choice: `any` requires at least one tool in `tools`", "tool_choice")
        return ""
    return None


def check_thinking(body: dict[str, Any], max_tokens: int | None) -> tuple[bool, int | None, bool]:
    """(thinking on, budget, display omitted). `max_tokens` None: not checked against the budget."""
    thinking = body.get("thinking")
    if thinking is None:
        return False, None, False
    if not isinstance(thinking, dict) or thinking.get("type") not in _THINKING_TYPES:
        raise _fail(
            "thinking.type: Input should be 'enabled', 'disabled', 'adaptive' or 'between_tools'",
            "thinking",
        )
    display = thinking.get("display")
    if display not in (None, "summarized", "omitted"):
        raise _fail(
            f"thinking.{thinking['type']}.display: Input should be 'summarized' or 'omitted'",
            "thinking",
        )
    budget: int | None = None
    if thinking["type"] == "enabled":
        budget = thinking.get("budget_tokens")
        if not _is_int(budget):
            raise _fail("thinking.enabled.budget_tokens: Field required", "thinking")
        assert budget is not None  # narrowed by _is_int, for mypy
        if budget < _MIN_THINKING_BUDGET:
            raise _fail(
                "thinking.enabled.budget_tokens: Input should be greater than or equal to 1024",
                "thinking",
            )
        if max_tokens is not None and max_tokens <= budget:
            raise _fail(
                "`max_tokens` must be greater than `thinking.budget_tokens`. Please consult our "
                f"documentation at {_DOCS}#max-tokens-and-context-window-size",
                "max_tokens",
            )
    # "between_tools" only thinks between tool calls; a stub never chains tools, so no block.
    on = thinking["type"] in ("enabled", "adaptive")
    return on, budget, display == "omitted"


def _check_sampling(body: dict[str, Any], thinking: bool) -> None:
    """The 2.14 SDK has no sampling parameters, but `extra_body` can still send them."""
    temperature = body.get("temperature")
    if temperature is not None:
        if not _is_number(temperature) or not 0 <= temperature <= 1:
            raise _fail("temperature: Input should be a number between 0 and 1", "temperature")
        if thinking and temperature != 1:
            raise _fail(
                "`temperature` may only be set to 1 when thinking is enabled. Please consult our "
                f"documentation at {_DOCS}#important-considerations-when-using-extended-thinking",
                "temperature",
            )
    if thinking and body.get("top_k") is not None:
        raise _fail("`top_k` is not supported when thinking is enabled.", "top_k")
    top_p = body.get("top_p")
    if thinking and top_p is not None and (not _is_number(top_p) or not 0.95 <= top_p <= 1):
        raise _fail(
            "`top_p` must be greater than or equal to 0.95 or unset when thinking is enabled.",
            "top_p",
        )


def _check_options(body: dict[str, Any]) -> None:
    """The option fields' types, as the vendor's request model refuses them."""
    for name in _STRING_OPTIONS:
        if body.get(name) is not None and not isinstance(body[name], str):
            raise _fail(f"{name}: Input should be a valid string", name)
    top_k = body.get("top_k")
    if top_k is not None and (not _is_int(top_k) or top_k < 0):
        raise _fail("top_k: Input should be a non-negative integer", "top_k")
    top_p = body.get("top_p")
    if top_p is not None and (not _is_number(top_p) or not 0 <= top_p <= 1):
        raise _fail("top_p: Input should be a number between 0 and 1", "top_p")
    metadata = body.get("metadata")
    if metadata is not None:
        if not isinstance(metadata, dict):
            raise _fail("metadata: Input should be a valid dictionary", "metadata")
        if metadata.get("user_id") is not None and not isinstance(metadata["user_id"], str):
            raise _fail("metadata.user_id: Input should be a valid string", "metadata")


def _check_output_format(body: dict[str, Any], configured: bool) -> dict[str, Any] | None:
    """The schema of the structured-outputs beta's top-level `output_format` (what litellm
    sends): the same JSON schema format as `output_config.format`, answered the same way.
    Both at once are refused, as the SDK refuses them (output_format is the deprecated form)."""
    fmt = body.get("output_format")
    if fmt is None:
        return None
    if configured:
        raise _fail(
            "Both output_format and output_config.format were provided. "
            "Please use only output_config.format (output_format is deprecated).",
            "output_format",
        )
    return _json_schema(fmt, "output_format", "output_format")


def _check_output_config(body: dict[str, Any]) -> dict[str, Any] | None:
    schema = check_output_config_format(body)
    return _check_output_format(body, schema is not None) or schema


def check_output_config_format(body: dict[str, Any]) -> dict[str, Any] | None:
    config = body.get("output_config")
    if config is None:
        return None
    if not isinstance(config, dict):
        raise _fail("output_config: Input should be a valid dictionary", "output_config")
    if config.get("effort") not in (None, *_EFFORTS):
        raise _fail(
            "output_config.effort: Input should be 'low', 'medium', 'high', 'xhigh' or 'max'",
            "output_config",
        )
    fmt = config.get("format")
    if fmt is None:
        return None
    return _json_schema(fmt, "output_config.format", "output_config")


def _json_schema(fmt: Any, where: str, param: str) -> dict[str, Any]:
    """The schema of a `{"type": "json_schema", "schema": {...}}` format found at `where`; the
    vendor's error names `where` and points at the top-level `param`."""
    if not isinstance(fmt, dict) or fmt.get("type") != "json_schema":
        raise _fail(f"{where}.type: Input should be 'json_schema'", param)
    schema = fmt.get("schema")
    if not isinstance(schema, dict):
        raise _fail(f"{where}.schema: Field required", param)
    return schema


def check_create(body: dict[str, Any]) -> None:
    """The checks of a /v1/messages body that live mode's pinned-sampling rewrite cannot change
    (proxy.flow.intake runs them in both modes, before the rewrite)."""
    plan_messages(body, 0, per_model=False)


def plan_messages(body: dict[str, Any], total_input: int, per_model: bool = True) -> MessagesPlan:
    """Check a /v1/messages body; raise VendorRequestError(400) the way the vendor refuses it.

    `per_model=False` leaves out the sampling rules that tie temperature, top_p, top_k and
    max_tokens to thinking: the live proxy's rewrite sets those per model (proxy.live.sampling)."""
    require(body, "model", "max_tokens", "messages")
    max_tokens = body["max_tokens"]
    if not _is_int(max_tokens):
        raise _fail("max_tokens: Input should be a valid integer", "max_tokens")
    if max_tokens < 1:
        raise _fail("max_tokens: Input should be greater than or equal to 1", "max_tokens")
    check_messages(body)
    tools = _check_tools(body)
    forced = _check_tool_choice(body, tools)
    thinking, budget, omitted = check_thinking(body, max_tokens if per_model else None)
    if thinking and forced is not None:
        raise _fail("Thinking may not be enabled when tool_choice forces tool use.", "tool_choice")
    _check_sampling(body, thinking and per_model)
    _check_options(body)
    schema = _check_output_config(body)
    stops = body.get("stop_sequences") or []
    if not isinstance(stops, list) or not all(isinstance(s, str) for s in stops):
        raise _fail("stop_sequences: Input should be a valid list of strings", "stop_sequences")
    stream = body.get("stream", False)
    if not isinstance(stream, bool):
        raise _fail("stream: Input should be a valid boolean", "stream")
    cache_5m, cache_1h = cache_writes(body, total_input)
    return MessagesPlan(
        model=body["model"],
        max_tokens=max_tokens,
        stream=stream,
        thinking=thinking,
        thinking_budget=budget,
        thinking_omitted=omitted,
        forced_tool=forced,
        tools=tools,
        output_schema=schema,
        stop_sequences=tuple(s for s in stops if s),
        cache_5m=cache_5m,
        cache_1h=cache_1h,
    )
