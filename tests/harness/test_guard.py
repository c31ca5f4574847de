"""The study's output guard (harness/guard.py): a command reads each turn's final text on stdin
and prints its verdict; anything but a clean verdict is `error`, never a pass; in a record run on
the local backend every arm's turn carries the verdict in turns.jsonl."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from harness.errors import HarnessError
from harness.guard import GuardSpec, guard_env, run_guard
from harness.isolation.base import SECRET_SUFFIXES
from harness.isolation.sdk_env import PLACEHOLDER_KEY
from harness.run.control.guard_route import guard_route
from harness.study import load_study
from tests.helpers.gate_studies import GATE_ARM, ITEMS
from tests.helpers.studies import harness, read_jsonl
from tests.proxy.live_helpers import STUDY_KEYS
from tests.study_builder import StudyBuilder

# Fails a text that mentions "forbidden"; says which arm and turn it saw.
GUARD = """
import json, os, sys
text = sys.stdin.read()
where = f"{os.environ['HARNESS_ARM']} {os.environ['HARNESS_ITEM']} {os.environ['HARNESS_TURN']}"
print("noise before the verdict")
print(json.dumps({"pass": "forbidden" not in text, "reason": where}))
"""


def _guard(tmp_path: Path, source: str, timeout_s: float = 10) -> GuardSpec:
    script = tmp_path / "guard.py"
    script.write_text(source)
    return GuardSpec(command=[sys.executable, str(script)], timeout_s=timeout_s)


def test_pass_and_fail_with_the_turns_place(tmp_path: Path) -> None:
    spec = _guard(tmp_path, GUARD)
    ok = run_guard(spec, tmp_path, "a fine reply", "B", "i1", 2)
    assert (ok.verdict, ok.reason) == ("pass", "B i1 2")
    bad = run_guard(spec, tmp_path, "a forbidden reply", "C0", "i1", 0)
    assert (bad.verdict, bad.reason) == ("fail", "C0 i1 0")


@pytest.mark.parametrize(
    ("source", "why"),
    [
        ("print('yes')", "must print"),
        ('print(\'{"pass": "yes"}\')', "must print"),
        ("import sys; sys.exit(3)", "exited 3"),
        ("import time; time.sleep(5)", "did not finish"),
        ("", "must print"),
    ],
    ids=["not-json", "not-a-bool", "exit", "timeout", "silent"],
)
def test_anything_but_a_clean_verdict_is_an_error(tmp_path: Path, source: str, why: str) -> None:
    found = run_guard(_guard(tmp_path, source, timeout_s=1), tmp_path, "text", "B", "i", 0)
    assert found.verdict == "error" and why in (found.reason or "")


def test_a_guard_that_cannot_start_is_an_error(tmp_path: Path) -> None:
    spec = GuardSpec(command=[str(tmp_path / "no-such-guard")])
    found = run_guard(spec, tmp_path, "text", "B", "i", 0)
    assert found.verdict == "error" and "could not be started" in (found.reason or "")


def test_a_study_guard_needs_a_command(tmp_path: Path) -> None:
    study = StudyBuilder().arm("B", "python b.py").set(guard={"command": []}).write(tmp_path)
    with pytest.raises(HarnessError, match=r"guard\.command"):
        load_study(study)


@pytest.mark.integration
def test_a_record_run_records_every_turns_verdict(tmp_path: Path) -> None:
    (tmp_path / "study").mkdir()
    (tmp_path / "study" / "guard.py").write_text(GUARD)
    fields = {"deadline_ms": 20000, "guard": {"command": [sys.executable, "guard.py"]}}
    study = (
        StudyBuilder(name="guarded", items=ITEMS, fields=fields)
        .arm("toy", f"python {GATE_ARM}")
        .write(tmp_path / "study")
    )
    runs = tmp_path / "runs"
    done = harness("record", str(study), "--run-dir", str(runs), "--isolation", "local")
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    (run,) = [p.parent for p in runs.glob("*/run.json")]
    turns = read_jsonl(run / "turns.jsonl")
    assert turns and all(t["text"] for t in turns)
    assert [t["guard"] for t in turns] == ["pass"] * len(turns)
    assert [t["guard_reason"] for t in turns] == [f"toy {t['item']} {t['turn']}" for t in turns]


# Reports whether any value of its environment is one of the study's keys, and asks the model
# through the proxy it is given, as a model-judging guard would, with the headers HEADERS (the
# purpose it names, or none: the harness books its calls as purpose guard whatever it names).
MODEL_GUARD = """
import json, os, sys
from openai import OpenAI
text = sys.stdin.read()
keys = sys.argv[1:]
leaked = sorted(k for k, v in os.environ.items() if any(key in v for key in keys))
client = OpenAI(default_headers=HEADERS)
answer = client.chat.completions.create(
    model="gpt-4.1-mini", messages=[{"role": "user", "content": "Is this safe? " + text}]
)
ok = not leaked and bool(answer.choices[0].message.content)
print(json.dumps({"pass": ok, "reason": f"leaked {leaked} via {os.environ['OPENAI_BASE_URL']}"}))
"""


def test_the_guard_gets_no_study_key_and_the_arms_listener(tmp_path: Path) -> None:
    route = guard_route("http://127.0.0.1:4321", tmp_path / "egress" / "guard" / "egress.jsonl")
    env = guard_env("B", "i1", 0, route)
    assert env["OPENAI_BASE_URL"] == "http://127.0.0.1:4321/openai/v1"
    assert env["OPENAI_API_KEY"] == PLACEHOLDER_KEY and env["HARNESS_PURPOSE"] == "guard"
    assert not any(k.endswith(SECRET_SUFFIXES) and v != PLACEHOLDER_KEY for k, v in env.items())


@pytest.mark.integration
@pytest.mark.parametrize("named", ["guard", "main", None], ids=["guard", "main", "no-header"])
def test_a_guard_calling_the_model_is_metered_as_purpose_guard_and_holds_no_key(
    tmp_path: Path, named: str | None
) -> None:
    (tmp_path / "study").mkdir()
    headers = {"X-Harness-Purpose": named} if named else {}
    (tmp_path / "study" / "guard.py").write_text(f"HEADERS = {headers!r}\n" + MODEL_GUARD)
    command = [sys.executable, "guard.py", *STUDY_KEYS.values()]
    fields = {"deadline_ms": 20000, "guard": {"command": command}}
    study = (
        StudyBuilder(name="guarded", items=ITEMS, fields=fields)
        .arm("toy", f"python {GATE_ARM}")
        .write(tmp_path / "study")
    )
    runs = tmp_path / "runs"
    done = harness(
        "record", str(study), "--run-dir", str(runs), "--isolation", "local", env=STUDY_KEYS
    )
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    (run,) = [p.parent for p in runs.glob("*/run.json")]
    turns = read_jsonl(run / "turns.jsonl")
    assert turns and [t["guard"] for t in turns] == ["pass"] * len(turns), turns[0]
    assert all(t["guard_reason"].startswith("leaked [] via http://127.0.0.1:") for t in turns)
    calls = read_jsonl(run / "calls.jsonl")
    guarded = [c for c in calls if c["purpose"] == "guard"]
    assert len(guarded) == len(turns)  # one model call per verdict, each in the call log
    assert {c["arm"] for c in guarded} == {"toy"}
    # Booked on the turn it checked; the arm's own calls keep their purpose.
    assert sorted((c["item"], c["turn"]) for c in guarded) == sorted(
        (t["item"], t["turn"]) for t in turns
    )
    assert all(c["purpose"] == "main" for c in calls if c not in guarded)


# Connects to its proxy listener, then to a server elsewhere; says what each did.
REACHING_GUARD = """
import json, os, socket, sys
results = []
for port in sys.argv[1:]:
    try:
        socket.create_connection(("127.0.0.1", int(port)), timeout=5).close()
        results.append("connected")
    except OSError as e:
        results.append(type(e).__name__)
print(json.dumps({"pass": True, "reason": " ".join(results)}))
"""


def test_a_python_guard_reaches_its_proxy_listener_and_nothing_else(tmp_path: Path) -> None:
    import socket

    with (
        socket.create_server(("127.0.0.1", 0)) as proxy,
        socket.create_server(("127.0.0.1", 0)) as elsewhere,
    ):
        ports = [s.getsockname()[1] for s in (proxy, elsewhere)]
        script = tmp_path / "guard.py"
        script.write_text(REACHING_GUARD)
        spec = GuardSpec(command=[sys.executable, str(script), *map(str, ports)])
        log = tmp_path / "run" / "egress" / "guard" / "egress.jsonl"
        route = guard_route(f"http://127.0.0.1:{ports[0]}", log)
        found = run_guard(spec, tmp_path, "text", "B", "i", 0, route)
    assert found.reason == "connected ConnectionRefusedError", found
    (entry,) = read_jsonl(log)
    assert entry["destination"] == f"127.0.0.1:{ports[1]}" and entry["arm"] == "guard"
