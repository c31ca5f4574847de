"""The pipeline's stages (harness/run/pipeline.py runs them in order): prepare checks everything and
writes run.json, start brings up the proxy, drive runs every item on every arm, finish writes the
verdict; with what prepare reads (--resume, --workers and the workers' lanes, --shard).

Submodules are imported where used (not here), so importing one loads only what it
needs."""

__all__ = [
    "drive",
    "finish",
    "prepare",
    "resume",
    "shards",
    "start",
    "worker_names",
    "workers",
]
