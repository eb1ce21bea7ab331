"""The fleet: fan-out over an inventory (audit, collect, verify over SSH, the checks in worker
processes) and drift between hosts."""
