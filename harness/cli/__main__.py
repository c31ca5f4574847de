"""`python -m harness.cli`: the same CLI as the `harness` script."""

from harness.cli import run

run()
