"""Build small apt repositories for lab tests: dummy .debs, Packages, a signed Release.

A repository made here, served with Lab.serve_dir(), stands in for a vendor repository (for
example repo.radeon.com) in the hosts: the same deb822 `.sources` + Signed-By keyring form.

    repo = build_repo(tmp_path / "repo", [DebSpec("rocm-dummy", "6.2.0")], suite="jammy")
    url = lab.serve_dir(repo.root)
    sources = repo.deb822(url, "/etc/apt/keyrings/lab.gpg")   # + write repo.keyring there
"""

from __future__ import annotations

import gzip
import hashlib
import os
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from email.utils import formatdate
from pathlib import Path

KEY_UID = "rocmprov lab repository <lab@localhost>"


@dataclass
class DebSpec:
    """One dummy package: name, version, and the files it installs (path -> text)."""

    name: str
    version: str
    arch: str = "all"
    depends: str = ""
    files: dict[str, str] = field(default_factory=dict)
    description: str = "rocmprov lab test package"


@dataclass
class AptRepo:
    root: Path
    suite: str
    component: str
    keyring: Path | None  # binary OpenPGP public key, for Signed-By
    armored_key: Path | None

    def deb822(self, url: str, signed_by: str | None = None) -> str:
        """The .sources stanza for this repository at url (signed_by: key path in the host)."""
        lines = ["Types: deb", f"URIs: {url}", f"Suites: {self.suite}",
                 f"Components: {self.component}"]
        lines.append(f"Signed-By: {signed_by}" if signed_by else "Trusted: yes")
        return "\n".join(lines) + "\n"


def build_deb(spec: DebSpec, out_dir: Path) -> Path:
    with tempfile.TemporaryDirectory() as tmp:
        pkg = Path(tmp)
        (pkg / "DEBIAN").mkdir()
        control = (f"Package: {spec.name}\nVersion: {spec.version}\nArchitecture: {spec.arch}\n"
                   f"Maintainer: {KEY_UID}\nDescription: {spec.description}\n")
        if spec.depends:
            control += f"Depends: {spec.depends}\n"
        (pkg / "DEBIAN/control").write_text(control)
        for path, text in spec.files.items():
            target = pkg / path.lstrip("/")
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text)
        out_dir.mkdir(parents=True, exist_ok=True)
        deb = out_dir / f"{spec.name}_{spec.version}_{spec.arch}.deb"
        subprocess.run(["dpkg-deb", "--root-owner-group", "--build", str(pkg), str(deb)],
                       check=True, capture_output=True)
    return deb


def _release(root: Path, suite: str, component: str, archs: list[str]) -> str:
    dist = root / "dists" / suite
    files = sorted(p for p in dist.rglob("Packages*") if p.is_file())
    lines = ["Origin: rocmprov-lab", "Label: rocmprov-lab", f"Suite: {suite}",
             f"Codename: {suite}", f"Date: {formatdate(usegmt=True)}",
             f"Architectures: {' '.join(archs)}", f"Components: {component}", "SHA256:"]
    for f in files:
        digest = hashlib.sha256(f.read_bytes()).hexdigest()
        lines.append(f" {digest} {f.stat().st_size} {f.relative_to(dist)}")
    return "\n".join(lines) + "\n"


def _sign(dist: Path, keys_out: Path) -> tuple[Path, Path]:
    """Make a throwaway key, write InRelease and Release.gpg, export the public key."""
    home = Path(tempfile.mkdtemp(prefix="rocmprov-lab-gpg."))
    os.chmod(home, 0o700)
    env = {**os.environ, "GNUPGHOME": str(home)}
    gpg = ["gpg", "--batch", "--quiet", "--pinentry-mode", "loopback", "--passphrase", ""]
    try:
        subprocess.run([*gpg, "--quick-gen-key", KEY_UID, "ed25519", "sign", "never"],
                       env=env, check=True, capture_output=True)
        release = dist / "Release"
        subprocess.run([*gpg, "--yes", "--clearsign", "-o", str(dist / "InRelease"),
                        str(release)], env=env, check=True, capture_output=True)
        subprocess.run([*gpg, "--yes", "-abs", "-o", str(dist / "Release.gpg"), str(release)],
                       env=env, check=True, capture_output=True)
        keyring, armored = keys_out / "repo-key.gpg", keys_out / "repo-key.asc"
        keyring.write_bytes(subprocess.run([*gpg, "--export"], env=env, check=True,
                                           capture_output=True).stdout)
        armored.write_bytes(subprocess.run([*gpg, "--armor", "--export"], env=env, check=True,
                                           capture_output=True).stdout)
        return keyring, armored
    finally:
        subprocess.run(["gpgconf", "--kill", "all"], env=env, check=False, capture_output=True)
        shutil.rmtree(home, ignore_errors=True)


def build_repo(root: Path, packages: Sequence[DebSpec], suite: str = "stable",
               component: str = "main", archs: Sequence[str] = ("amd64",),
               sign: bool = True) -> AptRepo:
    """A pool/ + dists/ repository under root; signed with a fresh key unless sign=False.

    The public key is written next to the repository (root.parent), not inside it."""
    root = Path(root)
    pool = root / "pool" / component
    for spec in packages:
        build_deb(spec, pool)
    scan = subprocess.run(["dpkg-scanpackages", "--multiversion", f"pool/{component}"],
                          cwd=root, check=True, capture_output=True, text=True).stdout
    for arch in archs:
        bindir = root / "dists" / suite / component / f"binary-{arch}"
        bindir.mkdir(parents=True, exist_ok=True)
        (bindir / "Packages").write_text(scan)
        (bindir / "Packages.gz").write_bytes(gzip.compress(scan.encode(), mtime=0))
    dist = root / "dists" / suite
    (dist / "Release").write_text(_release(root, suite, component, list(archs)))
    keyring = armored = None
    if sign:
        keyring, armored = _sign(dist, root.parent)
    return AptRepo(root, suite, component, keyring, armored)
