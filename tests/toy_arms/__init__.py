"""Toy arms the tests' studies start as programs (`python <name>_arm.py` from a study folder, or
by their path here): each plays one behaviour a test needs (sleeps, dies, leaks, remembers)."""

from pathlib import Path

TOY_ARMS = Path(__file__).resolve().parent
