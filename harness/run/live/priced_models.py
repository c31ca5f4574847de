"""Every model a study names, checked against the price table before anything starts.

A model the price table does not know cannot be priced or reserved, so a live run would refuse
each of its calls after the arms started; in record mode the stubs answer it anyway, and the run
reads "ok" for a typo (`gpt-9-nosuch`) that its paid run would fail on. So the models a study
names (its subject, `[pins.models]`, `[parity]`, and each arm's model variables, the shipped
arms' convention) are looked up at load: in live mode an unknown one is refused, naming where it
was named; in record mode it is a warning."""

from __future__ import annotations

from harness.errors import HarnessError
from harness.study import Study
from ledger.prices import UnknownModelError, load_prices

# The environment variables through which the shipped arms (arms/) take their models.
MODEL_VARIABLES = ("ARM_MODEL", "ARM_EMBED_MODEL", "ARM_ENGINE_MODEL", "ARM_ENGINE_SMALL_MODEL")


def named_models(study: Study) -> list[tuple[str, str]]:
    """(where it is named, the model) for every model the study file names."""
    found: list[tuple[str, str]] = []
    if study.file.subject:
        found.append(("subject", study.file.subject.partition("/")[2]))
    for purpose, model in sorted(study.pins.models.items()):
        found.append((f"[pins.models] {purpose}", model))
    parity = study.file.parity
    if parity is not None:
        for field in ("answer_model", "embed_model"):
            value = getattr(parity, field, None)
            if value:
                found.append((f"[parity] {field}", str(value)))
    for arm, spec in sorted(study.arms.items()):
        for variable in MODEL_VARIABLES:
            value = spec.env.get(variable)
            if value:
                found.append((f"[arms.{arm}] env {variable}", value))
    return found


def unpriced_models(study: Study) -> list[tuple[str, str]]:
    prices = load_prices(study.prices_path)
    unknown = []
    for where, model in named_models(study):
        try:
            prices.model(model)
        except UnknownModelError:
            unknown.append((where, model))
    return unknown


def check_priced_models(study: Study, mode: str) -> list[str]:
    """Warnings for record mode; in live mode a model the price table lacks is refused."""
    unknown = unpriced_models(study)
    if not unknown:
        return []
    named = ", ".join(f"{model!r} ({where})" for where, model in unknown)
    if mode == "live":
        raise HarnessError(
            f"the price table does not know {named}: its calls could not be priced or reserved",
            hint="fix the model's name, or add it to the price table (`harness prices show` "
            "lists the known ones)",
        )
    return [
        f"warning: the price table does not know {named}; record mode answers it from stubs, "
        "but a live run would refuse it"
    ]
