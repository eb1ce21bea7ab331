"""AMD's Container Toolkit apt repository for the lab, at the path AMD publishes it.

AMD's quick start guide (rocmprov/data/containers.yaml) installs `amd-container-toolkit` from
`https://repo.radeon.com/amd-container-toolkit/apt/ <codename> main`, signed with the ROCm key
`https://repo.radeon.com/rocm/rocm.gpg.key`. The lab cannot reach it, so this builds the same
layout below one directory per upstream host, signed with a lab key published at the key URL's
path, the way tests/lab/amdrepo.py builds the ROCm repositories:

    ROOT/repo.radeon.com/rocm/rocm.gpg.key
    ROOT/repo.radeon.com/amd-container-toolkit/apt/dists/jammy/{InRelease,Release,Release.gpg}
    ROOT/repo.radeon.com/amd-container-toolkit/apt/pool/main/a/amd-container-toolkit/*.deb

The package is a stand-in (tests/lab/ctk_standin: amd-ctk in Python following AMD's Go source,
amd-container-runtime a stub) laid out as AMD's .deb is: both programs in /usr/local/bin,
Depends: jq, a preinst that refuses to install while /sys/module/amdgpu/drivers/ is absent and
a postinst that calls `amd-ctk gpu-tracker init`, as AMD's build/debian scripts do.

    python -m tests.lab.ctkrepo OUTDIR
"""

from __future__ import annotations

import argparse
import gzip
import subprocess
import tempfile
from pathlib import Path

from tests.lab.amdrepo import Repo, _Deb, _Gpg, _release, _stanza

HERE = Path(__file__).resolve().parent
HOST = "repo.radeon.com"
KEY_URL = f"https://{HOST}/rocm/rocm.gpg.key"
PATH = "amd-container-toolkit/apt"
# AMD's Makefile: DEBIAN_VERSION 1.3.0, BUILD_VER_ENV = <version>~<ubuntu release>.
VERSION = "1.3.0~22.04"

# Written here from what AMD's maintainer scripts do (not copied).
PREINST = """#!/bin/sh
set -e
if [ "$1" = install ] || [ "$1" = upgrade ]; then
    if [ ! -d /sys/module/amdgpu/drivers/ ]; then
        echo "amd-container-toolkit (lab stand-in): the amdgpu driver is not loaded" >&2
        exit 1
    fi
fi
exit 0
"""
POSTINST = """#!/bin/sh
set -e
[ "$1" = configure ] && { /usr/local/bin/amd-ctk gpu-tracker init || true; }
exit 0
"""


def _deb(out_dir: Path) -> tuple[_Deb, Path]:
    spec = _Deb("amd-container-toolkit", VERSION, arch="amd64", depends="jq",
                description="lab stand-in for AMD's Container Toolkit (amd-ctk, "
                "amd-container-runtime)",
                scripts={"preinst": PREINST, "postinst": POSTINST})
    with tempfile.TemporaryDirectory() as tmp:
        pkg = Path(tmp)
        pkg.chmod(0o755)
        (pkg / "DEBIAN").mkdir()
        control = (f"Package: {spec.name}\nVersion: {spec.version}\nArchitecture: amd64\n"
                   f"Maintainer: rocmprov lab <lab@localhost>\nDepends: {spec.depends}\n"
                   f"Description: {spec.description}\n")
        (pkg / "DEBIAN/control").write_text(control)
        for name, text in spec.scripts.items():
            (pkg / "DEBIAN" / name).write_text(text)
            (pkg / "DEBIAN" / name).chmod(0o755)
        bindir = pkg / "usr/local/bin"
        bindir.mkdir(parents=True)
        for name in ("amd-ctk", "amd-container-runtime"):
            (bindir / name).write_bytes((HERE / "ctk_standin" / name).read_bytes())
            (bindir / name).chmod(0o755)
        for d in (pkg / "usr", pkg / "usr/local", bindir):
            d.chmod(0o755)
        out_dir.mkdir(parents=True, exist_ok=True)
        deb = out_dir / f"{spec.name}_{spec.version}_amd64.deb"
        subprocess.run(["dpkg-deb", "--root-owner-group", "-Zgzip", "-z1", "--build", str(pkg),
                        str(deb)], check=True, capture_output=True)
    return spec, deb


def build(root: Path, suites: tuple[str, ...] = ("jammy", "noble")) -> Path:
    """The repository under root (a new directory); returns root."""
    root = Path(root)
    root.mkdir(parents=True)
    base = root / HOST / PATH
    spec, deb = _deb(base / "pool/main/a/amd-container-toolkit")
    gpg = _Gpg()
    try:
        key = root / HOST / "rocm/rocm.gpg.key"
        key.parent.mkdir(parents=True)
        key.write_bytes(gpg.export(KEY_URL))
        for suite in suites:
            repo = Repo(HOST, PATH, suite, HOST, KEY_URL, "amd-container-toolkit")
            dist = base / "dists" / suite
            bindir = dist / "main/binary-amd64"
            bindir.mkdir(parents=True)
            text = _stanza(deb, spec, base)
            (bindir / "Packages").write_text(text)
            (bindir / "Packages.gz").write_bytes(gzip.compress(text.encode(), mtime=0))
            (dist / "Release").write_text(_release(repo, dist))
            gpg.sign(KEY_URL, dist)
    finally:
        gpg.close()
    return root


def mirrors(url: str) -> dict[str, str]:
    """rocmprov_mirrors for a server of build()'s root at url."""
    return {f"https://{HOST}": f"{url.rstrip('/')}/{HOST}"}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path, help="new directory")
    root = build(ap.parse_args().out)
    print("\n".join(str(p.relative_to(root)) for p in sorted(root.rglob("*")) if p.is_file()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
