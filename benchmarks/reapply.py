"""No-op re-apply on converged lab hosts: `rocmprov apply` vs bare ansible-playbook (not a test).

    sudo python benchmarks/reapply.py [--sizes 4,16] [--runs 3]

Per size N: start N lab hosts (tests/lab), converge them once with `rocmprov apply`, then time
re-applies (nothing left to change: changed=0 is checked), interleaved run by run:
  rocmprov        `rocmprov apply INV -q --no-audit --format json ...`
  rocmprov-linear the same with `--strategy linear` (Ansible's own strategy, no Mitogen)
  rocmprov+audit  the same with its default post-apply audit (what a user gets by default)
  bare-same       `ansible-playbook -i INV site.yml ...` with exactly rocmprov's Ansible settings
                  (playbooks/ansible.cfg + runner.BASE_ENV + strategy.strategy_env():
                  Mitogen's strategy, pipelining, ControlPersist, forks 20): rocmprov's own
                  overhead is rocmprov / bare-same
  ansible-default `ansible-playbook -i INV playbooks/site.yml ...` from the repository root with
                  Ansible's defaults (no ansible.cfg: forks 5, no pipelining, default
                  ControlPersist 60s)
All use the same variables: the `distro` source (Debian's own ROCm packages, cut to rocminfo and
rocm-smi as in tests/test_apply_lab.py), torch and firmware skipped (the lab has no internet).
Every run starts with no SSH master connections (a fresh ControlPath dir; masters ended after).
Results: benchmarks/results/reapply.json and a table on stdout.
"""

from __future__ import annotations

import argparse
import json
import os
import re
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
from report import reapply_table

VARS = {
    "rocmprov_repo_source": "distro",
    "rocmprov_packages_distro": ["rocminfo", "rocm-smi"],
    "rocmprov_torch_enabled": False,
    "rocmprov_firmware_refresh": False,
    "rocmprov_gpu_users": ["admin"],
}
SKIP_TAGS = "rocmprov_firmware,rocmprov_torch"
PLAYBOOKS = REPO / "playbooks"


def rocmprov_env() -> dict[str, str]:
    """What `rocmprov apply` hands ansible-playbook, less ansible-runner's own plumbing."""
    try:
        from rocmprov.provision.runner import BASE_ENV
        from rocmprov.provision.strategy import strategy_env
    except ImportError:  # apply not built yet: the same settings come from ansible.cfg
        BASE_ENV, strategy_env = {}, dict
    env = {**BASE_ENV, **strategy_env()}  # Mitogen's strategy when installed, as apply runs it
    # ansible-runner sets this one when the caller does not (ansible_runner/config/_base.py)
    env.setdefault("ANSIBLE_HOST_KEY_CHECKING", "False")
    return env


def check_json(out: Path, n: int) -> str:
    try:
        doc = json.loads(out.read_text())
    except (OSError, ValueError):
        return "no JSON (is rocmprov apply usable?)"
    hosts = doc.get("hosts", [])
    bad = [h["host"] for h in hosts if h.get("changed") or h.get("failed") or h.get("unreachable")]
    if len(hosts) != n or bad:
        return f"{len(hosts)}/{n} hosts, not converged: {bad[:4]} status={doc.get('status')}"
    return ""


def check_recap(out: Path, n: int) -> str:
    text = out.read_text(errors="replace")
    good = len(re.findall(r"^\S+\s+:\s+ok=\d+\s+changed=0\s+unreachable=0\s+failed=0", text, re.M))
    return "" if good == n else f"{good}/{n} hosts changed=0 failed=0 in the recap"


def tasks_per_host(out: Path) -> float | None:
    """Mean ok+changed+skipped per host from a recap (Ansible's variants): how many tasks ran."""
    text = out.read_text(errors="replace")
    rows = re.findall(r"^\S+\s+:\s+ok=(\d+)\s+changed=(\d+).*?skipped=(\d+)", text, re.M)
    if not rows:
        return None
    return round(sum(int(a) + int(b) for a, b, _ in rows) / len(rows), 1)


def amd_vars(lab: Path, work: Path) -> dict:
    """The `amd` source: AMD's repositories of the release table, built at AMD's paths and
    signed (tests/lab/amdrepo.py, as the lab tests use them), served on the lab's bridge; the
    table's default release (the one a user gets), no GPU (the driver path is skipped)."""
    sys.path.insert(0, str(REPO))
    from tests.lab import amdrepo
    from tests.lab.lab import Lab

    served = amdrepo.serve(Lab(lab), amdrepo.build(work / "amdrepos" / "root"))
    return {**VARS, "rocmprov_repo_source": "amd", "rocmprov_mirrors": served.mirrors}


