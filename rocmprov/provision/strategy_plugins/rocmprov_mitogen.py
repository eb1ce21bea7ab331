"""rocmprov_mitogen: Mitogen's linear strategy, without its CPU pinning.

`rocmprov apply` runs the playbooks with this strategy when Mitogen for Ansible is installed
(the `mitogen` dependency): one persistent Python interpreter per host instead of a new one
for every module, so a no-op re-apply runs each read-only task for the cost of a message.
The roles do not depend on it; `ansible-playbook playbooks/site.yml` runs them with the
linear strategy as before.

Mitogen pins every task worker and the top-level process to one CPU and its multiplexer to
another on controllers with fewer than four CPUs (ansible_mitogen/affinity.py): on the 2-CPU
controller of docs/benchmarks.md that made a 16-host no-op re-apply slower than no Mitogen
at all (70 s against 57 s; without the pinning, 40 s). The null Policy leaves scheduling to
the kernel, as plain Ansible does.
"""

from __future__ import annotations

import ansible_mitogen.affinity

ansible_mitogen.affinity.policy = ansible_mitogen.affinity.Policy()

import ansible_mitogen.loaders  # noqa: E402  (the policy is replaced first)
import ansible_mitogen.strategy  # noqa: E402

_Linear = ansible_mitogen.loaders.strategy_loader.get("linear", class_only=True)


class StrategyModule(ansible_mitogen.strategy.StrategyMixin, _Linear):  # type: ignore[misc, valid-type]
    """Ansible's linear strategy, tasks carried by Mitogen's connection and action plugins."""
