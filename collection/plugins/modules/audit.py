#!/usr/bin/python
# MIT License (see the collection's README.md); part of rocmprov.

from __future__ import annotations

DOCUMENTATION = r"""
---
module: audit
short_description: Run rocmprov's audit on the host and return its findings
description:
  - Runs C(rocmprov audit --local --format json) on the managed node and returns its
    C(rocmprov.audit/1) document and the host's findings (check, severity, summary, actual,
    expected, fix, ref).
  - Findings never fail the task unless O(fail_on_critical=true) and at least one finding is
    CRITICAL. A run that cannot audit (rocmprov missing, a usage error, a timeout, no JSON
    document) always fails.
  - The node needs the rocmprov command; the rocmprov.rocm.rocmprov_node role installs it.
  - Read-only. The quick profile keeps a kernel-log cursor of its own on the node
    (C(dmesg-cursor.collection), apart from the health gate's and the metrics timer's); in check
    mode it reads a throwaway copy of it, so check mode changes nothing.
version_added: "0.1.0"
author:
  - The rocmprov authors (!UNKNOWN)
options:
  fail_on_critical:
    description:
      - Fail the task when the audit has at least one CRITICAL finding.
      - WARNING and UNKNOWN findings never fail the task.
    type: bool
    default: false
  profile:
    description:
      - V(full) runs every probe; V(quick) leaves out torch, rocminfo, rocm-smi and amd-smi
        (their checks say SKIPPED) and reads the kernel log only since its last run.
    type: str
    default: full
    choices: [full, quick]
  executable:
    description:
      - The command that runs rocmprov on the node, as a list of words (for example
        V([/opt/rocmprov/venv/bin/python, -m, rocmprov])).
      - A bare name is looked up on E(PATH), then in C(/opt/rocmprov/venv/bin) and
        C(/usr/local/bin).
    type: list
    elements: str
    default: [rocmprov]
  gpu_user:
    description:
      - The user who runs GPU work; the audit checks that user's render and video groups.
      - Empty means the user the module runs as.
    type: str
    default: ""
  python:
    description:
      - The python whose torch the audit checks. Empty means C(python3).
    type: str
    default: ""
  rocm_version:
    description:
      - The ROCm release the site targets; findings compare the host against it.
    type: str
    default: ""
  timeout:
    description:
      - Seconds before the audit is stopped (through coreutils C(timeout)); V(0) for none.
    type: int
    default: 600
attributes:
  check_mode:
    support: full
    description: The audit only reads the host; check mode runs it the same way.
  diff_mode:
    support: none
    description: Nothing changes, so there is no diff.
  platform:
    support: full
    platforms: posix
    description: Linux hosts with the rocmprov command installed.
notes:
  - The schema of RV(audit) is documented in rocmprov's README (JSON output).
seealso:
  - module: rocmprov.rocm.facts
"""

EXAMPLES = r"""
- name: Audit the GPU servers and keep the findings
  rocmprov.rocm.audit:
    profile: full
    rocm_version: "7.2.1"
  register: rocmprov_audit

- name: Show what is wrong
  ansible.builtin.debug:
    msg: "{{ rocmprov_audit.findings | rejectattr('severity', 'in', ['ok', 'skipped']) }}"

- name: Gate a workflow on the node's health (fails the task on CRITICAL only)
  rocmprov.rocm.audit:
    profile: quick
    fail_on_critical: true
"""

RETURN = r"""
severity:
  description: The worst severity of the host's findings (ok, skipped, unknown, warning, critical).
  returned: success
  type: str
  sample: warning
exit_code:
  description: rocmprov's exit code (0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN).
  returned: success
  type: int
  sample: 1
findings:
  description: The host's findings, in the order rocmprov's checks run.
  returned: success
  type: list
  elements: dict
  sample:
    # rocmprov audit on a host without a GPU (a lab host)
    - check: gpu.amd.present
      severity: critical
      summary: "no AMD GPU on this host; no GPU of any vendor"
      subject: ""
      actual: "no GPU of any vendor"
      expected: "at least one AMD GPU (PCI vendor 1002, display or processing class)"
      fix: "check the card is seated and powered; `lspci -nn -d 1002:` must list it"
      ref: "https://rocm.docs.amd.com/projects/install-on-linux/en/latest/reference/system-requirements.html"
      kb: ""
critical:
  description: The CRITICAL findings only.
  returned: success
  type: list
  elements: dict
facts:
  description: The facts the audit compared (OS, kernel, ROCm, GPUs, modules, groups).
  returned: success
  type: dict
audit:
  description: The whole C(rocmprov.audit/1) document, as C(rocmprov audit --format json) prints it.
  returned: always
  type: dict
"""

from ansible.module_utils.basic import AnsibleModule  # noqa: E402
from ansible_collections.rocmprov.rocm.plugins.module_utils.rocmprov_cli import (  # noqa: E402
    COMMON_ARGUMENT_SPEC,
    run_audit,
    this_host,
)


def main():
    argument_spec = dict(COMMON_ARGUMENT_SPEC)
    argument_spec["fail_on_critical"] = dict(type="bool", default=False)
    module = AnsibleModule(argument_spec=argument_spec, supports_check_mode=True)
    doc, rc = run_audit(module)
    host = this_host(doc)
    findings = host.get("findings") or []
    critical = [f for f in findings if f.get("severity") == "critical"]
    result = dict(
        changed=False,
        severity=host.get("severity", doc.get("severity")),
        exit_code=rc,
        findings=findings,
        critical=critical,
        facts=host.get("facts") or {},
        audit=doc,
    )
    if module.params["fail_on_critical"] and critical:
        names = ", ".join(sorted(set(f.get("check", "?") for f in critical)))
        module.fail_json(msg=f"CRITICAL findings: {names}", **result)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
