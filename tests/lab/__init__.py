"""rocmprov's lab: real systemd hosts over real SSH on this machine (see README.md here)."""

from .lab import Lab, LabError, LabHost, unavailable_reason

__all__ = ["Lab", "LabError", "LabHost", "unavailable_reason"]
