"""RFC 8785 (JCS) canonical JSON: the bytes our hashes are taken over (the request hash in
rundir.calls.masking, the ledger's hash chain in ledger.entries, the gate's compared views).

A bottom layer, like vendors/: it imports nothing else of the project.
"""

from canonical.jcs import dumps

__all__ = ["dumps"]
