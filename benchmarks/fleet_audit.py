"""Fleet audit: `rocmprov audit` vs the Ansible way vs pdsh, same hosts, same run (not a test).

    python benchmarks/fleet_audit.py                    # N = 10 (lab), 50, 100 (loopback)
    python benchmarks/fleet_audit.py --sizes 10 --runs 3

What runs, per size N, interleaved run by run (so drift of this machine's load hits all alike):
  rocmprov  `rocmprov audit INV --format json` (64 hosts at once, one SSH connection and one
            remote script per host; checks host keys against the generated known_hosts)
  ansible   `ansible-playbook -i INV audit.yml`: gather_facts (the `setup` module) + one
            ansible.builtin.shell task running the same probe script, registered. Ansible's
            defaults: 5 forks, no pipelining, its default ControlPersist=60s.
  ansible-f64 (with --ansible-tuned) the same playbook with --forks 64.
  pdsh      `pdsh -R ssh -f 64 -w HOSTS '<the same probe script>'`
The probe script is rocmprov's own (rocmprov.collect.remote.build_script over
rocmprov.collect.probes.build_probes()), byte for byte the same for all three.

Hosts: N <= 16 are lab hosts (tests/lab: systemd-nspawn containers with sshd, root needed,
`sudo bash tests/lab/prepare.sh` once); larger N are sshd processes on 127.0.1.1..127.0.1.N
(benchmarks/loophosts.py), whose probes run on this machine itself.

Measured: wall time, and controller CPU (user+sys of the tool's whole process tree, including
ssh ControlPersist masters, via getrusage(RUSAGE_CHILDREN)), medians over --runs runs.
Results: benchmarks/results/fleet_audit.json and a table on stdout.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _bench import (
    REPO,
    RESULTS,
    Series,
    become_subreaper,
    exit_on_signals,
    log,
    machine,
    ratio,
    run_measured,
    tool,
    versions,
    warm_bytecode,
    write_result,
)
from loophosts import LoopHosts
from report import fleet_table

NONCE = "bench"
PLAYBOOK = """\
# What an admin writes to audit GPU hosts with Ansible: facts + the probe commands.
- name: Audit GPU hosts
  hosts: all
  gather_facts: true
  tasks:
    - name: Run the probes
      ansible.builtin.shell: "{{ lookup('ansible.builtin.file', probe_script) }}"
      register: probes
      changed_when: false
