"""Judges in a box: a command judge that looks for the set, the seal, the runs and the harness's
environment finds none of them and cannot steer its verdicts; an HTTP judge answered by another
model than its pin, or by a model it does not name, gives no vote."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import tomli_w

from harness.judge.box import namespaces_unavailable
from harness.judge.judges import JudgeError, load_judges
from harness.judge.plan import Settings
from harness.judge.stage import StageOptions, run_stage
from rundir.judgments.files import PROMPTS_DIR, REPLIES_DIR, read_manifest
from stubs.rules.context import StubContext
from stubs.rules.replies import ReplyBook
from tests.fakevendor.server import FakeVendor
from tests.judge.runs import judge_entry, write_judges, write_rubrics, write_run, write_study

PEEKING = str(Path(__file__).with_name("peeking_judge.py"))
SECRET_NAME = "HARNESS_TEST_VENDOR_API_KEY"
SECRET = "sk-this-must-stay-with-the-harness"


def _peeking(root: Path, model: str, effort: str = "low") -> dict[str, object]:
    return judge_entry(model, effort, "--look", str(root), script=PEEKING)


def _leaks(root: Path) -> str:
    return (root / "leaks.txt").read_text(encoding="utf-8")


def test_a_command_judge_finds_nothing_of_the_set_seal_runs_or_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(SECRET_NAME, SECRET)
    monkeypatch.setenv("JUDGE_CLI_TOKEN", "given-on-purpose")
    study = write_study(tmp_path / "study", items=2)
    run = write_run(tmp_path / "runs", study, "run-a")
    out = tmp_path / "set"
    (out / PROMPTS_DIR).mkdir(parents=True)
    (out / REPLIES_DIR).mkdir()
    (out / "tasks.jsonl").write_text('{"expect": "OK"}\n')
    seal = tmp_path / "set.seal.json"
    seal.write_text('{"codes": {}}\n')
    prompt = out / PROMPTS_DIR / "t1.txt"
    prompt.write_text("User: hi\n<reply>\nNoted: hi.\n</reply>\n")
    entry = {**_peeking(tmp_path, "m"), "env": ["JUDGE_CLI_TOKEN"]}
    path = tmp_path / "judges.toml"
    path.write_text(tomli_w.dumps({"judges": {"a": entry}}))
    (judge,) = load_judges(path)
    boxed = judge.confined((out, seal, run))

    reply = boxed.client().ask(prompt).text
    assert reply.endswith("verdict: Reply 1\n")  # it found no task to steer by
    leaks = _leaks(tmp_path)
    assert "stdin same as prompt file: True" in leaks
    (env,) = [line for line in leaks.splitlines() if line.startswith("env: ")]
    names = set(env.split()[1:]) - {"PWD", "SHLVL", "_", "LC_CTYPE"}  # what a shell may add
    assert names == {"PATH", "HOME", "TMPDIR", "LANG", "JUDGE_CLI_TOKEN"}
    assert SECRET not in leaks and SECRET_NAME not in leaks
    if namespaces_unavailable() is None:
        assert "listing" not in leaks and "read " not in leaks and "pid " not in leaks
        assert any("namespaces" in said for said in boxed.pin.box)
    else:
        assert any(said.startswith("not enforced") for said in boxed.pin.box)
        pytest.skip(f"no read barrier on this machine: {namespaces_unavailable()}")
    # The harness itself still reads them: nothing was moved or emptied, only hidden.
    assert (out / "tasks.jsonl").read_text() == '{"expect": "OK"}\n'


@pytest.mark.skipif(namespaces_unavailable() is not None, reason="no namespaces here")
def test_judges_that_would_steer_by_the_set_cannot_and_get_no_verdict(tmp_path: Path) -> None:
    """Two judges that answer each control as tasks.jsonl says it must be answered would pass
    calibration; boxed, they find no tasks.jsonl, answer "Reply 1" to every pair (whatever the
    order), and the axis is denied its verdict."""
    study = write_study(tmp_path / "study", items=4)
    run = write_run(tmp_path / "runs", study, "run-a")
    judges = write_judges(
        tmp_path / "judges.toml",
        alpha=_peeking(tmp_path, "rules-a"),
        beta=_peeking(tmp_path, "rules-b", "high"),
    )
    options = StageOptions(seed=5, settings=Settings(controls_per_kind=3), jobs=2)
    rubrics = write_rubrics(tmp_path / "rubrics", flag=False)
    manifest = run_stage([run], rubrics, judges, tmp_path / "set", options)
    assert [a.status for a in manifest.axes] == ["no verdict"]
    leaks = _leaks(tmp_path)
    assert "steered" not in leaks and "read " not in leaks
    # The set says what the box enforced, judge by judge.
    for pin in read_manifest(tmp_path / "set").judges:
        assert any("3 path(s) hidden" in said for said in pin.box), pin.box


def _vendor(tmp_path: Path, served: str) -> FakeVendor:
    """A vendor that answers the judge's prompt, naming `served` as the model that answered."""
    rule = {
        "name": "judge",
        "user_contains": "<reply>",
        "reply": "judge: engine=openai model=gpt-5 effort=medium\nverdict: OK",
    }
    stubs = tmp_path / "stubs.toml"
    stubs.write_text(tomli_w.dumps({"schema": 1, "rules": [rule]}))
    vendor = FakeVendor(stub_context=StubContext(book=ReplyBook.load(stubs)))
    vendor.script([f"served_model={served}"] * 4)
    return vendor


