"""apply's Ansible strategy: Mitogen's linear strategy without its CPU pinning, or Ansible's own.

The pinning test runs real ansible-playbook with the shipped strategy plugin on localhost: a
task worker reads its own CPU affinity (the pipe lookup's shell is the worker's child). With
Mitogen's own policy every worker is pinned to a single CPU (ansible_mitogen/affinity.py); with
rocmprov_mitogen it keeps the CPUs this test process may use.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rocmprov.provision.strategy import FAST_STRATEGY, STRATEGY_DIR, strategy_env
from tests.timebounds import HANG_GUARD, within

ANSIBLE_PLAYBOOK = Path(sys.executable).parent / "ansible-playbook"

PLAY = """\
- hosts: localhost
  connection: local
  gather_facts: false
  tasks:
    - name: Where this task's worker may run, and a module through the strategy's connection
      ansible.builtin.command: "true"
      changed_when: false
      register: ran
    - name: Report
      ansible.builtin.debug:
        msg: "{{ lookup('ansible.builtin.pipe', 'grep Cpus_allowed_list /proc/$PPID/status') }}"
"""


def _cpus(text: str) -> set[int]:
    out: set[int] = set()
    for part in text.split(","):
        lo, _, hi = part.strip().partition("-")
        out.update(range(int(lo), int(hi or lo) + 1))
    return out


def _run(tmp_path: Path, env: dict[str, str]) -> tuple[set[int], str]:
    play = tmp_path / "play.yml"
    play.write_text(PLAY)
    clean = {k: v for k, v in os.environ.items() if not k.startswith("ANSIBLE_")}
    proc = subprocess.run(
        [
            str(ANSIBLE_PLAYBOOK),
            *("-i", "localhost,", str(play)),
            *("-e", f"ansible_python_interpreter={sys.executable}"),
        ],
        env={**clean, **env, "ANSIBLE_NOCOLOR": "1"},
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    m = re.search(r'"msg": "Cpus_allowed_list:(?:\\t|\s)*([0-9,-]+)"', proc.stdout)
    assert m, proc.stdout[-2000:]
    return _cpus(m.group(1)), proc.stderr


def test_strategy_env_names_the_shipped_plugin() -> None:
    env = strategy_env(True)
    assert env["ANSIBLE_STRATEGY"] == FAST_STRATEGY
    assert Path(env["ANSIBLE_STRATEGY_PLUGINS"]) == STRATEGY_DIR
    assert (STRATEGY_DIR / f"{FAST_STRATEGY}.py").is_file()
    assert strategy_env(False) == {"ANSIBLE_STRATEGY": "linear"}


def test_mitogen_strategy_runs_without_pinning_workers(tmp_path: Path) -> None:
    cpus, _ = _run(tmp_path, strategy_env(True))
    assert cpus == os.sched_getaffinity(0)


def test_mitogen_own_strategy_pins_workers(tmp_path: Path) -> None:
    """The control: Mitogen's own mitogen_linear pins a worker to one CPU (the shim undoes it)."""
    import ansible_mitogen

    plugins = Path(ansible_mitogen.__file__).parent / "plugins" / "strategy"
    cpus, _ = _run(
        tmp_path, {"ANSIBLE_STRATEGY_PLUGINS": str(plugins), "ANSIBLE_STRATEGY": "mitogen_linear"}
    )
    assert len(cpus) == 1


def _skipped(**kw: str) -> list[str]:
    from rocmprov.provision.runner import ApplyOptions, build_cmdline

    args = build_cmdline(ApplyOptions(inventory="inv.ini", **kw))
    return args[args.index("--skip-tags") + 1].split(",") if "--skip-tags" in args else []


def test_roles_run_only_on_request_are_skipped_up_front() -> None:
    """health, metrics, containers and heal (tags: [never, ...]) are skipped by tag unless asked
    for: Ansible would otherwise run their argument checks (tagged always) on every host."""
    on_request = ["rocmprov_health", "rocmprov_metrics", "rocmprov_containers", "rocmprov_heal"]
    assert _skipped() == on_request
    assert _skipped(skip_tags="rocmprov_torch") == ["rocmprov_torch", *on_request]
    assert _skipped(tags="health") == ["rocmprov_metrics", "rocmprov_containers", "rocmprov_heal"]
    assert _skipped(tags="containers") == ["rocmprov_health", "rocmprov_metrics", "rocmprov_heal"]
    assert _skipped(tags="heal") == ["rocmprov_health", "rocmprov_metrics", "rocmprov_containers"]
    assert _skipped(tags="rocmprov_users,metrics") == [
        "rocmprov_health",
        "rocmprov_containers",
        "rocmprov_heal",
    ]
    assert _skipped(tags="never") == []  # every never-tagged task: every such role may run
    assert _skipped(skip_tags="rocmprov_health") == on_request
    # uninstall takes back what they added too (issue 26)
    assert _skipped(tags="uninstall") == []


