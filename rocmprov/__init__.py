"""rocmprov: provision and diagnose AMD ROCm GPU servers."""

__version__ = "0.1.0"
