"""The checks a finished run is put through: the determinism gate, the audit (audit/, a part of
its own: one module per group of checks), the replay comparison, the memory controls and the
canary scan. They read runs (rundir/) and never run arms."""
