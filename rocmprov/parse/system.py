"""Small system probes -> typed facts. Pure functions; garbage in gives empty facts, not errors."""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass


@dataclass(frozen=True)
class OsRelease:
    id: str = ""
    version_id: str = ""
    pretty_name: str = ""
    id_like: tuple[str, ...] = ()
    codename: str = ""


_KEY = re.compile(r"[A-Z_][A-Z0-9_]*")
# values shlex would return unchanged (os-release's usual forms): "quoted", 'quoted', bare
_PLAIN_VALUE = re.compile(r'"([^"\\$`]*)"|\'([^\']*)\'|([^\s"\'\\]*)')


def parse_os_release(text: str) -> OsRelease:
    values: dict[str, str] = {}
    for line in text.splitlines():
        key, sep, raw = line.partition("=")
        if not sep or not _KEY.fullmatch(key.strip()):
            continue
        values[key.strip()] = _value(raw)
    return OsRelease(
        id=values.get("ID", "").lower(),
        version_id=values.get("VERSION_ID", ""),
        pretty_name=values.get("PRETTY_NAME", ""),
        id_like=tuple(values.get("ID_LIKE", "").lower().split()),
        codename=values.get("VERSION_CODENAME", "") or values.get("UBUNTU_CODENAME", ""),
    )


def _value(raw: str) -> str:
    """The first shell word of an os-release value (shlex for anything but the plain forms)."""
    if m := _PLAIN_VALUE.fullmatch(raw):
        return next(g for g in m.groups() if g is not None)
    try:
        parts = shlex.split(raw, posix=True)
    except ValueError:
        parts = [raw.strip("\"'")]
    return parts[0] if parts else ""


def infer_os_release(text: str) -> OsRelease:
    """os-release without ID/VERSION_ID (the ROCm issue template keeps only NAME and VERSION),
    or `lsb_release -a` ('Description:\tUbuntu 22.04.4 LTS'): infer id and X.Y version."""
    rel = parse_os_release(text)
    if rel.id and rel.version_id:
        return rel
    name, version = "", ""
    for line in text.splitlines():
        key, sep, raw = line.partition("=")
        if sep and key.strip() in ("NAME", "VERSION"):
            value = raw.strip().strip("\"'")
            name, version = (value, version) if key.strip() == "NAME" else (name, value)
        elif m := re.match(r"\s*Description:\s*(\S+)\s+(\S+)", line):
            name, version = m.group(1), m.group(2)
    words = re.findall(r"[A-Za-z]+", name)
    number = re.match(r"\s*(\d+(?:\.\d+)?)", version)
    return OsRelease(
        id=rel.id or (words[0].lower() if words else ""),
        version_id=rel.version_id or (number.group(1) if number else ""),
        pretty_name=rel.pretty_name,
        id_like=rel.id_like,
        codename=rel.codename,
    )


def parse_uname(text: str) -> str:
    first = text.strip().splitlines()[0] if text.strip() else ""
    return first.split()[0] if first.split() else ""


def parse_cmdline(text: str) -> dict[str, str]:
    """'quiet iommu=pt amd_iommu=on' -> {'quiet': '', 'iommu': 'pt', 'amd_iommu': 'on'}."""
    out: dict[str, str] = {}
    for token in text.split():
        key, _, value = token.partition("=")
        out[key] = value
    return out


def parse_modules(text: str) -> frozenset[str]:
    """/proc/modules or lsmod output -> loaded module names."""
    names = set()
    for line in text.splitlines():
        parts = line.split()
        if parts and parts[0] != "Module" and re.fullmatch(r"[\w-]+", parts[0]):
            names.add(parts[0])
    return frozenset(names)


@dataclass(frozen=True)
class DevNode:
    path: str
    mode: str
    owner: str
    group: str


