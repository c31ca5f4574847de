"""The live pilot (`harness pilot STUDY --legs FILE --cap USD`, docs/pilot.md): the legs file, each
leg's cost projected from a record run before any spend and its cost afterwards, and the legs
run one after another under one ledger stage.

Submodules are imported where used (not here), so importing one loads only what it
needs."""

__all__ = [
    "legs",
    "pilot",
    "pilot_cost",
]
