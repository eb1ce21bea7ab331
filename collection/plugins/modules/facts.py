#!/usr/bin/python
# MIT License (see the collection's README.md); part of rocmprov.

from __future__ import annotations

DOCUMENTATION = r"""
---
module: facts
short_description: Gather rocmprov's facts about a ROCm GPU server
description:
  - Runs rocmprov's probes on the managed node, the same probes as C(rocmprov audit --local)
    (PCI devices, kernel modules, device nodes, groups, ROCm installs, amd-smi, torch), and
    returns the facts rocmprov parsed from them as C(ansible_facts.rocmprov).
  - The findings are not returned; use rocmprov.rocm.audit for those.
  - The node needs the rocmprov command; the rocmprov.rocm.rocmprov_node role installs it.
version_added: "0.1.0"
author:
  - The rocmprov authors (!UNKNOWN)
options:
  profile:
    description:
      - V(full) runs every probe; V(quick) leaves out torch, rocminfo, rocm-smi and amd-smi,
        whose facts are then null.
    type: str
    default: full
    choices: [full, quick]
  executable:
    description:
      - The command that runs rocmprov on the node, as a list of words.
      - A bare name is looked up on E(PATH), then in C(/opt/rocmprov/venv/bin) and
        C(/usr/local/bin).
    type: list
    elements: str
    default: [rocmprov]
  gpu_user:
    description:
      - The user whose groups are gathered. Empty means the user the module runs as.
    type: str
    default: ""
  python:
    description:
      - The python whose torch is probed. Empty means C(python3).
    type: str
    default: ""
  rocm_version:
    description:
      - The ROCm release the site targets (passed to rocmprov; it does not change the facts).
    type: str
    default: ""
  timeout:
    description:
      - Seconds before the probes are stopped (through coreutils C(timeout)); V(0) for none.
    type: int
    default: 600
attributes:
  check_mode:
    support: full
    description: Gathering facts only reads the host.
  diff_mode:
    support: none
    description: Nothing changes, so there is no diff.
  facts:
    support: full
    description: Returns C(ansible_facts.rocmprov).
  platform:
    support: full
    platforms: posix
    description: Linux hosts with the rocmprov command installed.
seealso:
  - module: rocmprov.rocm.audit
"""

EXAMPLES = r"""
- name: Gather rocmprov's facts
  rocmprov.rocm.facts:
    profile: quick

- name: Hosts whose amdgpu driver is not loaded
  ansible.builtin.debug:
    msg: "amdgpu is not loaded on {{ inventory_hostname }}"
  when: not ansible_facts.rocmprov.amdgpu_loaded
"""

RETURN = r"""
ansible_facts:
  description: Facts added to the host's facts.
  returned: always
  type: complex
  contains:
    rocmprov:
      description:
        - What rocmprov parsed from its probes; a value is null when its probe could not say.
        - Keys are os, kernel, rocm, amd_gpus, gpus, pci_source, amdgpu_loaded, kfd, gpu_user,
          gpu_user_groups, gpu_manager, numa_balancing, torch, rocm_source, rocm_installs and
          gpu_metrics.
      returned: always
      type: dict
      sample:
        # rocmprov on a Debian 12 host without a GPU
        os: debian 12
        rocm: ""
        amd_gpus: []
        pci_source: sysfs
        amdgpu_loaded: false
        kfd: false
        gpu_user: root
        gpu_user_groups: [root]
        gpu_manager: not-found
        numa_balancing: 0
        torch: null
        rocm_installs: []
        gpu_metrics: []
"""

from ansible.module_utils.basic import AnsibleModule  # noqa: E402
from ansible_collections.rocmprov.rocm.plugins.module_utils.rocmprov_cli import (  # noqa: E402
    COMMON_ARGUMENT_SPEC,
    run_audit,
    this_host,
)


def main():
    module = AnsibleModule(argument_spec=dict(COMMON_ARGUMENT_SPEC), supports_check_mode=True)
    doc, _rc = run_audit(module)
    facts = this_host(doc).get("facts")
    if not isinstance(facts, dict):
        module.fail_json(msg="rocmprov's audit document has no facts for this host", audit=doc)
    module.exit_json(changed=False, ansible_facts=dict(rocmprov=facts))


if __name__ == "__main__":
    main()
