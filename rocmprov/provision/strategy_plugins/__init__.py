"""Ansible strategy plugins that `rocmprov apply` puts on ANSIBLE_STRATEGY_PLUGINS (a data
directory for Ansible's plugin loader; nothing in rocmprov imports these modules)."""
