"""The one retry policy for infrastructure failures (an arm's process died, its seam refused):
an item is retried on a fresh arm up to MAX_RETRIES times, waiting BACKOFF_S, doubled after each
retry (0.5, 1, 2 s). Shared by the uncoupled loop (orchestrator.py) and coupled items."""

MAX_RETRIES = 3
BACKOFF_S = 0.5