def test_skipping_on_request_roles_changes_no_task_list(tmp_path: Path) -> None:
    """The same tasks run with and without the added --skip-tags, but the on-request roles'
    argument checks."""
    from rocmprov.provision.runner import ApplyOptions, build_cmdline, playbook_dir

    def tasks(args: list[str]) -> list[str]:
        proc = subprocess.run(
            [str(ANSIBLE_PLAYBOOK), "-i", "localhost,", "--list-tasks", *args,
             str(playbook_dir() / "site.yml")],
            capture_output=True, text=True, timeout=120, check=True,
        )  # fmt: skip
        return [line.strip() for line in proc.stdout.splitlines() if " : " in line]

    plain = tasks([])
    ours = tasks(build_cmdline(ApplyOptions(inventory="inv.ini")))
    dropped = [t for t in plain if t not in ours]
    assert len(dropped) == 4, dropped
    assert all("Validating arguments" in t for t in dropped), dropped
    assert {t.split(" : ")[0] for t in dropped} == {
        "rocmprov_health",
        "rocmprov_metrics",
        "rocmprov_containers",
        "rocmprov_heal",
    }
    assert [t for t in plain if t in ours] == ours


def _processes_naming(text: str) -> list[int]:
    """Processes whose command line contains `text` (all of /proc: orphans too)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().decode(errors="replace")
        except OSError:
            continue
        if text in argv:
            found.append(int(entry.name))
    return found


def sleeping_apply(tmp_path: Path, name: str, seconds: int) -> tuple[Path, str]:
    """(inventory, Python source) of a run_apply of two local hosts that each sleep `seconds`
    in a task; the source leaves its ApplyResult in `r`. Processes of the run name the
    inventory (`_processes_naming(str(inventory))`)."""
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "ansible.cfg").write_text("[defaults]\ninterpreter_python = auto_silent\n")
    (proj / "site.yml").write_text(
        "- name: test play\n  hosts: all\n  gather_facts: false\n  tasks:\n"
        f"    - name: long pause\n      ansible.builtin.command: sleep {seconds}\n"
        "      changed_when: false\n"
    )
    inv = tmp_path / f"{name}.ini"
    inv.write_text(
        "".join(
            f"h{i} ansible_connection=local ansible_python_interpreter={sys.executable}\n"
            for i in range(2)
        )
    )
    script = (
        "import json\n"
        "from rocmprov.provision.runner import ApplyOptions, run_apply\n"
        f"r = run_apply(ApplyOptions(inventory={str(inv)!r}, playbook_dir={str(proj)!r},"
        f" state_dir={str(tmp_path / 'runs')!r}))\n"
    )
    return inv, script


def test_interrupted_apply_leaves_no_task_workers(tmp_path: Path) -> None:
    """Ctrl-C during a run: ansible-playbook and every task worker it forked are gone. runner's
    own cancel SIGKILLs ansible-playbook's process group only; Ansible's task workers run in
    sessions of their own (WorkerProcess._detach), and with Mitogen a worker whose multiplexer
    was killed waits forever: they were left running under init."""
    inv, script = sleeping_apply(tmp_path, "workers", 60)
    script += "print(json.dumps({'status': r.status, 'exit': int(r.exit_code)}))\n"
    child = subprocess.Popen(
        [sys.executable, "-c", script],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(Path.cwd())},
    )
    left: list[int] = []
    try:
        deadline = time.monotonic() + 120
        # both hosts' workers started (the top-level process, its multiplexer, two workers)
        while len(_processes_naming(str(inv))) < 4 and time.monotonic() < deadline:
            assert child.poll() is None, "apply ended early"
            time.sleep(0.2)
        time.sleep(1)
        child.send_signal(signal.SIGINT)
        out, _ = child.communicate(timeout=120)
        assert json.loads(out.strip().splitlines()[-1]) == {"status": "canceled", "exit": 130}
        # the workers' own exit, polled (a fixed 3 s wait was a guess on a loaded machine);
        # a worker left running sleeps its task's 60 s, past the guard
        within(lambda: not _processes_naming(str(inv)), HANG_GUARD)
        left = _processes_naming(str(inv))
        assert left == [], f"left running after Ctrl-C: {left}"
    finally:
        for pid in left:  # this test's own orphans only (their command line names its tmp_path)
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        if child.poll() is None:
            child.kill()


def test_a_broken_mitogen_falls_back_to_linear_with_one_line(tmp_path: Path, monkeypatch) -> None:
    """Mitogen failing to load inside ansible-playbook (here: the strategy plugin raising on
    import, as a Mitogen release that does not know the installed ansible-core would): apply
    says so in one line and runs the play with Ansible's linear strategy."""
    from rocmprov.provision import fallback, runner, strategy

    plugins = tmp_path / "strategy"
    plugins.mkdir()
    (plugins / f"{strategy.FAST_STRATEGY}.py").write_text(
        "raise ImportError('ansible_mitogen: this Ansible is not supported')\n"
    )
    monkeypatch.setattr(strategy, "STRATEGY_DIR", plugins)
    inv = tmp_path / "inv.ini"
    inv.write_text(f"localhost ansible_connection=local ansible_python_interpreter={sys.executable}"
                   "\n")  # fmt: skip
    opts = runner.ApplyOptions(
        inventory=str(inv), tags="rocmprov_users", check=True,
        state_dir=str(tmp_path / "state"), fast=True,
    )  # fmt: skip
    broken = runner.run_apply(opts)  # one run, no fallback: the strategy breaks it
    assert broken.status != "successful" and not broken.hosts
    said: list[str] = []
    result = fallback.apply(opts, say=said.append)
    assert result.status == "successful", result.message
    assert len(said) == 1 and "linear" in said[0] and "\n" not in said[0], said