@pytest.mark.parametrize(
    ("served", "snapshots", "refused"),
    [
        ("gpt-5-mini", [], "answered by model 'gpt-5-mini', pinned 'gpt-5'"),
        ("gpt-5-2025-08-07", [], "answered by model 'gpt-5-2025-08-07'"),
        ("gpt-5-2025-08-07", ["gpt-5-2025-08-07"], None),
        ("gpt-5", [], None),
    ],
)
def test_an_http_judge_must_be_answered_by_its_pin_or_a_listed_snapshot(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    served: str,
    snapshots: list[str],
    refused: str | None,
) -> None:
    monkeypatch.setenv("JUDGE_TEST_KEY", "sk-test")
    prompt = tmp_path / "prompt.txt"
    prompt.write_text("User: hi\n<reply>\nNoted: hi.\n</reply>\n")
    with _vendor(tmp_path, served) as vendor:
        entry = {
            "engine": "openai",
            "model": "gpt-5",
            "effort": "medium",
            "url": vendor.url + "/v1",
            "key_env": "JUDGE_TEST_KEY",
            "snapshots": snapshots,
        }
        path = tmp_path / "judges.toml"
        path.write_text(tomli_w.dumps({"judges": {"g": entry}}))
        (judge,) = load_judges(path)
        if refused is None:
            assert judge.client().ask(prompt).text.endswith("verdict: OK")
        else:
            with pytest.raises(JudgeError, match=refused):
                judge.client().ask(prompt)


def test_an_http_reply_that_names_no_model_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("JUDGE_TEST_KEY", "sk-test")
    prompt = tmp_path / "prompt.txt"
    prompt.write_text("User: hi\n<reply>\nNoted: hi.\n</reply>\n")
    with _vendor(tmp_path, "") as vendor:
        table = {
            "engine": "openai",
            "model": "gpt-5",
            "effort": "medium",
            "url": vendor.url + "/v1",
            "key_env": "JUDGE_TEST_KEY",
        }
        path = tmp_path / "judges.toml"
        path.write_text(tomli_w.dumps({"judges": {"g": table}}))
        (judge,) = load_judges(path)
        with pytest.raises(JudgeError, match="the reply names no model"):
            judge.client().ask(prompt)


def test_env_and_snapshots_belong_to_their_kind_of_judge(tmp_path: Path) -> None:
    from harness.errors import HarnessError

    path = tmp_path / "judges.toml"
    command = {"engine": "x", "model": "m", "effort": "low", "command": [sys.executable]}
    path.write_text(tomli_w.dumps({"judges": {"a": {**command, "snapshots": ["m-1"]}}}))
    with pytest.raises(HarnessError, match="snapshots are for an HTTP judge"):
        load_judges(path)
