"""The fleet's hosts: Ansible inventory -> HostSpec (ansible-inventory --list, cached), and what
may be a host name, user, port or jump host."""
