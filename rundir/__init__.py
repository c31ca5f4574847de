"""The run directory's formats: every file a run writes, its model and its reader.

Nothing here imports the rest of the project: the proxy, the orchestrator, the checks and the
report all read and write runs through these modules, so a format has one owner.
"""
