"""Actions on a host after the audit: repair (plan what fixes the findings), verify (the torch
smoke tests, smoke.py, run on the host)."""
