"""stubs.prompt.tool_policy: which offered tool a record-mode reply calls, decided from the
request."""

from __future__ import annotations

from stubs.prompt.conversation import Turn
from stubs.prompt.tool_policy import OfferedTool, fit_score, focus_of, tools_to_call

WEATHER = OfferedTool("get_weather", "Get the current weather for a city")
TIME = OfferedTool("get_time", "Get the local time in a city")
SAVE = OfferedTool("save_memory", "Store a fact about the user for later")
TOOLS = [WEATHER, TIME, SAVE]


def turn(user: str, system: str = "", called: tuple[str, ...] = (), results=()) -> Turn:
    return Turn(system, user, (), called, tuple(results))


def names(tools: list[OfferedTool]) -> list[str]:
    return [t.name for t in tools]


def test_the_tool_that_fits_the_message_is_called() -> None:
    assert names(tools_to_call(TOOLS, "auto", turn("What's the weather in Paris?"), True)) == [
        "get_weather"
    ]
    assert names(tools_to_call(TOOLS, "auto", turn("What time is it in Tokyo?"), True)) == [
        "get_time"
    ]
    for embedder in ("hash", "static"):
        assert fit_score("What's the weather in Paris?", WEATHER, embedder) >= 1
        assert fit_score("What's the weather in Paris?", TIME, embedder) < 1
    # By meaning: a forecast is weather, though the words differ (hash sees no fit).
    assert fit_score("What's the forecast for Berlin tomorrow?", WEATHER, "static") >= 1
    assert fit_score("What's the forecast for Berlin tomorrow?", WEATHER, "hash") < 1


def test_a_message_no_tool_fits_gets_text_unless_a_call_is_required() -> None:
    chat = turn("Tell me a joke about cats.")
    assert tools_to_call(TOOLS, "auto", chat, True) == []
    assert len(tools_to_call(TOOLS, "required", chat, True)) == 1
    assert tools_to_call(TOOLS, "auto", turn(""), True) == []


def test_a_tool_the_prompt_names_or_an_instruction_to_use_tools_is_obeyed() -> None:
    told = turn("Tell me a joke about cats.", system="Always call save_memory first.")
    assert names(tools_to_call(TOOLS, "auto", told, True)) == ["save_memory"]
    generic = turn("What's up in Paris?", system="You are an agent. Use tools.")
    assert len(tools_to_call(TOOLS, "auto", generic, True)) == 1
    # "may use" is permission, not an instruction.
    allowed = turn("Tell me a joke about cats.", system="You may use tools when needed.")
    assert tools_to_call(TOOLS, "auto", allowed, True) == []
    needed = turn("Tell me a joke about cats.", system="Be kind. Use tools when needed.")
    assert tools_to_call(TOOLS, "auto", needed, True) == []


def test_once_the_result_is_in_the_answer_is_text_and_no_tool_is_called_twice() -> None:
    done = turn("What's the weather in Paris?", called=("get_weather",), results=("Sunny",))
    assert tools_to_call(TOOLS, "auto", done, True) == []
    # A result that names another offered tool asks for it; each tool once per message.
    asks = turn("What's the weather in Paris?", called=("get_weather",), results=("use get_time",))
    assert names(tools_to_call(TOOLS, "auto", asks, True)) == ["get_time"]
    again = turn("x", called=("get_weather", "get_time"), results=("get_weather", "get_time"))
    assert tools_to_call(TOOLS, "auto", again, True) == []


def test_parallel_calls_one_per_clause_and_only_when_allowed() -> None:
    both = turn("What's the weather in Paris and the time in Tokyo?")
    assert names(tools_to_call(TOOLS, "auto", both, True)) == ["get_weather", "get_time"]
    assert len(tools_to_call(TOOLS, "auto", both, False)) == 1
    assert focus_of(both.user, TIME) == "the time in Tokyo?"


def test_a_rule_overrides_the_policy() -> None:
    ask = turn("What's the weather in Paris?")
    assert tools_to_call(TOOLS, "auto", ask, True, override="never") == []
    assert names(tools_to_call(TOOLS, "auto", turn("hi"), True, override="first")) == [
        "get_weather"
    ]
    assert names(tools_to_call(TOOLS, "auto", ask, True, override="save_memory")) == ["save_memory"]
    # Overridden or not, a tool already called for this message is not called again.
    done = turn("hi", called=("get_weather",), results=("ok",))
    assert tools_to_call(TOOLS, "auto", done, True, override="first") == []
    assert tools_to_call([], "required", ask, True) == []


def test_a_forced_call_with_the_results_in_delivers_the_answer() -> None:
    final = OfferedTool("final_result", "The final response which ends this conversation")
    lookup = OfferedTool("search_results", "Search the web")
    done = turn("What's the weather in Paris?", called=("get_weather",), results=("Rain",))
    assert names(tools_to_call([*TOOLS, lookup, final], "required", done, True)) == ["final_result"]
    first = turn("What's the weather in Paris?")
    assert names(tools_to_call([*TOOLS, final], "required", first, True)) == ["get_weather"]
