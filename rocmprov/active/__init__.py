"""`rocmprov verify --level 2`: run the tools people trust (ROCm Validation Suite, TransferBench,
rccl-tests) where they are installed, parse their output (pure parsers here) and judge it against
published per-product figures (rocmprov/data/active_thresholds.yaml). The runner is in runner.py."""
