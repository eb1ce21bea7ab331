"""AMD's apt repositories as AMD lays them out, signed, for the lab.

The paths, suites, hosts and keys come from AMD's layout rules (tests/lab/amd_layout.yaml,
written from AMD's install-doc sources), NOT from the release table's path fields: of each
row of playbooks/data/rocm_releases.yml only its version, stream, driver version, listed
distributions and packages are read. So a row whose path AMD never published (graphics/7.2.2,
amdgpu/.../el/8.10) points at nothing the lab serves, and apply fails in the lab as upstream:

    ROOT/repo.radeon.com/rocm/rocm.gpg.key                      (legacy key, armored)
    ROOT/repo.radeon.com/rocm/apt/7.2.1/dists/jammy/...         (rocm/apt/{rel})
    ROOT/repo.radeon.com/amdgpu/30.30.1/ubuntu/dists/jammy/...  (amdgpu/{driver}/ubuntu)
    ROOT/repo.radeon.com/graphics/7.2.1/ubuntu/dists/jammy/...  (graphics/{rel}/ubuntu, 7.x)
    ROOT/stable.repo.amd.com/rocm/core/packages/debian12/dists/stable/...   (TheRock 10.x)
    ROOT/repo.radeon.com/amdgpu/31.50/ubuntu/dists/jammy/...    (10.x driver, legacy key)

Serve ROOT once (`Lab.serve_dir`) and hand the playbooks `mirrors(url)`: every upstream URL of
the table is rewritten onto the lab server, so the resolver's own URLs are what the hosts use.

Each Release carries `Origin:` = the upstream host name (repo.radeon.com: AMD's pin origin)
and is signed (InRelease + Release.gpg) with a key of its own per key URL of the rules,
published ASCII-armored at that URL's path. The packages are the
row's `packages` (meta-packages) in the rocm repository and its `dkms_package` in the amdgpu
one, versioned as AMD versions them (legacy `7.2.1.70201-1~22.04`, TheRock `10.0.0-1`). A
meta-package lays down the release's prefix with `<prefix>/.info/version` and, for every fixed
path of the stream's `version_files` that is not under the prefix (legacy /opt/rocm, TheRock
/opt/rocm/core), an update-alternatives link to the prefix, removed again when it is purged.

Building every repository of the table takes a few seconds: dummy .debs with dpkg-deb in
parallel, Packages written here (no dpkg-scanpackages), one gpg home for all keys.

    python -m tests.lab.amdrepo OUTDIR       # build, then list what was built
"""

from __future__ import annotations

import argparse
import fnmatch
import gzip
import hashlib
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from email.utils import formatdate
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import yaml

from tests.lab import amd_layout
from tests.lab.aptrepo import DebSpec

REPO_ROOT = Path(__file__).resolve().parents[2]
TABLE = REPO_ROOT / "playbooks" / "data" / "rocm_releases.yml"
BUILD = "1"  # AMD's build number field, one for every dummy package
# Ubuntu release of a suite, the tail of AMD's legacy versions (`~22.04`).
UBUNTU_OF_SUITE = {"focal": "20.04", "jammy": "22.04", "noble": "24.04", "resolute": "26.04"}


def load_table(path: Path = TABLE) -> dict[str, Any]:
    with path.open() as f:
        return yaml.safe_load(f)


def rows(table: dict[str, Any]) -> list[dict[str, Any]]:
    return [r for r in table.get("releases") or [] if isinstance(r, dict) and r.get("version")]


def stream_of(table: dict[str, Any], row: dict[str, Any]) -> dict[str, Any]:
    return (table.get("streams") or {}).get(row.get("stream")) or {}


def pick(table: dict[str, Any], row: dict[str, Any], key: str) -> str:
    """A row's own value or its stream's (as the resolver picks it)."""
    value = row.get(key)
    return str(value if value is not None else stream_of(table, row).get(key) or "")


