"""Fleet audit at scale: `rocmprov audit` on N = 100 ... 2,000 SSH hosts, with pdsh and Ansible
at the sizes they reach in reasonable time here (a measurement, not a test).

    pip install '.[bench]'        # asyncssh, for the SSH servers only
    python benchmarks/fleet_scale.py --sizes 100,500,1000,2000 --pdsh-sizes 100,500 \\
        --ansible-sizes 100 --runs 1

Hosts: benchmarks/sshfarm.py, one asyncssh server process per 250 loopback addresses
(127.20.x.y:2222), a host key per address, real key exchange and public key auth, answering
rocmprov's probe script with a real bundle's recorded outputs after --delay seconds. Nothing
runs the probes on this machine, so the controller's cost is what is measured, not 2,000
hosts' own work (the servers' CPU is not counted; it does share this machine's cores).

Per run of a tool (interleaved run by run): wall time, controller CPU (user+sys of the tool's
whole process tree, OpenSSH ControlPersist masters included, as in benchmarks/_bench.py),
peak memory (sum of VmRSS over the tool's process group, sampled every 0.2 s) and peak open
file descriptors (the same group, same sampling). Every run is checked: N hosts audited.

  rocmprov     `rocmprov audit INV --format json --forks F` (one SSH connection per host)
  pdsh         `pdsh -R ssh -f F -w ^HOSTS '<the probe script>'` (raw output, no analysis)
  ansible      `ansible-playbook -i INV raw.yml`: gather_facts off, one ansible.builtin.raw
               task with the same script (Ansible's cheapest path; its defaults: 5 forks)

The inventory cache (rocmprov/inventory/cache.py) is warmed once per size before the timed
runs, as on a controller that audits the same fleet again; --cold-inventory turns it off.
Results: benchmarks/results/fleet_scale.json and a table on stdout.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import secrets
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _bench import (
    REPO,
    _cpu,
    become_subreaper,
    children,
    exit_on_signals,
    log,
    machine,
    reap_orphans,
    stop_control_masters,
    table,
    tool,
    tool_env,
    versions,
    warm_bytecode,
    write_result,
)
from sshfarm import SSHFarm

PLAYBOOK = """\
- name: Audit GPU hosts with the raw module (no Python needed on the host)
  hosts: farm
  gather_facts: false
  tasks:
    - name: Run the probe script
      ansible.builtin.raw: "{{ lookup('ansible.builtin.file', script) }}"
      register: probes
      changed_when: false
