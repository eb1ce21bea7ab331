"""Build a tiny, SIGNED apt repository laid out like repo.radeon.com, for the apply tests.

    python tests/make_fake_amd_repo.py OUTDIR [--version 6.4.1] [--suite jammy]

OUTDIR/
  rocm/rocm.gpg.key                              ASCII-armored public key (like AMD's)
  rocm/apt/<version>/dists/<suite>/{Release,InRelease,Release.gpg,main/binary-amd64/Packages}
  rocm/apt/<version>/pool/main/...               rocm-dev -> rocminfo, hip-runtime-amd, rocm-core
  amdgpu/<version>/ubuntu/dists/<suite>/...      amdgpu-dkms, linux-headers-<kernel> (dummies)
  wheels/torch-2.9.1+rocm6.4-py3-none-any.whl    a fake torch that reports torch.version.hip

Release files carry "Origin: repo.radeon.com" so the apt pin of the role applies. Packages are
dummies (a script each), versioned like AMD's (1.0.0.60401-1~22.04). Needs gpg, dpkg-deb and
dpkg-scanpackages (dpkg-dev).
"""

from __future__ import annotations

import argparse
import base64
import gzip
import hashlib
import os
import platform
import subprocess
import tempfile
import time
import zipfile
from pathlib import Path

ORIGIN = "repo.radeon.com"


def sh(argv: list[str], **kw: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, check=True, capture_output=True, text=True, **kw)  # type: ignore[call-overload]


def build_deb(
    pool: Path,
    name: str,
    version: str,
    depends: str = "",
    files: dict[str, str] | None = None,
    postinst: str = "",
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp, name)
        (root / "DEBIAN").mkdir(parents=True)
        control = [
            f"Package: {name}",
            f"Version: {version}",
            "Architecture: amd64",
            "Maintainer: rocmprov tests <tests@rocmprov.invalid>",
            "Section: devel",
            "Priority: optional",
            f"Description: fake {name} for rocmprov tests",
        ]
        if depends:
            control.insert(3, f"Depends: {depends}")
        (root / "DEBIAN/control").write_text("\n".join(control) + "\n")
        if postinst:
            p = root / "DEBIAN/postinst"
            p.write_text(postinst)
            p.chmod(0o755)
        for rel, text in (files or {}).items():
            f = root / rel.lstrip("/")
            f.parent.mkdir(parents=True, exist_ok=True)
            f.write_text(text)
            f.chmod(0o755)
        pool.mkdir(parents=True, exist_ok=True)
        sh(
            [
                "dpkg-deb",
                "--root-owner-group",
                "-Zgzip",
                "--build",
                str(root),
                str(pool / f"{name}_{version.split(':')[-1]}_amd64.deb"),
            ]
        )


def write_release(repo: Path, suite: str, gnupghome: Path, label: str) -> None:
    dists = repo / "dists" / suite
    binary = dists / "main" / "binary-amd64"
    binary.mkdir(parents=True, exist_ok=True)
    packages = sh(["dpkg-scanpackages", "--multiversion", "pool"], cwd=repo).stdout
    (binary / "Packages").write_text(packages)
    (binary / "Packages.gz").write_bytes(gzip.compress(packages.encode(), mtime=0))
    lines = [
        f"Origin: {ORIGIN}",
        f"Label: {label}",
        f"Suite: {suite}",
        f"Codename: {suite}",
        "Architectures: amd64",
        "Components: main",
        "Date: " + time.strftime("%a, %d %b %Y %H:%M:%S UTC", time.gmtime()),
        "SHA256:",
    ]
    for rel in ("main/binary-amd64/Packages", "main/binary-amd64/Packages.gz"):
        data = (dists / rel).read_bytes()
        lines.append(f" {hashlib.sha256(data).hexdigest()} {len(data)} {rel}")
    (dists / "Release").write_text("\n".join(lines) + "\n")
    env = {**os.environ, "GNUPGHOME": str(gnupghome)}
    for extra, out in (
        (["--clearsign"], "InRelease"),
        (["--detach-sign", "--armor"], "Release.gpg"),
    ):
        (dists / out).unlink(missing_ok=True)
        sh(
            ["gpg", "--batch", "--yes", *extra, "-o", str(dists / out), str(dists / "Release")],
            env=env,
        )


