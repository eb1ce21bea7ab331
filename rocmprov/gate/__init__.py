"""Node health gates: an audit result decides whether a scheduler takes a node out of service.

slurm.py: the decision (pure) and the scontrol calls (argv, no shell, timeouts).
"""
