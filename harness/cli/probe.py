"""`harness probe STUDY`: the day's check of Anthropic's OpenAI-compatible endpoint before a live
run in which an arm (Z) reaches an Anthropic subject through it (issue 25 item 8).

Three calls to `BASE/v1/chat/completions` (BASE is a live proxy's ANTHROPIC_BASE_URL, so each is
metered and booked; refused calls are not billed by the vendor):
- one valid call, which must be answered 200 in OpenAI's chat completion shape;
- `thinking` with a budget below Anthropic's minimum (1024), which must be refused naming
  `budget_tokens`: a layer that ignores the field would answer 200;
- `output_config.effort` with a value no model takes, which must be refused naming `effort`.
A refusal that names the field shows the layer reads it (an OpenAI-style "unrecognized argument"
refusal does not). All three passing chooses route "compat"; any failing, "messages" (the arm
falls back to the Messages API and the report prints the fallback as a deviation).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import typer

from harness.errors import HarnessError

USER = [{"role": "user", "content": "Reply with the word ready."}]


def _post(client: Any, url: str, body: dict[str, Any]) -> tuple[int, Any, str]:
    import httpx

    try:
        reply = client.post(url, json=body)
    except httpx.HTTPError as e:
        return 0, None, f"no answer ({type(e).__name__})"
    try:
        data = reply.json()
    except ValueError:
        data = None
    return reply.status_code, data, reply.text[:300]


def _error_text(data: Any) -> str:
    error = data.get("error") if isinstance(data, dict) else None
    message = error.get("message") if isinstance(error, dict) else None
    return message if isinstance(message, str) else ""


def run_probe(base_url: str, model: str, key: str, timeout: float = 60.0) -> Any:
    """The probe's three calls and its decision (a rundir.network.probe_file.ProbeDecision)."""
    import httpx

    from rundir.network import ProbeCheck, ProbeDecision
    from rundir.runs import now_iso

    url = base_url.rstrip("/") + "/v1/chat/completions"
    headers = {"authorization": f"Bearer {key}", "x-harness-purpose": "probe"}
    checks: list[ProbeCheck] = []
    with httpx.Client(headers=headers, timeout=timeout) as client:
        status, data, text = _post(
            client, url, {"model": model, "messages": USER, "max_tokens": 16}
        )
        choices = data.get("choices") if isinstance(data, dict) else None
        ok = (
            status == 200
            and isinstance(data, dict)
            and data.get("object") == "chat.completion"
            and isinstance(choices, list)
            and bool(choices)
        )
        checks.append(ProbeCheck(name="valid_call", passed=ok, detail=f"{status}: {text[:120]}"))
        for name, extra, needle in (
            ("thinking_honoured", {"thinking": {"type": "enabled", "budget_tokens": 1}}, "budget"),
            ("effort_honoured", {"output_config": {"effort": "probe-none"}}, "effort"),
        ):
            body = {"model": model, "messages": USER, "max_tokens": 2048, **extra}
            status, data, text = _post(client, url, body)
            message = _error_text(data)
            passed = status == 400 and needle in message
            detail = f"a bad value answered {status}" + (f": {message[:120]}" if message else "")
            checks.append(ProbeCheck(name=name, passed=passed, detail=detail))
    route = "compat" if all(c.passed for c in checks) else "messages"
    return ProbeDecision(
        probed=now_iso(), base_url=base_url, model=model, checks=checks, route=route
    )


def probe(
    study: Path = typer.Argument(..., help="The study (study.toml or its folder)."),
    model: str = typer.Option(..., help="The Anthropic subject model the arm will call."),
    base_url: str | None = typer.Option(
        None,
        envvar="ANTHROPIC_BASE_URL",
        help="Anthropic's base URL to probe: a live proxy's (harness proxy serve --mode live "
        "prints it), so the probe's calls are metered.",
    ),
    run: Path | None = typer.Option(None, help="Also write probe.json into this run directory."),
) -> int:
    """Probe Anthropic's OpenAI-compatible route (a valid call, `thinking` and effort honoured);
    write probe.json (route compat, or messages as a fallback the report prints as a deviation)."""
    from rundir.network import PROBE_FILE, write_probe

    folder = study if study.is_dir() else study.parent
    if not folder.is_dir():
        raise HarnessError(f"{study}: no such study", hint="give study.toml or its folder")
    if not base_url:
        raise HarnessError(
            "no base URL to probe",
            hint="pass --base-url or export ANTHROPIC_BASE_URL (a live proxy's, to meter it)",
        )
    key = os.environ.get("ANTHROPIC_API_KEY") or "placeholder"  # a live proxy sets its own
    decision = run_probe(base_url, model, key)
    targets = [folder / PROBE_FILE] + ([run / PROBE_FILE] if run is not None else [])
    for target in targets:
        write_probe(target, decision)
    for check in decision.checks:
        typer.echo(f"  {'pass' if check.passed else 'FAIL'} {check.name}: {check.detail}")
    verdict = (
        "compat (Anthropic's OpenAI-compatible route)"
        if decision.route == "compat"
        else "messages (fallback to the Messages API: a deviation the report prints)"
    )
    typer.echo(f"route: {verdict}; written to {', '.join(str(t) for t in targets)}")
    return 0