def make_key(gnupghome: Path) -> str:
    gnupghome.mkdir(mode=0o700, parents=True, exist_ok=True)
    env = {**os.environ, "GNUPGHOME": str(gnupghome)}
    sh(
        [
            "gpg",
            "--batch",
            "--passphrase",
            "",
            "--quick-gen-key",
            "rocmprov fake AMD repo <tests@rocmprov.invalid>",
            "ed25519",
            "sign",
            "never",
        ],
        env=env,
    )
    return sh(["gpg", "--batch", "--armor", "--export"], env=env).stdout


def fake_torch_wheel(out: Path, torch: str = "2.9.1+rocm6.4", hip: str = "6.4.43482") -> Path:
    out.mkdir(parents=True, exist_ok=True)
    name = f"torch-{torch}-py3-none-any.whl"
    dist = f"torch-{torch}.dist-info"
    files = {
        "torch/__init__.py": f'__version__ = "{torch}"\nfrom torch import version\n',
        "torch/version.py": f'__version__ = "{torch}"\nhip = "{hip}"\ncuda = None\n',
        f"{dist}/METADATA": f"Metadata-Version: 2.1\nName: torch\nVersion: {torch}\n",
        f"{dist}/WHEEL": "Wheel-Version: 1.0\nGenerator: rocmprov-tests\nRoot-Is-Purelib: true\n"
        "Tag: py3-none-any\n",
    }
    record = []
    for path, text in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=")
        record.append(f"{path},sha256={digest.decode()},{len(text.encode())}")
    record.append(f"{dist}/RECORD,,")
    files[f"{dist}/RECORD"] = "\n".join(record) + "\n"
    with zipfile.ZipFile(out / name, "w") as z:
        for path, text in files.items():
            z.writestr(path, text)
    return out / name


def build(
    out: Path,
    version: str = "6.4.1",
    suite: str = "jammy",
    kernel: str | None = None,
    dkms_fails: bool = False,
) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    kernel = kernel or platform.release()
    gnupghome = out.parent / (out.name + ".gnupg")
    key = make_key(gnupghome)
    (out / "rocm").mkdir(exist_ok=True)
    (out / "rocm" / "rocm.gpg.key").write_text(key)
    num = "".join(
        f"{int(p):02d}" if i else p for i, p in enumerate(version.split("."))
    )  # 6.4.1 -> 60401
    av = f"{num}-1~22.04"
    rocm = out / "rocm" / "apt" / version
    pool = rocm / "pool" / "main"
    build_deb(
        pool / "r",
        "rocm-core",
        f"{version}.{av}",
        files={f"/opt/rocm-{version}/.info/version": f"{version}-1\n"},
    )
    build_deb(
        pool / "r",
        "rocminfo",
        f"1.0.0.{av}",
        depends="rocm-core",
        files={
            f"/opt/rocm-{version}/bin/rocminfo": (
                "#!/bin/sh\necho 'ROCk module is NOT loaded'\nexit 1\n"
            )
        },
    )
    build_deb(pool / "h", "hip-runtime-amd", f"6.4.43482.{av}", depends="rocm-core")
    build_deb(
        pool / "r", "rocm-dev", f"{version}.{av}", depends="rocminfo, hip-runtime-amd, rocm-core"
    )
    write_release(rocm, suite, gnupghome, "ROCm")
    amdgpu = out / "amdgpu" / version / "ubuntu"
    postinst = "#!/bin/sh\necho 'Building module: amdgpu (fake)'\n" + (
        "echo 'Error! Bad return status for module build on kernel: "
        f"{kernel} (x86_64)' >&2\nexit 10\n"
        if dkms_fails
        else "exit 0\n"
    )
    build_deb(amdgpu / "pool" / "main" / "a", "amdgpu-dkms", f"1:6.12.12.{av}", postinst=postinst)
    build_deb(amdgpu / "pool" / "main" / "l", f"linux-headers-{kernel}", "99.0-rocmprov-fake")
    write_release(amdgpu, suite, gnupghome, "amdgpu")
    fake_torch_wheel(out / "wheels")
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--version", default="6.4.1")
    ap.add_argument("--suite", default="jammy")
    ap.add_argument("--dkms-fails", action="store_true")
    a = ap.parse_args()
    print(build(a.out, a.version, a.suite, dkms_fails=a.dkms_fails))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
