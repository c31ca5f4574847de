"""The Responses API's stream: the typed events (`response.created` ... `response.completed` or
`response.incomplete`) that carry a finished response, text and arguments in small deltas."""

from __future__ import annotations

from typing import Any

from stubs.openai.common import dumps, group, pieces

_TOKENS_PER_DELTA = 3
_ARGUMENT_PIECE = 16


def stream_events(
    pending: dict[str, Any],
    final: dict[str, Any],
    tokens: list[str],
    logprobs: list[dict[str, Any]],
) -> list[bytes]:
    """The typed events that stream `final`, starting from the in-progress `pending` object."""
    events: list[bytes] = []

    def emit(kind: str, **fields: Any) -> None:
        data = {"type": kind, "sequence_number": len(events), **fields}
        events.append(f"event: {kind}\n".encode() + b"data: " + dumps(data) + b"\n\n")

    emit("response.created", response=pending)
    emit("response.in_progress", response=pending)
    for index, item in enumerate(final["output"]):
        place = {"item_id": item["id"], "output_index": index}
        if item["type"] == "message":
            part = item["content"][0]
            emit(
                "response.output_item.added",
                output_index=index,
                item={**item, "status": "in_progress", "content": []},
            )
            emit(
                "response.content_part.added",
                **place,
                content_index=0,
                part={**part, "logprobs": [], "text": ""},
            )
            position = 0
            for chunk in group(tokens, _TOKENS_PER_DELTA):
                emit(
                    "response.output_text.delta",
                    **place,
                    content_index=0,
                    delta="".join(chunk),
                    logprobs=_delta_logprobs(logprobs[position : position + len(chunk)]),
                )
                position += len(chunk)
            emit(
                "response.output_text.done",
                **place,
                content_index=0,
                text=part["text"],
                logprobs=_delta_logprobs(logprobs),
            )
            emit("response.content_part.done", **place, content_index=0, part=part)
        elif item["type"] == "function_call":
            emit(
                "response.output_item.added",
                output_index=index,
                item={**item, "status": "in_progress", "arguments": ""},
            )
            for piece in pieces(item["arguments"], _ARGUMENT_PIECE):
                emit("response.function_call_arguments.delta", **place, delta=piece)
            emit(
                "response.function_call_arguments.done",
                **place,
                name=item["name"],
                arguments=item["arguments"],
            )
        else:
            emit("response.output_item.added", output_index=index, item=item)
        emit("response.output_item.done", output_index=index, item=item)
    # A reply cut at max_output_tokens ends as the vendor ends it: response.incomplete.
    emit("response." + final["status"], response=final)
    return events


def _delta_logprobs(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Stream events carry logprobs without byte lists (ResponseTextDeltaEvent.Logprob)."""
    return [
        {
            "token": e["token"],
            "logprob": e["logprob"],
            "top_logprobs": [
                {"token": t["token"], "logprob": t["logprob"]} for t in e["top_logprobs"]
            ],
        }
        for e in entries
    ]
