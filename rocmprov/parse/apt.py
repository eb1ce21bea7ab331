"""The `apt-rocm` and `packages` probes -> typed repository and package facts. Pure."""

from __future__ import annotations

import re
from dataclasses import dataclass, field


@dataclass(frozen=True)
class RepoKey:
    path: str
    fingerprints: tuple[str, ...] = ()
    expires: tuple[int, ...] = ()  # epoch seconds per primary key; 0 = never
    expired_flag: bool = False  # gpg's validity field says 'e'


@dataclass(frozen=True)
class RepoConfig:
    files: dict[str, str] = field(default_factory=dict)  # path -> content (ROCm-related only)
    keys: tuple[RepoKey, ...] = ()

    @property
    def sources(self) -> dict[str, str]:
        # Only what apt (or yum) reads: apt ignores rocm.list.save, *.distUpgrade, *.dpkg-old...
        return {
            p: c
            for p, c in self.files.items()
            if p == "/etc/apt/sources.list" or p.endswith((".list", ".sources", ".repo"))
        }

    @property
    def pins(self) -> dict[str, str]:
        return {p: c for p, c in self.files.items() if "/preferences" in p}


def parse_apt_rocm(text: str) -> RepoConfig:
    files: dict[str, list[str]] = {}
    keys: list[dict] = []
    current: list[str] | None = None
    for line in text.splitlines():
        if line.startswith("== file "):
            current = files.setdefault(line[8:].strip(), [])
        elif line.startswith("== key "):
            keys.append({"path": line[7:].strip(), "fpr": [], "exp": [], "e": False})
            current = None
        elif keys and current is None and line.startswith(("pub:", "fpr:")):
            cols = line.split(":")
            if cols[0] == "pub" and len(cols) > 6:
                keys[-1]["exp"].append(int(cols[6]) if cols[6].isdigit() else 0)
                keys[-1]["e"] = keys[-1]["e"] or cols[1] == "e"
            elif cols[0] == "fpr" and len(cols) > 9 and len(keys[-1]["fpr"]) < len(keys[-1]["exp"]):
                keys[-1]["fpr"].append(cols[9])
        elif current is not None:
            current.append(line)
    return RepoConfig(
        files={p: "\n".join(lines) for p, lines in files.items()},
        keys=tuple(RepoKey(k["path"], tuple(k["fpr"]), tuple(k["exp"]), k["e"]) for k in keys),
    )


@dataclass(frozen=True)
class Pin:
    origin: str
    priority: int
    path: str


def parse_pins(config: RepoConfig) -> list[Pin]:
    """apt preferences stanzas that pin by origin (`Pin: release o=...`)."""
    pins = []
    for path, text in config.pins.items():
        for stanza in re.split(r"\n\s*\n", text):
            origin = re.search(r"^Pin:\s*release\s+.*\bo=([^,\s]+)", stanza, re.M)
            prio = re.search(r"^Pin-Priority:\s*(-?\d+)", stanza, re.M)
            if origin and prio:
                pins.append(Pin(origin.group(1), int(prio.group(1)), path))
    return pins


def signed_by(source_text: str) -> list[str]:
    """Keyring paths named by one-line `[signed-by=...]` or deb822 `Signed-By:` fields."""
    paths = re.findall(r"signed-by=([^\s\]]+)", source_text)
    paths += re.findall(r"^Signed-By:\s*(/\S+)", source_text, re.M)
    return paths


def parse_packages(text: str) -> dict[str, str]:
    """`Package Version Status` lines -> {name: version} for installed ones (status ii/hi)."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) >= 3 and parts[2] in ("ii", "hi"):
            out[parts[0].split(":")[0]] = parts[1]
    return out


def upstream_version(version: str) -> str:
    """'5.2.3-8' -> '5.2.3'; '6.2.4.60204-139~22.04' -> '6.2.4'; epochs dropped."""
    version = version.split(":", 1)[-1]
    m = re.match(r"(\d+\.\d+(?:\.\d+)?)", version)
    return m.group(1) if m else ""