def upstreams(table: dict[str, Any], repos: Iterable[Repo] = ()) -> list[str]:
    """Every upstream base URL the table or the served repositories name."""
    found = {f"https://{r.host}" for r in repos}
    found |= {f"{urlsplit(r.key_url).scheme}://{urlsplit(r.key_url).netloc}" for r in repos}
    for row in rows(table):
        for key in ("base_url", "key_url", "driver_base_url", "driver_key_url"):
            url = pick(table, row, key)
            if url:
                parts = urlsplit(url)
                found.add(f"{parts.scheme}://{parts.netloc}")
    return sorted(found)


def _num(version: str) -> str:
    """7.2.1 -> 70201, AMD's numeric release in legacy package versions."""
    parts = [int("".join(c for c in p if c.isdigit()) or 0) for p in version.split(".")]
    parts += [0] * (3 - len(parts))
    return f"{parts[0]}{parts[1]:02d}{parts[2]:02d}"


def package_version(table: dict[str, Any], row: dict[str, Any], suite: str) -> str:
    """A meta-package version shaped as AMD's for the row's stream."""
    version = str(row["version"])
    if row.get("stream") == "legacy":
        return f"{version}.{_num(version)}-{BUILD}~{UBUNTU_OF_SUITE.get(suite, suite)}"
    return f"{version}-{BUILD}"


def dkms_version(row: dict[str, Any], suite: str) -> str:
    """amdgpu-dkms: epoch 1, the kernel base, the driver (or release) number, AMD's tail."""
    driver = str(row.get("driver") or row["version"])
    return f"1:6.12.12.{_num(driver)}-{BUILD}~{UBUNTU_OF_SUITE.get(suite, suite)}"


def version_record(table: dict[str, Any], row: dict[str, Any]) -> str:
    """The text of <prefix>/.info/version: legacy rocm-core writes `X.Y.Z-<build>`, TheRock's
    stream says `X.Y.Z`."""
    version = str(row["version"])
    fmt = str(stream_of(table, row).get("version_file_format") or "")
    return (version if fmt.startswith("one line, X.Y.Z") else f"{version}-{BUILD}") + "\n"


def version_links(table: dict[str, Any], row: dict[str, Any], prefix: str) -> list[str]:
    """Fixed version-file paths of the stream not under the prefix: their directory becomes a
    link to the prefix (/opt/rocm -> /opt/rocm-7.2.1, /opt/rocm/core -> /opt/rocm/core-10.0)."""
    record = f"{prefix}/.info/version"
    links = []
    for pattern in stream_of(table, row).get("version_files") or []:
        pattern = str(pattern)
        if any(c in pattern for c in "*?[") or fnmatch.fnmatch(record, pattern):
            continue
        if pattern.endswith("/.info/version"):
            link = pattern[: -len("/.info/version")]
            if link != prefix and not prefix.startswith(link + "/"):
                links.append(link)
    return links


def meta_package(table: dict[str, Any], row: dict[str, Any], name: str, suite: str) -> DebSpec:
    prefix = str(row.get("prefix") or stream_of(table, row).get("prefix") or "")
    files: dict[str, str] = {}
    scripts: dict[str, str] = {}
    if prefix:
        files[f"{prefix}/.info/version"] = version_record(table, row)
        links = version_links(table, row, prefix)
        if links:
            prio = _num(str(row["version"]))
            install = "".join(
                f"update-alternatives --install {link} {_alt_name(link)} {prefix} {prio}\n"
                for link in links
            )
            remove = "".join(
                f"update-alternatives --remove {_alt_name(link)} {prefix}\n" for link in links
            )
            scripts["postinst"] = f"#!/bin/sh\nset -e\n{install}"
            scripts["prerm"] = f"#!/bin/sh\nset -e\n{remove}"
    return _Deb(
        name, package_version(table, row, suite), arch="amd64", files=files, scripts=scripts,
        description=f"lab stand-in for ROCm {row['version']} ({row.get('stream')} stream)",
    )


