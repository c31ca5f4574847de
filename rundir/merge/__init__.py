"""`harness merge`: the shards of one study joined into one run directory (join), the checks made
before anything is written and again by the audit (checks), and which run of each shard a folder
gives (pick).

Submodules are imported where used (not here), so importing one loads only what it needs."""

__all__ = ["checks", "join", "pick"]