def bench_size(n: int, runs: int, with_audit: bool, tmp: Path, source: str = "distro",
               with_linear: bool = True) -> dict:  # fmt: skip
    work = tmp / f"n{n}-{source}"
    work.mkdir(parents=True, exist_ok=True)
    lab = work / "lab"
    varfile = work / "vars.json"
    if (lab / "lab.json").is_file():  # a lab left by an interrupted run: reuse (and stop) it
        log(f"reusing the lab in {lab}")
    else:
        log(f"starting {n} lab hosts")
        subprocess.run(
            [sys.executable, "-m", "tests.lab", "up", str(n), "--workdir", str(lab)],
            cwd=REPO,
            check=True,
            stdout=subprocess.DEVNULL,
            timeout=600,
        )
    try:
        varfile.write_text(json.dumps(amd_vars(lab, work) if source == "amd" else VARS))
        become_subreaper()
        inv = str(lab / "inventory.ini")
        clean = {k: v for k, v in os.environ.items() if not k.startswith("ANSIBLE_")}
        clean["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{clean.get('PATH', '')}"
        common = ["-e", f"@{varfile}", "--skip-tags", SKIP_TAGS]

        def apply_argv(audit: bool, strategy: str = "mitogen") -> list[str]:
            # the checkout's rocmprov and so the checkout's playbooks/ (PYTHONPATH below), the
            # same roles the ansible-playbook variants run (an installed wheel has its own copy)
            argv = [sys.executable, "-m", "rocmprov", "apply", inv, "-q", "--format", "json"]
            argv += [*common, "--strategy", strategy]
            return argv if audit else [*argv, "--no-audit"]

        def env_for(base: dict[str, str], cp: Path) -> dict[str, str]:
            return {
                **base,
                "PYTHONPATH": str(REPO),
                "ANSIBLE_SSH_CONTROL_PATH_DIR": str(cp),
                "XDG_STATE_HOME": str(work / "state"),
            }

        log(f"N={n}: converging (first apply)")
        cp = Path(tempfile.mkdtemp(prefix="cp", dir=work))
        first = run_measured(
            apply_argv(False),
            env=env_for(clean, cp),
            cwd=work,
            stdout=work / "converge.out",
            cp_dir=cp,
            timeout=1800,
        )
        log(f"N={n}: first apply rc {first.rc} in {first.wall:.1f}s")
        # rocmprov apply usable? If not, the Ansible variants still run.
        converged_doc = (work / "converge.out").read_text(errors="replace")
        apply_ok = converged_doc.lstrip().startswith("{")
        if not apply_ok:
            log(f"N={n}: rocmprov apply gave no JSON; converging with bare ansible-playbook")
            cp = Path(tempfile.mkdtemp(prefix="cp", dir=work))
            env = {
                **env_for(clean, cp),
                **rocmprov_env(),
                "ANSIBLE_CONFIG": str(PLAYBOOKS / "ansible.cfg"),
            }
            run_measured(
                [tool("ansible-playbook"), "-i", inv, "site.yml", *common],
                env=env,
                cwd=PLAYBOOKS,
                stdout=work / "converge2.out",
                cp_dir=cp,
                timeout=1800,
            )

        def rocmprov(audit: bool, strategy: str = "mitogen"):
            def make() -> tuple[list[str], dict[str, str], Path, str]:
                cp = Path(tempfile.mkdtemp(prefix="cp", dir=work))
                return apply_argv(audit, strategy), env_for(clean, cp), cp, str(work)

            return make

        def bare_same() -> tuple[list[str], dict[str, str], Path, str]:
            cp = Path(tempfile.mkdtemp(prefix="cp", dir=work))
            env = {
                **env_for(clean, cp),
                **rocmprov_env(),
                "ANSIBLE_CONFIG": str(PLAYBOOKS / "ansible.cfg"),
            }
            return (
                [tool("ansible-playbook"), "-i", inv, "site.yml", *common],
                env,
                cp,
                str(PLAYBOOKS),
            )

        def ansible_default() -> tuple[list[str], dict[str, str], Path, str]:
            cp = Path(tempfile.mkdtemp(prefix="cp", dir=work))
            argv = [tool("ansible-playbook"), "-i", inv, "playbooks/site.yml", *common]
            return argv, env_for(clean, cp), cp, str(REPO)

        variants = []
        if apply_ok:
            variants.append(("rocmprov", rocmprov(False), check_json))
            if with_linear:
                variants.append(("rocmprov-linear", rocmprov(False, "linear"), check_json))
            if with_audit:
                variants.append(("rocmprov+audit", rocmprov(True), check_json))
        variants += [
            ("bare-same", bare_same, check_recap),
            ("ansible-default", ansible_default, check_recap),
        ]
        series = {name: Series(name, n) for name, *_ in variants}
        for i in range(runs):
            for name, make, check in variants:
                argv, env, cp, cwd = make()
                out = work / f"{name}-{i}.out"
                sample = run_measured(argv, env=env, cwd=cwd, stdout=out, cp_dir=cp, timeout=1800)
                problem = check(out, n)
                series[name].tasks_per_host = tasks_per_host(out)
                if problem:
                    series[name].note = f"run {i}: {problem} (rc {sample.rc})"
                    log(f"N={n} {name} run {i}: PROBLEM {problem}; see {out}")
                sample.rc = 1 if problem else 0
                series[name].samples.append(sample)
                log(f"N={n} {name} run {i}: wall {sample.wall:.2f}s cpu {sample.cpu:.2f}s")
    finally:
        log("stopping the lab")
        subprocess.run(
            [sys.executable, "-m", "tests.lab", "down", "--workdir", str(lab)],
            cwd=REPO,
            check=False,
            stdout=subprocess.DEVNULL,
            timeout=300,
        )
    ratios = {}
    if "rocmprov" in series:
        r = series["rocmprov"]
        ratios = {
            "overhead_vs_bare_same_pct": round(
                100 * (ratio(r.wall, series["bare-same"].wall) - 1), 1
            ),
            "ansible_default/rocmprov": round(ratio(series["ansible-default"].wall, r.wall), 2),
        }
        if "rocmprov+audit" in series:
            ratios["ansible_default/rocmprov+audit"] = round(
                ratio(series["ansible-default"].wall, series["rocmprov+audit"].wall), 2
            )
    return {
        "n": n,
        "first_apply": {"wall_s": round(first.wall, 2), "rc": first.rc, "usable": apply_ok},
        "series": {k: v.to_dict() for k, v in series.items()},
        "ratios": ratios,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="4,16", help="lab host counts (default 4,16)")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument(
        "--no-audit-variant", action="store_true", help="skip the rocmprov+audit variant"
    )
    parser.add_argument(
        "--source",
        choices=("distro", "amd"),
        default="distro",
        help="distro: Debian's own ROCm packages (the earlier runs); amd: AMD's repositories at "
        "their published paths, served in the lab, the default release (results: reapply-amd.json)",
    )
    parser.add_argument(
        "--no-linear-variant", action="store_true", help="skip the rocmprov-linear variant"
    )
    parser.add_argument("--workdir", help="scratch directory (default: a new temp dir)")
    parser.add_argument("--out", help="results directory (default benchmarks/results)")
    parser.add_argument(
        "--append", action="store_true", help="keep other sizes already in the results file"
    )
    args = parser.parse_args()
    if os.geteuid() != 0:
        raise SystemExit("benchmark: the lab needs root (sudo)")
    exit_on_signals()
    warm_bytecode()
    tmp = Path(args.workdir or tempfile.mkdtemp(prefix="rocmprov-bench-apply-"))
    tmp.mkdir(parents=True, exist_ok=True)
    out = Path(args.out) if args.out else None
    doc = {
        "benchmark": "reapply",
        "machine": machine(),
        "versions": versions(),
        "vars": VARS,
        "skip_tags": SKIP_TAGS,
        "sizes": [],
    }
    name = "reapply-amd" if args.source == "amd" else "reapply"
    doc["source"] = args.source
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    old = (out or RESULTS) / f"{name}.json"
    if args.append and old.is_file():
        doc["sizes"] = [s for s in json.loads(old.read_text())["sizes"] if s["n"] not in sizes]
    for n in sizes:
        audit, linear = not args.no_audit_variant, not args.no_linear_variant
        doc["sizes"].append(bench_size(n, args.runs, audit, tmp, args.source, linear))
        doc["sizes"].sort(key=lambda s: s["n"])
        write_result(name, doc, out)
    print(reapply_table(doc))
    for size in doc["sizes"]:
        print(f"N={size['n']}: {size['ratios']}")
    print(f"\nresults: {write_result(name, doc, out)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