def _alt_name(link: str) -> str:
    return link.strip("/").replace("/", "-").replace("opt-", "", 1) or "rocm"


@dataclass
class _Deb(DebSpec):
    scripts: dict[str, str] = field(default_factory=dict)


def _build_deb(spec: _Deb, out_dir: Path) -> Path:
    """aptrepo.build_deb, plus maintainer scripts and AMD's epochs (not in the file name)."""
    with tempfile.TemporaryDirectory() as tmp:
        pkg = Path(tmp)
        pkg.chmod(0o755)  # the package's "./" entry: never a 0700 tempdir mode
        (pkg / "DEBIAN").mkdir()
        (pkg / "DEBIAN/control").write_text(_control(spec) + f"Description: {spec.description}\n")
        for script, text in spec.scripts.items():
            (pkg / "DEBIAN" / script).write_text(text)
            (pkg / "DEBIAN" / script).chmod(0o755)
        for path, text in spec.files.items():
            target = pkg / path.lstrip("/")
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text)
        out_dir.mkdir(parents=True, exist_ok=True)
        deb = out_dir / f"{spec.name}_{spec.version.split(':')[-1]}_{spec.arch}.deb"
        subprocess.run(["dpkg-deb", "--root-owner-group", "-Zgzip", "-z1", "--build",
                        str(pkg), str(deb)], check=True, capture_output=True)
    return deb


@dataclass
class Repo:
    """One apt repository: upstream host, path below it, suite, Origin, key URL, packages."""

    host: str
    path: str  # e.g. rocm/apt/7.2.1 (no slashes at either end)
    suite: str
    origin: str
    key_url: str
    kind: str  # rocm | amdgpu | graphics
    packages: list[_Deb] = field(default_factory=list)
    rows: list[str] = field(default_factory=list)

    @property
    def upstream_url(self) -> str:
        return f"https://{self.host}/{self.path}"


@dataclass
class AmdRepos:
    root: Path
    repos: list[Repo]
    keys: dict[str, Path]  # key URL -> armored key file under root
    table: dict[str, Any]

    def mirrors(self, url: str) -> dict[str, str]:
        """rocmprov_mirrors for a server of root at url: upstream base -> lab URL."""
        out = {}
        for up in upstreams(self.table, self.repos):
            out[up] = f"{url.rstrip('/')}/{urlsplit(up).netloc}"
        return out

    def key_text(self, key_url: str) -> str:
        return self.keys[key_url].read_text()


def plan(table: dict[str, Any], versions: Iterable[str] | None = None,
         dkms_postinst: str = "", layout: amd_layout.Layout | None = None) -> list[Repo]:
    """Every apt repository AMD publishes for the table's releases (or those of `versions`),
    with what goes in each.

    Paths, suites, hosts and keys come from AMD's layout rules (tests/lab/amd_layout.yaml),
    never from the row's path fields: from a row only its identity (version, stream, driver),
    the distributions it lists and its packages are read. A row whose paths disagree with
    the rules therefore points at a repository the lab does not serve, as upstream would.
    dkms_postinst: a postinst for the dkms packages (a failing DKMS build)."""
    layout = layout or amd_layout.Layout()
    repos: dict[tuple[str, str, str], Repo] = {}
    wanted = None if versions is None else {str(v) for v in versions}
    for row in rows(table):
        if wanted is not None and str(row["version"]) not in wanted:
            continue
        apt = row.get("apt") or {}
        if not apt.get("rocm"):
            continue
        rel = amd_layout.release_of(row)
        for distro_key in apt.get("suites") or {}:
            for pub in layout.apt_repos(rel, str(distro_key)):
                host, path = pub.host, pub.path.strip("/")
                origin = "repo.radeon.com" if host == "repo.radeon.com" else host
                ident = (host, path, pub.suite)
                repo = repos.get(ident)
                if repo is None:
                    repo = repos[ident] = Repo(host, path, pub.suite, origin, pub.key_url,
                                               pub.kind)
                if str(row["version"]) in repo.rows:
                    continue
                repo.rows.append(str(row["version"]))
                have = {(p.name, p.version) for p in repo.packages}
                if pub.kind == "rocm":
                    for name in row.get("packages") or []:
                        if "<" not in str(name):
                            repo.packages.append(meta_package(table, row, str(name), pub.suite))
                elif pub.kind == "amdgpu" and row.get("dkms_package"):
                    spec = _Deb(
                        str(row["dkms_package"]), dkms_version(row, pub.suite), arch="amd64",
                        description=f"lab stand-in for amdgpu {row.get('driver') or ''}",
                        scripts={"postinst": dkms_postinst} if dkms_postinst else {})
                    if (spec.name, spec.version) not in have:
                        repo.packages.append(spec)
    return list(repos.values())