def test_mitogen_outside_the_tested_ansible_core_is_not_used(monkeypatch) -> None:
    from rocmprov.provision import strategy

    monkeypatch.setattr(strategy.importlib.metadata, "version", lambda _name: "2.21.0")
    problem = strategy.mitogen_problem()
    assert problem is not None and "2.21.0" in problem and "outside" in problem
    monkeypatch.setattr(strategy.importlib.util, "find_spec", lambda _name: None)
    assert strategy.mitogen_problem() == "Mitogen for Ansible is not installed"


def test_the_tested_range_is_the_range_pyproject_allows() -> None:
    import tomllib

    from packaging.requirements import Requirement

    from rocmprov.provision.strategy import MITOGEN_TESTED

    deps = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text())
    core = next(
        Requirement(d) for d in deps["project"]["dependencies"] if d.startswith("ansible-core")
    )
    low, high = MITOGEN_TESTED
    assert str(low) in str(core.specifier) and f"<{high}" in str(core.specifier), core


@pytest.mark.lab
def test_a_host_failing_under_mitogen_alone_is_rerun_with_linear(lab, clean_host, tmp_path) -> None:
    """A real host that Mitogen's strategy fails and Ansible's does not (here `mitogen_via`
    names a hop that does not exist: a variable only Mitogen reads): apply says so in one line,
    reruns that host alone with `linear`, and the host ends ok with a note saying how."""
    from tests.test_apply_lab import SMALL_DISTRO, apply, inventory_for

    inv = inventory_for(lab, [clean_host], tmp_path)
    inv.write_text(inv.read_text().replace(
        f"{clean_host.name} ansible_host={clean_host.address}",
        f"{clean_host.name} ansible_host={clean_host.address} mitogen_via=rocmprov-no-such-hop",
    ))  # fmt: skip
    rc, doc, _ = apply(inv, tmp_path, "--tags", "rocmprov_users", "-e", SMALL_DISTRO,
                       "-e", "rocmprov_repo_source=distro")  # fmt: skip
    assert rc == 0, doc
    (host,) = doc["hosts"]
    assert host["failed"] == host["unreachable"] == 0
    assert "ran again with Ansible's linear strategy" in host["notes"], host
    assert f"{clean_host.name} under Mitogen's strategy:" in doc["message"], doc["message"]
    assert "linear rerun's record:" in doc["message"]
