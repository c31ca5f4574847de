"""LiteLLM's proxy as a live-bench target: the gateway most studies would otherwise put in front
of a vendor, measured against the same fake upstream with the same client.

It lives in a venv of the bench's own (`.cache/bench-venv`, made with uv on first use): LiteLLM's
proxy pulls in about 120 packages the project does not need. It talks only to the local fake
vendor: the model's `api_base` points there, telemetry is off and the model price map is the
packaged one (`LITELLM_LOCAL_MODEL_COST_MAP`), so it fetches nothing at start.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from bench.proxybench import HOST, Launcher, Server, free_port

ROOT = Path(__file__).resolve().parent.parent
VENV = ROOT / ".cache" / "bench-venv"
# Pinned so that a later "before/after" compares the same gateway.
REQUIREMENT = "litellm[proxy]==1.108.7"
# LiteLLM imports its provider table and FastAPI app before it listens: 10-20 s, minutes
# on a loaded machine.
STARTUP_TIMEOUT = 540.0
# A bench-local dummy, not a secret: the gateway and the fake vendor only ever see each other.
MASTER_KEY = "sk-bench-litellm-" + "0123456789abcdef" * 2
HEADERS = {"authorization": f"Bearer {MASTER_KEY}"}


def ensure_venv() -> Path:
    """The `litellm` command of the bench's venv, installed from PyPI with uv if missing."""
    command = VENV / "bin" / "litellm"
    if command.exists():
        return command
    print(f"  installing {REQUIREMENT} into {VENV} (once)", flush=True)
    uv = ["python3", "-m", "uv"]
    if subprocess.run([*uv, "--version"], capture_output=True).returncode != 0:
        # A fresh machine has no uv yet (.ci/run installs it the same way).
        print("  installing uv for python3 (once)", flush=True)
        subprocess.run(["python3", "-m", "pip", "install", "--quiet", "uv"], check=True)
    subprocess.run([*uv, "venv", "--python", "3.11", str(VENV)], check=True)
    subprocess.run(
        [*uv, "pip", "install", "--python", str(VENV / "bin" / "python"), REQUIREMENT],
        check=True,
    )
    return command


def config(upstream_port: int, model: str) -> dict[str, object]:
    """One model routed to the fake vendor; no database, no callbacks, no telemetry."""
    return {
        "model_list": [
            {
                "model_name": model,
                "litellm_params": {
                    "model": f"openai/{model}",
                    "api_base": f"http://{HOST}:{upstream_port}/v1",
                    "api_key": "sk-bench-dummy-litellm-key",
                },
            }
        ],
        "litellm_settings": {"telemetry": False, "drop_params": True},
        # LiteLLM refuses to start without a master key; with one, each call is authorised as a
        # deployment's would be (no database: the key is checked in memory).
        "general_settings": {"disable_spend_logs": True, "master_key": MASTER_KEY},
    }


def start(launch: Launcher, upstream: Server, model: str, name: str = "litellm") -> Server:
    """`litellm --config FILE` on a free port, in front of `upstream`."""
    command = ensure_venv()
    path = launch.workdir / "litellm.json"  # JSON is YAML: LiteLLM's loader reads it
    path.write_text(json.dumps(config(upstream.port, model), indent=2))
    port = free_port()
    env = {
        **os.environ,
        "LITELLM_TELEMETRY": "False",
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "DISABLE_SCHEMA_UPDATE": "True",
        "HF_HUB_OFFLINE": "1",
        "NO_PROXY": HOST,
        "no_proxy": HOST,
    }
    env.pop("DATABASE_URL", None)
    cmd = [str(command), "--config", str(path), "--host", HOST, "--port", str(port)]
    server = launch.start(name, cmd, env)
    server.port = port
    return server
