"""Data-only package: the Ansible playbooks and roles (found with importlib.resources)."""
