"""Ownership rules that need no host (issue 26): repair plans per host and keeps the host's
release; the audit notices a host left without the ROCm source the site expects (r03, r08, r09)."""

from __future__ import annotations

from rocmprov.actions.repair import plan
from rocmprov.checks.policy import Policy
from rocmprov.checks.repo import _no_amd_source
from rocmprov.model import AuditResult, Finding, HostReport, Severity


def _host(name: str, check: str, rocm: str) -> HostReport:
    return HostReport(name, (Finding(check, Severity.WARNING, "broken"),), facts={"rocm": rocm})


def test_repair_runs_one_apply_per_host_plan_keeping_each_hosts_release() -> None:
    before = AuditResult(
        hosts=(
            _host("a", "repo.pin", "7.2.3"),
            _host("b", "repo.pin", "7.2.3"),
            _host("c", "repo.pin", "7.0.2"),
            _host("d", "user.groups", ""),
        )
    )
    p = plan(before)
    runs = {hosts: (tags, rocm) for hosts, tags, rocm in p.runs()}
    assert runs[("a", "b")][1] == "7.2.3"
    assert runs[("c",)][1] == "7.0.2"
    # d's tags are its own: not the union with the repo hosts' tags
    d_tags = runs[("d",)][0]
    assert d_tags == p.tags["d"] and not set(d_tags) & set(p.tags["a"]) - set(p.tags["d"])
    assert all(len(h) for h in runs)


def test_no_amd_source_is_fine_on_a_distro_host_and_a_warning_where_one_is_expected() -> None:
    assert _no_amd_source(Policy()).severity == Severity.OK
    assert _no_amd_source(Policy(repo_source="distro", rocm_version="7.2")).severity == Severity.OK
    lost = _no_amd_source(Policy(rocm_version="7.2.3"))
    assert lost.severity == Severity.WARNING and "no usable ROCm source" in lost.summary
    assert _no_amd_source(Policy(repo_source="amd")).severity == Severity.WARNING


def test_a_failed_removal_task_names_the_packages_not_their_letters() -> None:
    """Seen on the way: "Remove < < e r r o r ..." was a string iterated letter by letter in the
    task name of roles/rocmprov_packages/tasks/remove.yml; the name is a string either way."""
    from pathlib import Path

    import jinja2
    import yaml

    role = Path(__file__).parent.parent / "playbooks/roles/rocmprov_packages/tasks/remove.yml"
    tasks = yaml.safe_load(role.read_text())
    (name,) = [t["name"] for t in tasks if t["name"].startswith("Remove {{")]
    env = jinja2.Environment(undefined=jinja2.StrictUndefined)
    as_list = env.from_string(name).render(_rocmprov_packages_remove=["rocm", "rocminfo"])
    assert as_list == "Remove rocm rocminfo"
    as_text = env.from_string(name).render(_rocmprov_packages_remove="<<error>>")
    assert as_text == "Remove <<error>>"
