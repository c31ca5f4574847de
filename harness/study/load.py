"""Loading a study: read study.toml, check it, resolve every path it names and read its arms and
items, or refuse with one HarnessError naming the file, the field and what to do.

Every problem is reported before anything starts, because a study that dies after ten minutes of
arm start-up wastes the user's time (and, live, money).
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path

from pydantic import ValidationError

from harness.datasets import DatasetError, ItemsSource, file_sha256
from harness.errors import HarnessError
from harness.study.arms import arm_specs
from harness.study.coupling import coupling_problems
from harness.study.invalid import field_errors
from harness.study.items import read_items
from harness.study.model import Study, StudyFile
from harness.study.parity import parity_problems
from ledger.errors import LedgerError
from ledger.ledger import is_url, refuse_password, where
from ledger.pg_store import is_postgres_url
from vendors.pins import Pins, PinsError, served_matches


def sha256(path: Path) -> str:
    # In chunks, once per process: a dataset file is hundreds of MB and its index is keyed by it.
    try:
        return file_sha256(path)
    except DatasetError as e:
        raise OSError(str(e)) from None


def load_study(path: Path) -> Study:
    """Read and check everything the study names; raises HarnessError saying what to fix."""
    if not path.is_file():
        raise HarnessError(f"study file {path} does not exist", hint="give the path to study.toml")
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as e:
        raise HarnessError(f"cannot read study file {path}: {e}") from e
    except tomllib.TOMLDecodeError as e:
        raise HarnessError(f"{path} is not valid TOML: {e}") from e
    try:
        file = StudyFile.model_validate(raw)
    except ValidationError as e:
        raise HarnessError(
            f"{path}: invalid study:\n  {field_errors(e)}",
            hint="fix the fields named above (see harness/study/model.py for the format)",
        ) from None
    base = path.parent
    try:
        pins = Pins.from_toml_table(file.pins)
    except PinsError as e:
        raise HarnessError(f"{path}: {e}") from None
    compose = base / "compose.yaml"
    compose_path = compose if compose.is_file() else None
    arms = arm_specs(path, file.arms, compose_path)
    source = file.items if isinstance(file.items, ItemsSource) else None
    items_path = _existing(path, "items", source.path if source else str(file.items))
    items, drawn = read_items(items_path, source)
    coupled = coupling_problems(file.coupling, file.gate, list(arms), base)
    coupled += _from_arm_problems(pins, file, list(arms))
    parity = parity_problems(file.parity, {name: spec.env for name, spec in arms.items()})
    if parity:
        raise HarnessError(
            f"{path}: invalid parity:\n  " + "\n  ".join(parity),
            hint="see docs/studies.md (engine parity) for [parity]",
        )
    mismatch = _subject_pin_problem(pins, file)
    if mismatch is not None:
        raise HarnessError(f"{path}: {mismatch}", hint="name one model in both fields")
    if coupled:
        raise HarnessError(
            f"{path}: invalid coupling:\n  " + "\n  ".join(coupled),
            hint="see docs/coupled.md for [coupling] and [[gate.pairs]]",
        )
    return Study(
        path=path,
        file=file,
        arms=arms,
        items=items,
        drawn=drawn,
        pins=pins,
        compose_path=compose_path,
        prices_path=_existing(path, "prices", file.prices) if file.prices else None,
        stubs_path=_existing(path, "stubs", file.stubs) if file.stubs else None,
        ca_bundle_path=_existing(path, "ca_bundle", file.ca_bundle) if file.ca_bundle else None,
        ledger_path=base / ("ledger.jsonl" if is_url(file.ledger) else file.ledger),
        ledger_url=_ledger_url(path, file.ledger),
        study_sha256=sha256(path),
        compose_sha256=sha256(compose_path) if compose_path else None,
        items_sha256=sha256(items_path),
    )


def _from_arm_problems(pins: Pins, file: StudyFile, arms: list[str]) -> list[str]:
    """`[pins] from_arm` names an arm that runs first in every turn, so its request is there
    when the others ask (proxy/flow/arm_pins.py)."""
    arm = pins.from_arm
    if arm is None:
        return []
    if arm not in arms:
        return [f"pins.from_arm {arm!r} is not an arm of the study ({', '.join(arms)})"]
    order = file.coupling.order if file.coupling else []
    if not order or order[0] != arm:
        return [f'pins.from_arm {arm!r} must run first: set [coupling] order = ["{arm}", ...]']
    return []


def _subject_pin_problem(pins: Pins, file: StudyFile) -> str | None:
    """`subject` names the model under study, `[pins.models] main` the one every main reply
    must come from (issue 36 item 4): a study naming two models would report one subject while
    its turns are checked against the other."""
    main = pins.pinned_model("main")
    if file.subject is None or main is None:
        return None
    model = file.subject.partition("/")[2]
    if main.rsplit("/", 1)[-1] == model or served_matches(model, main):
        return None
    return (
        f"subject {file.subject!r} and [pins.models] main {main!r} name different models: the "
        "main pin is the subject"
    )


def _ledger_url(study: Path, ledger: str) -> str | None:
    """The PostgreSQL ledger: $HARNESS_LEDGER_URL (set on every shard of a cluster run, so the
    study file and its hash stay the same), else the study's `ledger` if it is a URL."""
    url = os.environ.get("HARNESS_LEDGER_URL") or (ledger if is_url(ledger) else None)
    if url is None:
        return None
    try:
        if not is_postgres_url(url):
            raise LedgerError(f"{where(url)} is not a postgresql:// URL")
        refuse_password(url)
    except LedgerError as e:
        raise HarnessError(f"{study}: field 'ledger': {e}") from None
    return url


def _existing(study: Path, field: str, value: str) -> Path:
    target = study.parent / value
    if not target.is_file():
        raise HarnessError(
            f"{study}: field {field!r}: file {target} does not exist or is not readable",
            hint=f"create it or point {field} at an existing file (paths are relative to the "
            "study file)",
        )
    return target