class _Gpg:
    """One throwaway gpg home holding one signing key per key URL."""

    def __init__(self) -> None:
        self.home = Path(tempfile.mkdtemp(prefix="rocmprov-amdrepo-gpg."))
        os.chmod(self.home, 0o700)
        self.env = {**os.environ, "GNUPGHOME": str(self.home)}
        self.uids: dict[str, str] = {}

    def run(self, *args: str) -> bytes:
        argv = ["gpg", "--batch", "--quiet", "--pinentry-mode", "loopback", "--passphrase", "",
                *args]
        return subprocess.run(argv, env=self.env, check=True, capture_output=True).stdout

    def key(self, key_url: str) -> str:
        if key_url not in self.uids:
            uid = f"rocmprov lab key {len(self.uids)} for {key_url} <lab@localhost>"
            self.run("--quick-gen-key", uid, "ed25519", "sign", "never")
            self.uids[key_url] = uid
        return self.uids[key_url]

    def sign(self, key_url: str, dist: Path) -> None:
        uid = self.key(key_url)
        release = str(dist / "Release")
        self.run("--yes", "--local-user", uid, "--clearsign", "-o", str(dist / "InRelease"),
                 release)
        self.run("--yes", "--local-user", uid, "-abs", "-o", str(dist / "Release.gpg"), release)

    def export(self, key_url: str) -> bytes:
        return self.run("--armor", "--export", self.key(key_url))

    def close(self) -> None:
        subprocess.run(["gpgconf", "--kill", "all"], env=self.env, check=False,
                       capture_output=True)
        shutil.rmtree(self.home, ignore_errors=True)


def _control(spec: DebSpec) -> str:
    return (f"Package: {spec.name}\nVersion: {spec.version}\nArchitecture: {spec.arch}\n"
            "Maintainer: rocmprov lab <lab@localhost>\n"
            + (f"Depends: {spec.depends}\n" if spec.depends else ""))


def _stanza(deb: Path, spec: _Deb, root: Path) -> str:
    data = deb.read_bytes()
    return (_control(spec) + f"Filename: {deb.relative_to(root)}\nSize: {len(data)}\n"
            f"SHA256: {hashlib.sha256(data).hexdigest()}\n"
            f"Description: {spec.description}\n")


def _release(repo: Repo, dist: Path) -> str:
    lines = [f"Origin: {repo.origin}", f"Label: {repo.kind}", f"Suite: {repo.suite}",
             f"Codename: {repo.suite}", f"Date: {formatdate(usegmt=True)}",
             "Architectures: amd64", "Components: main",
             "Description: rocmprov lab copy of " + repo.upstream_url, "SHA256:"]
    for f in sorted(p for p in dist.rglob("Packages*") if p.is_file()):
        lines.append(f" {hashlib.sha256(f.read_bytes()).hexdigest()} {f.stat().st_size} "
                     f"{f.relative_to(dist)}")
    return "\n".join(lines) + "\n"


