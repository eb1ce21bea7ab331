"""What a check knows about the world, as data and pure lookups: the ROCm release table, the
support matrices (OS, kernel, GPU, torch wheels) and what the playbooks install."""