def parse_ls_dev(text: str) -> dict[str, DevNode]:
    """`ls -l /dev/kfd /dev/dri` -> {'/dev/kfd': DevNode, '/dev/dri/renderD128': ...}."""
    nodes: dict[str, DevNode] = {}
    directory = ""
    for line in text.splitlines():
        line = line.rstrip()
        if line.endswith(":") and line.startswith("/"):
            directory = line[:-1]
            continue
        parts = line.split()
        if len(parts) < 9 or parts[0][:1] not in ("c", "b", "d", "l", "-"):
            continue
        name = parts[-1] if parts[0][0] != "l" else parts[-3]
        path = name if name.startswith("/") else f"{directory}/{name}" if directory else name
        nodes[path] = DevNode(path, parts[0], parts[2], parts[3])
    return nodes


@dataclass(frozen=True)
class UserGroups:
    user: str = ""
    groups: frozenset[str] = frozenset()
    existing: frozenset[str] = frozenset()  # which of render/video exist on the host
    exists: bool = True  # False: `id` knows no such user on the host


_USER_MARK = "--- user "


def parse_groups(text: str) -> tuple[UserGroups, ...]:
    """The `groups` probe: per GPU user `--- user NAME` then `id -- NAME`, then '--- getent'
    and `getent group render video`. Bundles from before several GPU users hold one bare
    `id` output instead of the user blocks: read as one user."""
    idents, _, getent = text.partition("--- getent")
    existing = frozenset(
        line.split(":", 1)[0] for line in getent.splitlines() if line.count(":") >= 2
    )
    blocks = idents.split(_USER_MARK)
    users: list[UserGroups] = []
    if blocks[0].strip():  # the earlier form: one `id` output, no marker
        users.append(_user_groups(blocks[0], "", existing))
    for block in blocks[1:]:
        name, _, ident = block.partition("\n")
        users.append(_user_groups(ident, name.strip(), existing))
    return tuple(u for u in users if u.user)


def _user_groups(ident: str, name: str, existing: frozenset[str]) -> UserGroups:
    user = re.search(r"uid=\d+\(([^)]*)\)", ident)
    if user is None:
        return UserGroups(name, frozenset(), existing, exists=False)
    groups = frozenset(re.findall(r"\d+\(([^)]*)\)", ident.partition("groups=")[2]))
    return UserGroups(user.group(1), groups, existing)


def parse_version_file(text: str) -> str:
    """/opt/rocm/.info/version: '6.2.4-120' -> '6.2.4'."""
    m = re.match(r"\s*(\d+\.\d+(?:\.\d+)?)", text)
    return m.group(1) if m else ""


def parse_int(text: str) -> int | None:
    m = re.match(r"\s*(-?\d+)\s*$", text)
    return int(m.group(1)) if m else None


def parse_unit_state(text: str) -> str:
    """`systemctl is-enabled` -> masked|enabled|disabled|static|not-found|''."""
    first = text.strip().splitlines()[0].strip() if text.strip() else ""
    if "No such file" in first or "not-found" in first or "not found" in first:
        return "not-found"
    return first if re.fullmatch(r"[a-z-]+", first) else ""


def parse_secureboot(text: str) -> str:
    """mokutil --sb-state -> enabled|disabled|unsupported|''."""
    low = text.lower()
    if "secureboot enabled" in low:
        return "enabled"
    if "secureboot disabled" in low:
        return "disabled"
    if "not supported" in low or "no efi firmware" in low:
        return "unsupported"
    m = re.search(r"securebot efivar bytes ([\d\s]+)".replace("securebot", "secureboot"), low)
    if m and m.group(1).split():
        return "enabled" if m.group(1).split()[-1] == "1" else "disabled"
    return ""


@dataclass(frozen=True)
class DkmsModule:
    name: str
    version: str
    kernel: str
    state: str


def parse_dkms(text: str) -> list[DkmsModule]:
    """`dkms status`, old 'amdgpu, 6.1.5, 5.15.0-91-generic, x86_64: installed' and new
    'amdgpu/6.1.5, 5.15.0-91-generic, x86_64: installed' forms."""
    mods = []
    for line in text.splitlines():
        head, sep, state = line.rpartition(":")
        if not sep:
            continue
        parts = [p.strip() for p in re.split(r"[,/]", head) if p.strip()]
        if len(parts) < 2:
            continue
        kernel = parts[2] if len(parts) >= 3 else ""
        first = state.split()[0] if state.split() else ""
        mods.append(DkmsModule(parts[0], parts[1], kernel, first))
    return mods