def build(root: Path, table: dict[str, Any] | None = None, jobs: int = 4,
          versions: Iterable[str] | None = None, dkms_postinst: str = "") -> AmdRepos:
    """Build every repository of the table (or of the rows `versions`) under root, which must
    not exist yet."""
    table = table or load_table()
    root = Path(root)
    root.mkdir(parents=True)
    repos = plan(table, versions, dkms_postinst)
    debs: dict[tuple[int, int], Path] = {}
    work = [(i, j, repo, spec) for i, repo in enumerate(repos)
            for j, spec in enumerate(repo.packages)]

    def one(item: tuple[int, int, Repo, _Deb]) -> tuple[tuple[int, int], Path]:
        i, j, repo, spec = item
        pool = root / repo.host / repo.path / "pool" / "main" / spec.name[0] / spec.name
        return (i, j), _build_deb(spec, pool)

    with ThreadPoolExecutor(jobs) as ex:
        debs.update(ex.map(one, work))
    gpg = _Gpg()
    keys: dict[str, Path] = {}
    try:
        for key_url in sorted({r.key_url for r in repos}):
            parts = urlsplit(key_url)
            path = root / parts.netloc / parts.path.lstrip("/")
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(gpg.export(key_url))
            keys[key_url] = path

        def index(i: int) -> None:
            repo = repos[i]
            base = root / repo.host / repo.path
            dist = base / "dists" / repo.suite
            bindir = dist / "main" / "binary-amd64"
            bindir.mkdir(parents=True, exist_ok=True)
            text = "\n".join(_stanza(debs[(i, j)], spec, base)
                             for j, spec in enumerate(repo.packages))
            (bindir / "Packages").write_text(text)
            (bindir / "Packages.gz").write_bytes(gzip.compress(text.encode(), mtime=0))
            (dist / "Release").write_text(_release(repo, dist))
            gpg.sign(repo.key_url, dist)

        with ThreadPoolExecutor(jobs) as ex:
            list(ex.map(index, range(len(repos))))
    finally:
        gpg.close()
    return AmdRepos(root, repos, keys, table)


@dataclass
class Served:
    """AMD's repositories served on a lab bridge: `mirrors` goes to rocmprov_mirrors."""

    repos: AmdRepos
    url: str
    mirrors: dict[str, str]

    def mirror(self, upstream_url: str) -> str:
        for up, local in self.mirrors.items():
            if upstream_url == up or upstream_url.startswith(up + "/"):
                return local + upstream_url[len(up):]
        return upstream_url


def serve(lab: Any, repos: AmdRepos) -> Served:
    url = lab.serve_dir(repos.root)
    return Served(repos, url, repos.mirrors(url))


def kernel_headers_repo(root: Path, kernel: str) -> Any:
    """The lab hosts run this machine's kernel, whose headers no distribution has: dummies of
    linux-headers-<kernel> and Debian's/Ubuntu's headers meta-packages, for the driver role."""
    from tests.lab.aptrepo import build_repo

    specs = [DebSpec(name, "99.0-rocmprov-lab", arch="amd64",
                     description="lab stand-in: headers of the lab's kernel")
             for name in (f"linux-headers-{kernel}", "linux-headers-amd64",
                          "linux-headers-generic")]
    return build_repo(Path(root), specs, suite="lab", sign=False)


def describe(repos: Iterable[Repo]) -> str:
    return "\n".join(f"{r.host}/{r.path} {r.suite} (Origin {r.origin}; {r.kind}; rows "
                     f"{', '.join(r.rows)}): "
                     f"{', '.join(f'{p.name} {p.version}' for p in r.packages) or 'no packages'}"
                     for r in repos)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path, help="new directory: one subdirectory per upstream host")
    a = ap.parse_args()
    built = build(a.out)
    print(describe(built.repos))
    print(f"{len(built.repos)} repositories, keys: {', '.join(built.keys)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