"""


@dataclass
class Sample:
    tool: str
    n: int
    wall: float
    cpu: float
    rss_mb: float
    fds: int
    procs: int
    rc: int
    check: str

    @property
    def cpu_ms_per_host(self) -> float:
        return 1000 * self.cpu / self.n


class Sampler(threading.Thread):
    """Peak RSS, fds and process count of one process group, polled from /proc."""

    def __init__(self, pgid: int, interval: float = 0.2) -> None:
        super().__init__(daemon=True)
        self.pgid, self.interval = pgid, interval
        self.rss_kb = self.fds = self.procs = 0
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.is_set():
            self.sample()
            self.stop.wait(self.interval)

    def sample(self) -> None:
        rss = fds = procs = 0
        for d in os.scandir("/proc"):
            if not d.name.isdigit():
                continue
            try:
                with open(f"/proc/{d.name}/stat", "rb") as fh:
                    fields = fh.read().rsplit(b")", 1)[1].split()
                if int(fields[2]) != self.pgid:
                    continue
                with open(f"/proc/{d.name}/statm", "rb") as fh:
                    rss += int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") // 1024
                fds += len(os.listdir(f"/proc/{d.name}/fd"))
                procs += 1
            except (OSError, IndexError, ValueError):
                continue
        self.rss_kb, self.fds = max(self.rss_kb, rss), max(self.fds, fds)
        self.procs = max(self.procs, procs)


def measure(name: str, n: int, argv: list[str], env: dict, out: Path, cp: Path | None) -> Sample:
    baseline = children()
    before = _cpu()
    start = time.perf_counter()
    with open(out, "wb") as so, open(f"{out}.err", "wb") as se:
        proc = subprocess.Popen(
            argv,
            env=env,
            cwd=REPO,
            stdin=subprocess.DEVNULL,
            stdout=so,
            stderr=se,
            start_new_session=True,
        )
        sampler = Sampler(proc.pid)
        sampler.start()
        try:
            rc = proc.wait(timeout=1800)
        finally:
            sampler.stop.set()
            sampler.join()
            if proc.poll() is None:
                os.killpg(proc.pid, 15)  # the group we started, by its id
                proc.wait(timeout=30)
    wall = time.perf_counter() - start
    if cp is not None:
        stop_control_masters(cp)
    reap_orphans(baseline, 10.0)
    cpu = _cpu() - before
    return Sample(name, n, wall, cpu, sampler.rss_kb / 1024, sampler.fds, sampler.procs, rc, "?")


def check_rocmprov(out: Path, n: int) -> str:
    try:
        doc = json.loads(out.read_text())
    except ValueError:
        return "no JSON"
    audited = sum(1 for h in doc.get("hosts", []) if h.get("status") == "audited")
    return "ok" if audited == n else f"{audited}/{n} audited"


def check_pdsh(out: Path, n: int, nonce: str) -> str:
    done = {
        ln.split(":", 1)[0]
        for ln in out.read_text(errors="replace").splitlines()
        if ln.endswith(f"@@rocmprov-{nonce} done")
    }
    return "ok" if len(done) == n else f"{len(done)}/{n} done"


def check_ansible(out: Path, n: int) -> str:
    text = out.read_text(errors="replace")
    good = sum(
        1
        for ln in text.splitlines()
        if ": ok=1 " in ln and "unreachable=0" in ln and "failed=0" in ln
    )
    return "ok" if good == n else f"{good}/{n} ok"


def probe_script(nonce: str) -> str:
    from rocmprov.collect.probes import build_probes
    from rocmprov.collect.remote import build_script

    return build_script(build_probes(), nonce)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="100,500,1000,2000")
    ap.add_argument("--pdsh-sizes", default="100,500")
    ap.add_argument("--ansible-sizes", default="100")
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--forks", type=int, default=64)
    ap.add_argument("--delay", type=float, default=1.0, help="a host's probe script time, s")
    ap.add_argument("--cold-inventory", action="store_true")
    ap.add_argument("--workdir", type=Path)
    ap.add_argument("--out", type=Path, default=REPO / "benchmarks" / "results")
    args = ap.parse_args()
    sizes = [int(x) for x in args.sizes.split(",") if x]
    pdsh_sizes = {int(x) for x in args.pdsh_sizes.split(",") if x}
    ansible_sizes = {int(x) for x in args.ansible_sizes.split(",") if x}
    exit_on_signals()
    become_subreaper()
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))  # inherited by every tool
    warm_bytecode()
    work = args.workdir or Path(tempfile.mkdtemp(prefix="rocmprov-scale-"))
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    info = {"machine": machine(), "versions": versions(), "started": started}
    samples: list[Sample] = []
    base = tool_env()
    base.pop("SSH_AUTH_SOCK", None)  # the inventory's key, not an agent's
    cache_dir = work / "cache"
    base["ROCMPROV_CACHE_DIR"] = str(cache_dir)
    if args.cold_inventory:
        base["ROCMPROV_INVENTORY_CACHE"] = "0"
    rocmprov = [sys.executable, "-m", "rocmprov"]  # the checkout's (cwd is REPO)
    with SSHFarm(max(sizes), work / "farm", delay=args.delay) as farm:
        log(f"farm of {max(sizes)} hosts up in {work / 'farm'}")
        for n in sizes:
            inv, hosts = farm.subset(n)
            nonce = secrets.token_hex(16)
            script = work / f"script-{n}.sh"
            script.write_text(probe_script(nonce))
            playbook = work / "raw.yml"
            playbook.write_text(PLAYBOOK)
            r_argv = [
                *rocmprov,
                "audit",
                str(inv),
                "--format",
                "json",
                "--known-hosts",
                str(farm.known_hosts),
                "--forks",
                str(args.forks),
            ]
            if not args.cold_inventory:  # warm the inventory cache (not timed)
                subprocess.run(
                    [
                        sys.executable,
                        "-c",
                        "import sys; from rocmprov.inventory.hosts import load_inventory;"
                        "load_inventory(sys.argv[1])",
                        str(inv),
                    ],
                    env=base,
                    cwd=REPO,
                    timeout=600,
                    check=False,
                )
            for run in range(args.runs):
                out = work / f"rocmprov-{n}-{run}.json"
                s = measure("rocmprov", n, r_argv, base, out, None)
                s.check = check_rocmprov(out, n)
                samples.append(s)
                log(
                    f"N={n} rocmprov: {s.wall:.1f}s wall, {s.cpu_ms_per_host:.1f} ms/host, "
                    f"{s.rss_mb:.0f} MB, {s.fds} fds: {s.check}"
                )
                if n in pdsh_sizes:
                    out = work / f"pdsh-{n}-{run}.out"
                    env = {**base, "PDSH_SSH_ARGS": f"-F {farm.ssh_config} -x -l%u %h"}
                    argv = [
                        "pdsh",
                        "-R",
                        "ssh",
                        "-f",
                        str(args.forks),
                        "-w",
                        f"^{hosts}",
                        script.read_text(),
                    ]
                    s = measure("pdsh", n, argv, env, out, None)
                    s.check = check_pdsh(out, n, nonce)
                    samples.append(s)
                    log(f"N={n} pdsh: {s.wall:.1f}s, {s.cpu_ms_per_host:.1f} ms/host: {s.check}")
                if n in ansible_sizes:
                    out = work / f"ansible-{n}-{run}.out"
                    cp = work / f"cp-{n}-{run}"
                    cp.mkdir()
                    env = {
                        **base,
                        "ANSIBLE_SSH_CONTROL_PATH_DIR": str(cp),
                        "ANSIBLE_NOCOLOR": "1",
                        "ANSIBLE_HOST_KEY_CHECKING": "True",
                    }
                    argv = [
                        tool("ansible-playbook"),
                        "-i",
                        str(inv),
                        str(playbook),
                        "-e",
                        f"script={script}",
                    ]
                    s = measure("ansible", n, argv, env, out, cp)
                    s.check = check_ansible(out, n)
                    samples.append(s)
                    log(f"N={n} ansible: {s.wall:.1f}s, {s.cpu_ms_per_host:.1f} ms/host: {s.check}")
    doc = {
        **info,
        "forks": args.forks,
        "delay": args.delay,
        "runs": args.runs,
        "cold_inventory": args.cold_inventory,
        "samples": [asdict(s) for s in samples],
    }
    path = write_result("fleet_scale", doc, args.out)
    print(render(samples))
    log(f"wrote {path}")
    return 0


def render(samples: list[Sample]) -> str:
    import statistics

    rows = []
    keys = sorted({(s.n, s.tool) for s in samples}, key=lambda k: (k[0], k[1] != "rocmprov", k[1]))
    for n, name in keys:
        group = [s for s in samples if s.n == n and s.tool == name]
        ref = [s for s in samples if s.n == n and s.tool == "rocmprov"]
        cpu = statistics.median(s.cpu for s in group)
        wall = statistics.median(s.wall for s in group)
        ref_cpu = statistics.median(s.cpu for s in ref) if ref else float("nan")
        ref_wall = statistics.median(s.wall for s in ref) if ref else float("nan")
        rows.append(
            [
                str(n),
                name,
                f"{wall:.1f}",
                f"{cpu:.2f}",
                f"{1000 * cpu / n:.1f}",
                f"{max(s.rss_mb for s in group):.0f}",
                str(max(s.fds for s in group)),
                str(max(s.procs for s in group)),
                f"{wall / ref_wall:.2f}x",
                f"{cpu / ref_cpu:.2f}x",
                str(len(group)),
                ",".join(sorted({s.check for s in group})),
            ]
        )
    header = [
        "N",
        "tool",
        "wall s",
        "ctrl CPU s",
        "CPU ms/host",
        "peak RSS MB",
        "peak fds",
        "procs",
        "wall / rocmprov",
        "CPU / rocmprov",
        "runs",
        "check",
    ]
    return table(rows, header)


if __name__ == "__main__":
    sys.exit(main())
