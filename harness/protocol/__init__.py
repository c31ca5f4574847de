"""The study's registered protocol: frozen files (lock.py) and their addendum (addendum.py)."""
