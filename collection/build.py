"""Assemble the Ansible collection rocmprov.rocm from this checkout (issue 17).

playbooks/roles stays the one source of the roles: this script copies them into the collection
at build time and rewrites what a collection needs to be spelled out (role dependencies and the
filter as FQCNs); nothing built here is kept in git.

    python collection/build.py DEST                  # the collection tree in DEST
    python collection/build.py DEST --tarball DIR    # and ansible-galaxy's tarball in DIR

DEST is created (it must not exist, or be empty). Exit 0 built, 3 the sources are not as
expected (a reference the rewrite cannot qualify), 64 bad arguments.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
NAMESPACE, NAME = "rocmprov", "rocm"
FQ = f"{NAMESPACE}.{NAME}"
FILTER = "rocmprov_release"

# `- role: rocmprov_x` (site.yml, meta/main.yml dependencies) -> `- role: rocmprov.rocm.rocmprov_x`
ROLE_REF = re.compile(r"^(\s*(?:-\s*)?role:\s*)(rocmprov_\w+)(\s*(?:#.*)?)$", re.M)
# `| rocmprov_release(` -> `| rocmprov.rocm.rocmprov_release(`
FILTER_REF = re.compile(r"\|(\s*)" + FILTER + r"\b")
# What must not remain after the rewrite.
LEFTOVERS = (
    re.compile(r"\brole:\s*rocmprov_\w+"),
    re.compile(r"\|\s*" + FILTER + r"\b"),
)
# Collection sources kept under collection/ (the rest of the collection comes from playbooks/).
OWN = ("meta", "plugins", "playbooks", "roles", "tests", "README.md")
IGNORE = shutil.ignore_patterns("__pycache__", "*.pyc")


class SourceError(Exception):
    """The checkout is not what the builder expects: one line, exit 3."""


@dataclass(frozen=True)
class Built:
    root: Path
    version: str
    roles: tuple[str, ...]
    rewritten: tuple[str, ...]  # files whose references were qualified


def rocmprov_version(repo: Path = REPO) -> str:
    """rocmprov's version (rocmprov/__init__.py), the collection's version too."""
    text = (repo / "rocmprov/__init__.py").read_text(encoding="utf-8")
    m = re.search(r"^__version__\s*=\s*[\"']([0-9]+\.[0-9]+\.[0-9]+)[\"']", text, re.M)
    if not m:
        raise SourceError("rocmprov/__init__.py has no X.Y.Z __version__")
    return m.group(1)


def qualify(text: str) -> str:
    """Role references and the filter spelled as FQCNs (pure; the tests feed it samples)."""
    text = ROLE_REF.sub(lambda m: f"{m.group(1)}{FQ}.{m.group(2)}{m.group(3)}", text)
    return FILTER_REF.sub(lambda m: f"|{m.group(1)}{FQ}.{FILTER}", text)


def unqualified(text: str) -> list[str]:
    """The lines that still name a rocmprov role or the filter without the collection."""
    return [m.group(0).strip() for rx in LEFTOVERS for m in rx.finditer(text)]


def _rewrite_tree(root: Path, rel_to: Path) -> list[str]:
    changed = []
    for path in sorted(root.rglob("*.yml")) + sorted(root.rglob("*.j2")):
        text = path.read_text(encoding="utf-8")
        new = qualify(text)
        left = unqualified(new)
        if left:
            raise SourceError(f"{path.relative_to(rel_to)}: cannot qualify {left[0]!r}")
        if new != text:
            path.write_text(new, encoding="utf-8")
            changed.append(str(path.relative_to(rel_to)))
    return changed


def build(dest: Path, repo: Path = REPO) -> Built:
    """The collection tree in `dest` (created; it must be absent or empty)."""
    src, books = repo / "collection", repo / "playbooks"
    if dest.exists() and any(dest.iterdir()):
        raise FileExistsError(f"{dest} exists and is not empty")
    version = rocmprov_version(repo)
    dest.mkdir(parents=True, exist_ok=True)
    galaxy = (src / "galaxy.yml").read_text(encoding="utf-8")
    galaxy, n = re.subn(r"^version: .*$", f"version: {version}", galaxy, flags=re.M)
    if n != 1:
        raise SourceError("collection/galaxy.yml has no single version: line")
    (dest / "galaxy.yml").write_text(galaxy, encoding="utf-8")
    for name in OWN:
        if (src / name).is_dir():
            shutil.copytree(src / name, dest / name, ignore=IGNORE, dirs_exist_ok=True)
        else:
            shutil.copy2(src / name, dest / name)
    shutil.copy2(repo / "LICENSE", dest / "LICENSE")
    roles = sorted(p.name for p in (books / "roles").iterdir() if (p / "tasks").is_dir())
    for role in roles:
        if (dest / "roles" / role).exists():
            raise SourceError(f"collection/roles/{role} would hide playbooks/roles/{role}")
        shutil.copytree(books / "roles" / role, dest / "roles" / role, ignore=IGNORE)
    # The release role reads {{ role_path }}/../../data/rocm_releases.yml: the collection root.
    (dest / "data").mkdir()
    shutil.copy2(books / "data/rocm_releases.yml", dest / "data/rocm_releases.yml")
    shutil.copy2(books / f"filter_plugins/{FILTER}.py", dest / f"plugins/filter/{FILTER}.py")
    shutil.copy2(books / "site.yml", dest / "playbooks/site.yml")
    rewritten = _rewrite_tree(dest / "roles", dest) + _rewrite_tree(dest / "playbooks", dest)
    return Built(dest, version, tuple(roles), tuple(rewritten))


def galaxy_build(root: Path, out_dir: Path) -> Path:
    """`ansible-galaxy collection build` of the tree; the tarball's path."""
    exe = Path(sys.executable).parent / "ansible-galaxy"
    cmd = [str(exe) if exe.exists() else "ansible-galaxy", "collection", "build", str(root)]
    out_dir.mkdir(parents=True, exist_ok=True)
    subprocess.run([*cmd, "--output-path", str(out_dir), "--force"], check=True,
                   capture_output=True, text=True)  # fmt: skip
    version = rocmprov_version()
    return out_dir / f"{NAMESPACE}-{NAME}-{version}.tar.gz"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="collection/build.py", description=__doc__.split("\n")[0])
    parser.add_argument("dest", type=Path, help="where the collection tree is written")
    parser.add_argument("--tarball", type=Path, metavar="DIR", help="also build the tarball here")
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return 0 if exc.code == 0 else 64
    try:
        built = build(args.dest)
        print(f"{FQ} {built.version}: {len(built.roles)} roles from playbooks/roles, "
              f"{len(built.rewritten)} files qualified -> {built.root}")  # fmt: skip
        if args.tarball:
            print(galaxy_build(built.root, args.tarball))
    except FileExistsError as exc:
        print(f"build.py: {exc}", file=sys.stderr)
        return 64
    except SourceError as exc:
        print(f"build.py: {exc}", file=sys.stderr)
        return 3
    except subprocess.CalledProcessError as exc:
        print(
            f"build.py: ansible-galaxy failed: {(exc.stderr or '').strip()[-400:]}", file=sys.stderr
        )
        return 3
    return 0


if __name__ == "__main__":
    sys.exit(main())