"""


class Hosts:
    """inventory, ssh_config, known_hosts, names of N hosts; lab or loopback."""

    def __init__(self, n: int, kind: str, workdir: Path) -> None:
        self.n, self.kind, self.workdir = n, kind, workdir
        self._loop: LoopHosts | None = None

    def __enter__(self) -> Hosts:
        if self.kind == "lab":
            lab = self.workdir / "lab"
            log(f"starting {self.n} lab hosts in {lab}")
            subprocess.run(
                [sys.executable, "-m", "tests.lab", "up", str(self.n), "--workdir", str(lab)],
                cwd=REPO,
                check=True,
                stdout=subprocess.DEVNULL,
                timeout=600,
            )
            self.inventory = lab / "inventory.ini"
            self.ssh_config = lab / "ssh_config"
            self.known_hosts = lab / "known_hosts"
            self.names = [
                line.split()[0]
                for line in self.inventory.read_text().splitlines()
                if line and not line.startswith(("[", "#")) and "ansible_host=" in line
            ]
        else:
            log(f"starting {self.n} loopback sshd")
            self._loop = LoopHosts(self.n, self.workdir / "loop").__enter__()
            self.inventory = self._loop.inventory
            self.ssh_config = self._loop.ssh_config
            self.known_hosts = self._loop.known_hosts
            self.names = self._loop.names
        return self

    def __exit__(self, *exc: object) -> None:
        if self._loop is not None:
            self._loop.stop()
        if self.kind == "lab":
            log("stopping the lab")
            subprocess.run(
                [sys.executable, "-m", "tests.lab", "down", "--workdir", str(self.workdir / "lab")],
                cwd=REPO,
                check=False,
                stdout=subprocess.DEVNULL,
                timeout=300,
            )


def probe_script() -> str:
    from rocmprov.collect.probes import build_probes
    from rocmprov.collect.remote import build_script

    return build_script(build_probes(), NONCE)


def check_rocmprov(out: Path, n: int) -> str:
    try:
        doc = json.loads(out.read_text())
    except (OSError, ValueError):
        return "no JSON"
    audited = sum(1 for h in doc.get("hosts", []) if h.get("status") == "audited")
    return "" if audited == n else f"{audited}/{n} hosts audited"


def check_ansible(out: Path, n: int) -> str:
    text = out.read_text(errors="replace")
    good = len(re.findall(r"^\S+\s+:\s+ok=2\s.*unreachable=0\s+failed=0", text, re.M))
    return "" if good == n else f"{good}/{n} hosts ok=2 in the recap"


def check_pdsh(out: Path, n: int) -> str:
    text = out.read_text(errors="replace")
    done = len(re.findall(rf"^\S+: @@rocmprov-{NONCE} done$", text, re.M))
    return "" if done == n else f"{done}/{n} hosts finished the script"


def bench_size(n: int, kind: str, runs: int, ansible_runs: int, tuned: bool, tmp: Path) -> dict:
    work = tmp / f"n{n}"
    work.mkdir(parents=True, exist_ok=True)
    script = probe_script()
    (work / "probe.sh").write_text(script)
    (work / "audit.yml").write_text(PLAYBOOK)
    with Hosts(n, kind, work) as hosts:
        become_subreaper()  # after the lab is up: its daemons are not ours to reap
        hostlist = work / "hosts.txt"
        hostlist.write_text("\n".join(hosts.names) + "\n")
        base_env = {k: v for k, v in os.environ.items() if not k.startswith("ANSIBLE_")}
        base_env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{base_env.get('PATH', '')}"

        def rocmprov(i: int) -> tuple[list[str], dict, Path | None]:
            argv = [
                tool("rocmprov"),
                "audit",
                str(hosts.inventory),
                "--format",
                "json",
                "--ssh-config",
                str(hosts.ssh_config),
                "--known-hosts",
                str(hosts.known_hosts),
            ]
            return argv, base_env, None

        def ansible(forks: int | None):
            def make(i: int) -> tuple[list[str], dict, Path | None]:
                cp = Path(tempfile.mkdtemp(prefix="cp", dir=work))
                env = {**base_env, "ANSIBLE_SSH_CONTROL_PATH_DIR": str(cp)}
                argv = [
                    tool("ansible-playbook"),
                    "-i",
                    str(hosts.inventory),
                    str(work / "audit.yml"),
                    "-e",
                    f"probe_script={work / 'probe.sh'}",
                ]
                if forks:
                    argv += ["--forks", str(forks)]
                return argv, env, cp

            return make

        def pdsh(i: int) -> tuple[list[str], dict, Path | None]:
            env = {
                **base_env,
                "PDSH_SSH_ARGS": f"-F {hosts.ssh_config} -a -x -l%u %h",
                "PDSH_RCMD_TYPE": "ssh",
            }
            return ["pdsh", "-R", "ssh", "-f", "64", "-w", f"^{hostlist}", script], env, None

        variants = [
            ("rocmprov", rocmprov, check_rocmprov, runs),
            ("ansible", ansible(None), check_ansible, ansible_runs),
        ]
        if tuned:
            variants.append(("ansible-f64", ansible(64), check_ansible, ansible_runs))
        if shutil.which("pdsh"):
            variants.append(("pdsh", pdsh, check_pdsh, runs))
        else:
            log("pdsh not installed (apt-get install -y pdsh): skipped")
        series = {name: Series(name, n) for name, *_ in variants}
        for i in range(max(runs, ansible_runs)):
            for name, make, check, count in variants:
                if i >= count:
                    continue
                argv, env, cp = make(i)
                out = work / f"{name}-{i}.out"
                sample = run_measured(argv, env=env, cwd=work, stdout=out, cp_dir=cp, timeout=1800)
                problem = check(out, n)
                if problem:
                    series[name].note = f"run {i}: {problem} (rc {sample.rc})"
                    log(f"N={n} {name} run {i}: PROBLEM {problem}; see {out}")
                sample.rc = 1 if problem else 0
                series[name].samples.append(sample)
                log(f"N={n} {name} run {i}: wall {sample.wall:.2f}s cpu {sample.cpu:.2f}s")
    return {
        "n": n,
        "hosts": kind,
        "series": {k: v.to_dict() for k, v in series.items()},
        "ratios": {
            f"{k}/rocmprov": {
                "wall": round(ratio(v.wall, series["rocmprov"].wall), 2),
                "cpu": round(ratio(v.cpu, series["rocmprov"].cpu), 2),
            }
            for k, v in series.items()
            if k != "rocmprov"
        },
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10,50,100", help="host counts (default 10,50,100)")
    parser.add_argument("--runs", type=int, default=5, help="runs of rocmprov and pdsh (5)")
    parser.add_argument("--ansible-runs", type=int, default=3, help="runs of ansible (3)")
    parser.add_argument("--ansible-tuned", action="store_true", help="also ansible --forks 64")
    parser.add_argument("--lab-max", type=int, default=16, help="largest N on lab hosts (16)")
    parser.add_argument("--workdir", help="scratch directory (default: a new temp dir)")
    parser.add_argument("--out", help="results directory (default benchmarks/results)")
    parser.add_argument(
        "--append", action="store_true", help="keep other sizes already in the results file"
    )
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    exit_on_signals()
    warm_bytecode()
    tmp = Path(args.workdir or tempfile.mkdtemp(prefix="rocmprov-bench-audit-"))
    tmp.mkdir(parents=True, exist_ok=True)
    doc = {"benchmark": "fleet_audit", "machine": machine(), "versions": versions(), "sizes": []}
    old = (Path(args.out) if args.out else RESULTS) / "fleet_audit.json"
    if args.append and old.is_file():
        doc["sizes"] = [s for s in json.loads(old.read_text())["sizes"] if s["n"] not in sizes]
        doc["appended_to"] = json.loads(old.read_text())["machine"]
    for n in sizes:
        kind = "lab" if n <= args.lab_max and os.geteuid() == 0 else "loopback"
        doc["sizes"].append(
            bench_size(n, kind, args.runs, args.ansible_runs, args.ansible_tuned, tmp)
        )
        doc["sizes"].sort(key=lambda s: s["n"])
        write_result("fleet_audit", doc, Path(args.out) if args.out else None)
    print(fleet_table(doc))
    print(f"\nresults: {write_result('fleet_audit', doc, Path(args.out) if args.out else None)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
