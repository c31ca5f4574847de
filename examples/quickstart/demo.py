"""The quickstart, until the study orchestrator lands: a scripted conversation through the
record-mode proxy with the official SDKs, then a summary of the call log it wrote.

Run it with `./scripts/quickstart` (sets up .venv first).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import anthropic
import openai

HERE = Path(__file__).parent
TURNS = ["My sister lives in Lisbon.", "I play the cello on Sundays.", "What do you remember?"]


def main() -> int:
    run_dir = Path(os.environ.get("HARNESS_RUN_DIR", "runs")) / "quickstart"
    proxy = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "harness.cli",
            "proxy",
            "serve",
            "--port",
            "0",
            "--stubs",
            str(HERE / "stubs.toml"),
            "--run-dir",
            str(run_dir),
            "--arm",
            "bare",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proxy.stdout is not None
    exports = {}
    while "OPENAI_API_KEY" not in exports:
        line = proxy.stdout.readline()
        if not line:
            print("the proxy did not start; see its log above", file=sys.stderr)
            return 1
        if line.startswith("export "):
            key, _, value = line[len("export ") :].strip().partition("=")
            exports[key] = value
    try:
        claude = anthropic.Anthropic(
            base_url=exports["ANTHROPIC_BASE_URL"], api_key=exports["ANTHROPIC_API_KEY"]
        )
        gpt = openai.OpenAI(base_url=exports["OPENAI_BASE_URL"], api_key=exports["OPENAI_API_KEY"])
        history: list[dict[str, str]] = []
        for turn in TURNS:
            history.append({"role": "user", "content": turn})
            gpt.embeddings.create(model="text-embedding-3-small", input=turn)
            with claude.messages.stream(
                model="claude-haiku-4-5-20251001", max_tokens=200, messages=history
            ) as stream:  # type: ignore[arg-type]
                reply = "".join(stream.text_stream)
            history.append({"role": "assistant", "content": reply})
            print(f"user: {turn}\n  arm: {reply}")
        claude.close()
        gpt.close()
    finally:
        proxy.send_signal(signal.SIGINT)
        proxy.wait(30)
    calls = [json.loads(line) for line in (run_dir / "calls.jsonl").read_text().splitlines()]
    print(f"\n{len(calls)} calls recorded in {run_dir / 'calls.jsonl'} (cost $0, record mode):")
    for call in calls[-6:]:
        print(
            f"  {call['route']:<22} {call['purpose']:<10} status {call['status']}  "
            f"in {call['tokens']['input']:>4} out {call['tokens']['output']:>4}  "
            f"request {call['request_hash'][:12]}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
