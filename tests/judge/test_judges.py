"""judges.toml and the clients: a command-line judge (a real process) and an HTTP model (the
official openai SDK against the fake vendor, answering as record mode's stubs do)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import tomli_w

from harness.errors import HarnessError
from harness.judge.judges import JudgeError, load_judges
from harness.judge.send import ask_task
from rundir.judgments.files import REPLIES_DIR, VoteLog, read_votes
from rundir.judgments.records import JudgmentTask
from stubs.rules.context import StubContext
from stubs.rules.replies import ReplyBook
from tests.fakevendor.server import FakeVendor
from tests.judge.runs import judge_entry, write_judges

FLAKY = str(Path(__file__).with_name("flaky_judge.py"))


def _write(tmp_path: Path, table: dict[str, object]) -> Path:
    path = tmp_path / "judges.toml"
    path.write_text(tomli_w.dumps(table))
    return path


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ({"judges": {"a": {"engine": "x", "model": "m", "effort": "low"}}}, "give either command"),
        (
            {
                "judges": {
                    "a": {
                        "engine": "x",
                        "model": "m",
                        "effort": "low",
                        "command": ["c"],
                        "url": "http://h",
                    }
                }
            },
            "give either command",
        ),
        (
            {"judges": {"a": {"engine": "x", "model": "m", "effort": "low", "url": "http://h"}}},
            "needs key_env",
        ),
        (
            {"judges": {"a": {"engine": "x y", "model": "m", "effort": "low", "command": ["c"]}}},
            "engine",
        ),
        ({"judge": {}}, "expected only"),
        (
            {"judges": {"a": judge_entry("m"), "b": judge_entry("m")}},
            "share engine, model and effort",
        ),
    ],
)
def test_a_judges_file_that_pins_nothing_usable_is_refused(
    tmp_path: Path, table: dict, message: str
) -> None:
    with pytest.raises(HarnessError, match=message):
        load_judges(_write(tmp_path, table))


def _task(kind: str = "flag") -> JudgmentTask:
    return JudgmentTask(
        id="t1",
        judgment="j",
        rubric="r",
        kind=kind,
        judge="a",
        role="confirmatory",
        phase="confirmatory",
        labels=["AAAA"],
        prompt_sha256="0" * 64,
    )  # type: ignore[arg-type]


def _prompt(folder: Path) -> Path:
    (folder / "prompts").mkdir(parents=True)
    (folder / REPLIES_DIR).mkdir()
    prompt = folder / "prompts" / "t1.txt"
    prompt.write_text("User: hi\n<reply>\nNoted: hi.\n</reply>\n")
    return prompt


def test_a_rambling_reply_is_discarded_and_the_prompt_asked_again(tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir()
    entry = judge_entry("m1")
    entry["command"] = [sys.executable, "-S", FLAKY, str(state), *entry["command"][3:]]  # type: ignore[index]
    (judge,) = load_judges(write_judges(tmp_path / "j.toml", a=entry))
    _prompt(tmp_path / "set")
    log = VoteLog(tmp_path / "set")
    vote = ask_task(tmp_path / "set", _task(), judge, judge.client(), 3, log)
    log.close()
    assert vote is not None and (vote.attempt, vote.verdict) == (2, "OK")
    first, second = read_votes(tmp_path / "set")
    assert (first.status, second.status) == ("unparseable", "accepted")
    assert (tmp_path / "set" / str(first.reply_file)).read_text().startswith("I think")


def test_a_command_that_fails_or_hangs_gives_no_reply(tmp_path: Path) -> None:
    prompt = _prompt(tmp_path)
    failing = {
        "engine": "x",
        "model": "m",
        "effort": "low",
        "command": [sys.executable, "-c", "import sys; sys.exit('no key')"],
    }
    hanging = {
        "engine": "y",
        "model": "m",
        "effort": "low",
        "command": [sys.executable, "-c", "import time; time.sleep(30)"],
        "timeout_s": 0.5,
    }
    missing = {"engine": "z", "model": "m", "effort": "low", "command": ["/nonexistent/judge"]}
    judges = {
        j.name: j
        for j in load_judges(
            _write(tmp_path, {"judges": {"f": failing, "h": hanging, "m": missing}})
        )
    }
    with pytest.raises(JudgeError, match="exit status 1: no key"):
        judges["f"].client().ask(prompt)
    with pytest.raises(JudgeError, match=r"no reply within 0\.5 s"):
        judges["h"].client().ask(prompt)
    with pytest.raises(JudgeError, match="cannot start"):
        judges["m"].client().ask(prompt)


def _vendor(tmp_path: Path) -> FakeVendor:
    stubs = tmp_path / "stubs.toml"
    stubs.write_text(
        tomli_w.dumps(
            {
                "schema": 1,
                "rules": [
                    {
                        "name": "judge",
                        "user_contains": "<reply>",
                        "reply": "judge: engine=openai model=$model effort=medium\nverdict: FLAG",
                    }
                ],
            }
        )
    )
    return FakeVendor(stub_context=StubContext(book=ReplyBook.load(stubs)))


def test_an_http_judge_asks_through_the_openai_sdk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    prompt = _prompt(tmp_path / "set")
    with _vendor(tmp_path) as vendor:
        table = {
            "judges": {
                "g": {
                    "engine": "openai",
                    "model": "gpt-judge",
                    "effort": "medium",
                    "url": vendor.url + "/v1",
                    "key_env": "JUDGE_TEST_KEY",
                }
            }
        }
        (judge,) = load_judges(_write(tmp_path, table))
        with pytest.raises(JudgeError, match=r"\$JUDGE_TEST_KEY is not set"):
            judge.client().ask(prompt)
        monkeypatch.setenv("JUDGE_TEST_KEY", "sk-test")
        log = VoteLog(tmp_path / "set")
        vote = ask_task(tmp_path / "set", _task(), judge, judge.client(), 2, log)
        log.close()
        (request,) = vendor.requests
    assert vote is not None and vote.verdict == "FLAG"
    assert vote.cost_usd is None and "gpt-judge" in str(vote.unpriced)  # not in the table
    assert request.body["model"] == "gpt-judge" and request.body["reasoning_effort"] == "medium"
    assert "Noted: hi." in request.body["messages"][0]["content"]


def test_a_command_judge_sees_only_a_private_copy_of_its_prompt(tmp_path: Path) -> None:
    """The set beside the prompts says which are controls: a judge that can read files must not
    find it, nor the other prompts, nor the prompt's name (its task id)."""
    prompt = _prompt(tmp_path / "set")
    look = "import os, sys; print(sorted(os.listdir('.')), sys.argv[1], open(sys.argv[1]).read())"
    table = {"engine": "x", "model": "m", "effort": "low", "command": [sys.executable, "-c", look]}
    (judge,) = load_judges(_write(tmp_path, {"judges": {"a": table}}))
    seen = judge.client().ask(prompt).text
    listing, path, text = seen.split(" ", 2)
    assert listing == "['prompt.txt']"
    assert not path.startswith(str(tmp_path)) and path.endswith("/prompt.txt")
    assert "Noted: hi." in text
    assert not Path(path).exists()  # removed once answered


def test_a_runaway_reply_is_no_reply(tmp_path: Path) -> None:
    prompt = _prompt(tmp_path / "set")
    flood = {
        "engine": "x",
        "model": "m",
        "effort": "low",
        "command": [sys.executable, "-c", "print('x' * 100000)"],
    }
    (judge,) = load_judges(_write(tmp_path, {"judges": {"a": flood}}))
    with pytest.raises(JudgeError, match="a reply of 100001 bytes"):
        judge.client().ask(prompt)
