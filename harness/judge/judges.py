"""Judges: judges.toml, each judge pinned by engine, model and effort, and the clients that ask.

    [judges.alpha]                 # the judge's name (never shown to a judge)
    engine = "claude-code"         # what answers: a command-line model client, a vendor API
    model = "claude-opus-4"
    effort = "high"
    command = ["claude-judge", "--model", "{model}", "--effort", "{effort}", "{prompt}"]
    timeout_s = 300

    [judges.beta]                  # or an HTTP model (OpenAI chat completions), through the proxy
    engine = "openai"
    model = "gpt-5"
    effort = "medium"
    url = "http://127.0.0.1:8080/v1"
    key_env = "JUDGE_OPENAI_KEY"   # the variable holding the key (never written anywhere)
    snapshots = ["gpt-5-2025-08-07"]  # dated snapshots of the pin the vendor may name instead

    [judges.gamma]                 # at most one third judge: asked only in a third pass, when
    third = true                   # the two judges' agreement (kappa) falls below its bar
    engine = "..."

Instead of a third judge, the file may say `third = "reask"` at its top (before any table): the
third pass then asks both judges again the prompts they disagreed on (harness/judge/third.py).

A command gets the prompt file's path (`{prompt}`, else as its last argument), and the prompt on
stdin, and prints its reply on stdout; `{python}` is this interpreter. It runs boxed
(harness/judge/box.py): a private empty folder, an environment of only PATH, HOME, TMPDIR, LANG
and the variables its `env = ["NAME", ...]` names, and, where Linux namespaces work, no sight of
the set, the seal, the runs or the harness's processes. The pins are also what each reply's
header must name: a judge that answers as another engine, model or effort is not the judge the
study pinned. An HTTP judge's reply must name the model that answered, and it must be the pin or
one of the dated `snapshots` listed for it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from harness.errors import HarnessError
from harness.judge.box import BoxError, boxed_argv, described, judge_env
from rundir.judgments import JudgePin


class JudgeEntry(BaseModel):
    model_config = ConfigDict(extra="forbid")

    engine: str = Field(pattern=r"^\S+$")
    model: str = Field(pattern=r"^\S+$")
    effort: str = Field(pattern=r"^\S+$")
    command: list[str] | None = Field(None, min_length=1)
    url: str | None = None
    key_env: str | None = None
    timeout_s: float = Field(300, gt=0)
    third: bool = False
    env: list[str] = Field(default_factory=list)  # variables a command judge is given
    snapshots: list[str] = Field(default_factory=list)  # dated models an HTTP pin may answer as

    @model_validator(mode="after")
    def _one_client(self) -> JudgeEntry:
        if (self.command is None) == (self.url is None):
            raise ValueError("give either command (a command-line client) or url (an HTTP model)")
        if self.url is not None and not self.key_env:
            raise ValueError("an HTTP judge needs key_env, the variable holding its key")
        if self.url is not None and self.env:
            raise ValueError("env is for a command judge (an HTTP judge's key is key_env)")
        if self.command is not None and self.snapshots:
            raise ValueError("snapshots are for an HTTP judge (a command judge's header names it)")
        return self


MAX_REPLY_BYTES = 64 * 1024


class JudgeError(Exception):
    """A client that gave no reply (it failed, timed out, or printed nothing)."""


# A judge's calls name their purpose, so a live proxy books them to the ledger stage `judge`
# and refuses them on an arms' stage (proxy.flow.failsafe.misbilled_judge, docs/judging.md).
JUDGE_PURPOSE = "judge"


@dataclass(frozen=True)
class Answer:
    """A judge's reply and, for an HTTP judge, what the vendor billed for it: its tokens and
    their cost at the price table (None: a command client, whose bill the harness cannot see,
    or a model the table does not price, said in `unpriced`)."""

    text: str
    input_tokens: int | None = None
    output_tokens: int | None = None
    cost_usd: str | None = None
    unpriced: str | None = None


class JudgeClient(Protocol):
    def ask(self, prompt_file: Path) -> Answer: ...


@dataclass(frozen=True)
class Judge:
    pin: JudgePin
    entry: JudgeEntry
    # What a command judge must not read while it answers (the set, the seal, the runs).
    hidden: tuple[Path, ...] = ()

    @property
    def name(self) -> str:
        return self.pin.name

    def confined(self, hidden: tuple[Path, ...]) -> Judge:
        """This judge with `hidden` kept from it, and what its box enforces in its pin."""
        if self.entry.command is None:
            return self
        box = described(self.entry.env, hidden)
        return replace(self, pin=self.pin.model_copy(update={"box": box}), hidden=hidden)

    def client(self) -> JudgeClient:
        if self.entry.command is not None:
            return CommandClient(
                self.pin, self.entry.command, self.entry.timeout_s, self.entry.env, self.hidden
            )
        assert self.entry.url is not None and self.entry.key_env is not None
        return HttpClient(self.pin, self.entry.url, self.entry.key_env, self.entry.timeout_s)


class CommandClient:
    def __init__(
        self,
        pin: JudgePin,
        command: list[str],
        timeout_s: float,
        env: list[str] | None = None,
        hidden: tuple[Path, ...] = (),
    ) -> None:
        self.pin, self.command, self.timeout_s = pin, command, timeout_s
        self.env, self.hidden = list(env or []), hidden

    def argv(self, prompt_file: Path) -> list[str]:
        fields = {
            "python": sys.executable,
            "engine": self.pin.engine,
            "model": self.pin.model,
            "effort": self.pin.effort,
            "prompt": str(prompt_file),
        }
        argv = [part.format_map(fields) for part in self.command]
        if not any("{prompt}" in part for part in self.command):
            argv.append(str(prompt_file))
        return argv

    def ask(self, prompt_file: Path) -> Answer:
        # The judge sees one copy of its prompt in a folder of its own: the set beside the
        # prompts says which are controls and what they must get (tasks.jsonl), and a judge
        # client that can read files (an agent CLI) must not find that, nor other prompts.
        # Nor its environment (keys), the runs, the seal or the harness's processes (box.py).
        with tempfile.TemporaryDirectory(prefix="judge-") as private:
            prompt = Path(private) / "prompt.txt"
            shutil.copyfile(prompt_file, prompt)
            try:
                env = judge_env(Path(private), self.env)
            except BoxError as e:
                raise JudgeError(str(e)) from None
            argv = self.argv(prompt)
            if shutil.which(argv[0], path=env["PATH"]) is None:
                raise JudgeError(f"cannot start {self.command[0]!r}: not an executable on PATH")
            try:
                done = subprocess.run(
                    boxed_argv(argv, self.hidden),
                    capture_output=True,
                    timeout=self.timeout_s,
                    cwd=private,
                    env=env,
                    input=prompt.read_bytes(),
                    check=False,
                )
            except subprocess.TimeoutExpired:
                raise JudgeError(f"no reply within {self.timeout_s:g} s") from None
            except OSError as e:
                raise JudgeError(f"cannot start {self.command[0]!r}: {e}") from None
        if done.returncode != 0:
            tail = done.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or [""]
            raise JudgeError(f"exit status {done.returncode}: {tail[0][:200]}")
        if len(done.stdout) > MAX_REPLY_BYTES:
            raise JudgeError(f"a reply of {len(done.stdout)} bytes: a verdict is two short lines")
        return Answer(done.stdout.decode("utf-8", "replace"))


class HttpClient:
    """An OpenAI chat-completions model, reached by base URL (the harness proxy's, so the call is
    logged with the run's other calls)."""

    def __init__(self, pin: JudgePin, url: str, key_env: str, timeout_s: float) -> None:
        self.pin, self.url, self.key_env, self.timeout_s = pin, url, key_env, timeout_s

    def ask(self, prompt_file: Path) -> Answer:
        import openai

        key = os.environ.get(self.key_env)
        if not key:
            raise JudgeError(f"${self.key_env} is not set")
        client = openai.OpenAI(
            base_url=self.url, api_key=key, timeout=self.timeout_s, max_retries=0
        )
        started = time.monotonic()
        try:
            reply = client.chat.completions.create(  # type: ignore[call-overload]
                model=self.pin.model,
                messages=[{"role": "user", "content": prompt_file.read_text(encoding="utf-8")}],
                reasoning_effort=self.pin.effort,
                extra_headers={"X-Harness-Purpose": JUDGE_PURPOSE},
            )
        except openai.OpenAIError as e:
            # A refusal's status and message say why (a proxy charging the arms' stage says so).
            said = ""
            if isinstance(e, openai.APIStatusError):
                said = f" {e.status_code}: {e.message[:200]}"
            raise JudgeError(
                f"{type(e).__name__} after {time.monotonic() - started:.1f} s{said}"
            ) from None
        if not reply.choices or reply.choices[0].message.content is None:
            raise JudgeError("the reply has no text")
        # The vendor says which model answered: a silent substitution (gpt-5-mini for gpt-5) is
        # another judge, and a reply that does not say cannot be told from one.
        if not reply.model:
            raise JudgeError(f"the reply names no model (pinned {self.pin.model!r})")
        if reply.model not in (self.pin.model, *self.pin.snapshots):
            raise JudgeError(f"answered by model {reply.model!r}, pinned {self.pin.model!r}")
        return billed(reply.choices[0].message.content, reply.usage, self.pin.model)


def billed(text: str, usage: object, model: str) -> Answer:
    """The answer with its tokens and their cost at the packaged price table: the judgment set
    is a live judge's bill (the ledger's `judge` stage books it too when it went through a live
    proxy). A reply without usage is priced at nothing known: its cost is left unset, named."""
    from ledger.errors import LedgerError
    from ledger.prices import TokenCounts, cost, load_prices

    prompt = getattr(usage, "prompt_tokens", None)
    output = getattr(usage, "completion_tokens", None)
    if not isinstance(prompt, int) or not isinstance(output, int):
        return Answer(text, unpriced="the reply carries no usage")
    cached = getattr(getattr(usage, "prompt_tokens_details", None), "cached_tokens", None) or 0
    reasoning = (
        getattr(getattr(usage, "completion_tokens_details", None), "reasoning_tokens", None) or 0
    )
    tokens = TokenCounts(
        input=max(prompt - cached, 0),
        cache_read=min(cached, prompt),
        output=output,
        reasoning=min(reasoning, output),
    )
    try:
        usd = cost(load_prices().model(model), tokens)
    except LedgerError as e:
        return Answer(text, prompt, output, unpriced=str(e))
    return Answer(text, prompt, output, cost_usd=str(usd))


def third_form(path: Path) -> Literal["judge", "reask"]:
    """How a third pass is run: by re-asking (top-level third = "reask"), else by a third judge
    (the file is checked by load_judges first)."""
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    return "reask" if data.get("third") == "reask" else "judge"


def load_judges(path: Path) -> list[Judge]:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
        raise HarnessError(f"cannot read --judges {path}: {e}", hint="a TOML file") from None
    table = data.get("judges")
    if set(data) - {"judges", "third"} or not isinstance(table, dict) or not table:
        raise HarnessError(
            f'{path}: expected only [judges.NAME] tables (and third = "reask")',
            hint="see harness/judge/judges.py",
        )
    if data.get("third", "reask") != "reask":
        raise HarnessError(
            f'{path}: third = {data["third"]!r}: the only form by name is "reask"',
            hint="or pin a third judge with third = true in its table",
        )
    judges = []
    for name, raw in sorted(table.items()):
        try:
            entry = JudgeEntry.model_validate(raw)
        except ValidationError as e:
            first = e.errors()[0]
            where = ".".join(str(part) for part in first["loc"]) or "(the table)"
            raise HarnessError(f"{path}: judges.{name}: {where}: {first['msg']}") from None
        pin = JudgePin(
            name=name,
            engine=entry.engine,
            model=entry.model,
            effort=entry.effort,
            client="command" if entry.command else "http",
            command=entry.command,
            url=entry.url,
            third=entry.third,
            snapshots=entry.snapshots,
        )
        judges.append(Judge(pin=pin, entry=entry))
    if sum(j.pin.third for j in judges) > 1:
        raise HarnessError(f"{path}: more than one judge has third = true", hint="pin one")
    if "third" in data and any(j.pin.third for j in judges):
        raise HarnessError(
            f'{path}: third = "reask" and a third judge are both given',
            hint="a third pass has one form: drop one",
        )
    pins = {(j.pin.engine, j.pin.model, j.pin.effort) for j in judges}
    if len(pins) != len(judges):
        raise HarnessError(
            f"{path}: two judges share engine, model and effort",
            hint="a second judge must be another model (the study uses two vendors)",
        )
    return judges
