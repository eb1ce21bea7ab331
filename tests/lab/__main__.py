"""python -m tests.lab up N | serve [--tls] | down | status | reset HOST | measure N...
(all with --workdir DIR). docs/lab.md says how to try `rocmprov apply` with them."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from .lab import Lab, LabError

MIB = 2**20


def cmd_up(lab: Lab, args: argparse.Namespace) -> int:
    t0 = time.monotonic()
    hosts = lab.start(args.n)
    print(f"{len(hosts)} hosts up in {time.monotonic() - t0:.1f}s", file=sys.stderr)
    for h in hosts:
        print(f"{h.name}\t{h.address}")
    print(f"inventory: {lab.inventory}\nssh:       ssh -F {lab.ssh_config} {hosts[0].name}"
          f"\nsudo user: admin (ssh -F {lab.ssh_config} -l admin {hosts[0].name})"
          f"\nstop:      python -m tests.lab down --workdir {lab.workdir}", file=sys.stderr)
    return 0


def cmd_serve(lab: Lab, args: argparse.Namespace) -> int:
    """AMD's repositories as AMD lays them out, the release's torch index and the lab kernel's
    headers, served to the running lab's hosts; prints the variables that point apply at them."""
    import json
    import platform

    import yaml

    from rocmprov.knowledge import releases

    from . import amdrepo, pyindex

    if lab.number is None:
        print("no lab running here: python -m tests.lab up N first", file=sys.stderr)
        return 1
    facts = {"distribution": "Debian", "distribution_version": "12", "os_family": "Debian"}
    plan = releases.resolve(args.release or "", facts)
    root = lab.workdir / "serve" / "root"
    repos = amdrepo.build(root)
    wheel = pyindex.torch_wheel(lab.workdir / "serve" / "wheels",
                                f"{plan['torch_version']}+rocm{plan['version']}",
                                f"{plan['version']}-lab")  # fmt: skip
    if plan.get("torch_index"):
        pyindex.add_index(root, plan["torch_index"], [wheel])
    url = lab.serve_dir(root, tls=args.tls)
    headers = amdrepo.kernel_headers_repo(lab.workdir / "serve" / "headers", platform.release())
    headers_url = lab.serve_dir(headers.root)
    for h in lab.hosts:  # what an admin's hosts have already: kernel headers, the site CA
        lab.exec(h, ["sh", "-c", "cat > /etc/apt/sources.list.d/lab-kernel-headers.sources"],
                 input=headers.deb822(headers_url))  # fmt: skip
        if args.tls:
            lab.trust_lab_ca(h)
    wanted = {
        "rocmprov_rocm_version": plan["version"],
        "rocmprov_mirrors": repos.mirrors(url),
        "rocmprov_driver_force": True,  # the lab has no GPU: exercise the driver path anyway
        "rocmprov_firmware_refresh": False,  # no network for LVFS
    }
    out = lab.workdir / "apply-vars.yml"
    out.write_text(yaml.safe_dump(wanted, sort_keys=False))
    print(json.dumps(wanted, indent=2))
    print(f"\nROCm {plan['version']} served at {url} (torch {wheel.name}).\n"
          f"try:  rocmprov apply {lab.inventory} -e @{out} --check --diff\n"
          f"      rocmprov apply {lab.inventory} -e @{out}\n"
          f"      rocmprov audit {lab.inventory}", file=sys.stderr)  # fmt: skip
    return 0


def cmd_down(lab: Lab, _args: argparse.Namespace) -> int:
    lab.stop()
    return 0


def cmd_status(lab: Lab, _args: argparse.Namespace) -> int:
    if lab.number is None:
        print("no lab running here")
        return 1
    from .lab import alive
    for h in lab.hosts:
        print(f"{h.name}\t{h.address}\t{'up' if alive(h.supervisor) else 'down'}")
    return 0


def cmd_reset(lab: Lab, args: argparse.Namespace) -> int:
    by_name = {h.name: h for h in lab.hosts}
    if args.host not in by_name:
        print(f"no host {args.host}; hosts: {', '.join(by_name)}", file=sys.stderr)
        return 64
    lab.reset(by_name[args.host])
    return 0


def dir_bytes(path: Path) -> int:
    return sum(f.lstat().st_blocks * 512 for f in path.rglob("*") if not f.is_symlink())


def cmd_measure(lab: Lab, args: argparse.Namespace) -> int:
    """Start and stop labs of the given sizes; print times, memory and disk per host."""
    print("hosts  start_s  stop_s  rss_MiB/host  cache_MiB/host  disk_MiB/host")
    for n in args.sizes:
        sized = Lab(lab.workdir / f"measure-{n}")
        t0 = time.monotonic()
        try:
            sized.start(n)
            started = time.monotonic() - t0
            time.sleep(args.settle)
            rss = sum(sized.memory_bytes(h) for h in sized.hosts) / n / MIB
            cache = sum(sized.memory_bytes(h, "total_cache") for h in sized.hosts) / n / MIB
            disk = sum(dir_bytes(h.upper) for h in sized.hosts) / n / MIB
        finally:
            t1 = time.monotonic()
            sized.stop()
        print(f"{n:5d}  {started:7.1f}  {time.monotonic() - t1:6.1f}  {rss:12.1f}"
              f"  {cache:14.1f}  {disk:13.1f}", flush=True)
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m tests.lab", description="rocmprov lab hosts")
    sub = p.add_subparsers(dest="cmd", required=True)
    up = sub.add_parser("up", help="start N hosts")
    up.add_argument("n", type=int)
    up.set_defaults(fn=cmd_up)
    sv = sub.add_parser("serve", help="serve AMD-layout repositories and a torch index to it")
    sv.add_argument("--release", help="ROCm release (default: the release table's default)")
    sv.add_argument("--tls", action="store_true", help="over https, the lab's CA trusted on hosts")
    sv.set_defaults(fn=cmd_serve)
    sub.add_parser("down", help="stop the lab and remove all it made").set_defaults(fn=cmd_down)
    sub.add_parser("status", help="list the hosts").set_defaults(fn=cmd_status)
    rs = sub.add_parser("reset", help="boot one host pristine")
    rs.add_argument("host")
    rs.set_defaults(fn=cmd_reset)
    ms = sub.add_parser("measure", help="time starting/stopping labs of some sizes")
    ms.add_argument("sizes", type=int, nargs="+")
    ms.add_argument("--settle", type=float, default=5.0, help="seconds idle before measuring")
    ms.set_defaults(fn=cmd_measure)
    for sp in sub.choices.values():
        sp.add_argument("--workdir", required=True, help="where the lab keeps its state and keys")
    args = p.parse_args(argv)
    try:
        return int(args.fn(Lab(args.workdir), args))
    except LabError as exc:
        print(f"lab: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
