"""Pick one ROCm release out of the release table (playbooks/data/rocm_releases.yml) for a host.

One function, `resolve`, turns (table, wanted release, host facts, mirrors) into everything the
roles and the audit need: the stream, the repository URLs, the suite, the key and keyring, the
pin, the packages, the install prefix, the version files and the torch wheel. Pure Python with
no import outside the standard library, so plain `ansible-playbook` loads it as a filter plugin
and rocmprov imports the very same file (rocmprov.knowledge.releases). No version arithmetic:
every path
is a row of the table.

    {{ _rocmprov_release_table | rocmprov_release(rocmprov_rocm_version, ansible_facts) }}
"""

from __future__ import annotations

from typing import Any

_FAMILIES = {"Debian": "apt", "RedHat": "rpm", "Suse": "zypper"}
# Distributions whose AMD repositories are keyed by their own name in the table's `suites`.
_APT_IDS = {"Ubuntu": "ubuntu", "Debian": "debian"}


def _version_key(version: str) -> tuple[int, ...]:
    parts = []
    for piece in str(version).split("."):
        digits = "".join(ch for ch in piece if ch.isdigit())
        parts.append(int(digits) if digits else 0)
    return tuple(parts)


def releases(table: dict[str, Any]) -> list[dict[str, Any]]:
    return [r for r in table.get("releases") or [] if isinstance(r, dict) and r.get("version")]


def find_release(table: dict[str, Any], wanted: object) -> dict[str, Any] | None:
    """The row for `wanted`: an exact point release ("7.2.1"), a minor ("7.2" = its newest
    point), "" / "default" (the table's default) or "latest" (the newest production row)."""
    text = str(wanted or "").strip().lower()
    rows = releases(table)
    if text in ("", "default", "none"):
        text = str(table.get("default") or "")
    if text == "latest":
        production = [r for r in rows if r.get("status", "production") == "production"]
        return max(production, key=lambda r: _version_key(r["version"]), default=None)
    exact = [r for r in rows if str(r["version"]) == text]
    if exact:
        return exact[0]
    prefix = [r for r in rows if str(r["version"]).startswith(text + ".")]
    production = [r for r in prefix if r.get("status", "production") == "production"]
    return max(production or prefix, key=lambda r: _version_key(r["version"]), default=None)


def _mirror(url: str, mirrors: dict[str, str] | None) -> str:
    """Rewrite an upstream URL onto a mirror: {"https://repo.radeon.com": "http://mirror/radeon"}."""
    for upstream, local in (mirrors or {}).items():
        up = str(upstream).rstrip("/")
        if url == up or url.startswith(up + "/"):
            return str(local).rstrip("/") + url[len(up) :]
    return url


def _join(base: str, path: object) -> str:
    if not path:
        return ""
    return base.rstrip("/") + "/" + str(path).strip("/") + ("/" if str(path).endswith("/") else "")


def _host_keys(facts: dict[str, Any]) -> dict[str, Any]:
    distribution = str(facts.get("distribution", ""))
    version = str(facts.get("distribution_version", ""))
    major = str(facts.get("distribution_major_version", "") or version.split(".", maxsplit=1)[0])
    os_id = _APT_IDS.get(distribution, distribution.lower())
    return {
        "family": _FAMILIES.get(str(facts.get("os_family", "")), "unsupported"),
        # Ubuntu is keyed by its release (24.04), Debian by its major (12; facts say 12.11).
        "apt_keys": [f"{os_id}-{version}", f"{os_id}-{major}"],
        "version": version,
        "major": major,
        "label": f"{distribution} {version}".strip(),
    }


def _pick_minor(published: dict[str, Any], version: str, major: str, rule: str) -> str | None:
    """The key of `published` for a host at `version`: exact, else per AMD's rule ("newest":
    the newest published minor of the same major)."""
    if version in published:
        return version
    if rule == "newest":
        same = [k for k in published if str(k).split(".", maxsplit=1)[0] == major]
        if same:
            return max(same, key=_version_key)
    return None


def resolve(
    table: dict[str, Any],
    wanted: object,
    facts: dict[str, Any] | None = None,
    mirrors: dict[str, str] | None = None,
) -> dict[str, Any]:
    """Everything needed to install `wanted` on a host with these Ansible facts.

    Never raises for a bad request: `error` says what is wrong (empty when all is well), so a
    role can assert on it with a clear message."""
    out: dict[str, Any] = {"wanted": str(wanted or ""), "error": ""}
    if isinstance(wanted, float):  # YAML read 7.10 as 7.1: never guess which was meant
        out["error"] = f'ROCm version {wanted!r} is a YAML number: quote it (e.g. "7.10")'
        return out
    row = find_release(table, wanted)
    if row is None:
        known = ", ".join(str(r["version"]) for r in releases(table))
        out["error"] = f"ROCm {wanted!s} is not in the release table (known: {known})"
        return out
    stream = (table.get("streams") or {}).get(row.get("stream")) or {}

    def pick(key: str) -> str:
        """A row's own value (TheRock moved its repository twice) or the stream's."""
        value = row.get(key)
        return str(value if value is not None else stream.get(key) or "")

    base = pick("base_url")
    # TheRock 10.x: AMD's driver repository lives on repo.radeon.com with the legacy key.
    driver_base = str(row.get("driver_base_url") or base)
    driver_key = row.get("driver_key_url")
    torch = row.get("torch") or {}
    out.update(
        version=str(row["version"]),
        stream=str(row.get("stream", "")),
        status=str(row.get("status", "production")),
        driver=str(row.get("driver") or ""),
        key_url=_mirror(pick("key_url"), mirrors),
        keyring=pick("keyring"),
        pin_origin=pick("pin_origin"),
        prefix=str(row.get("prefix") or stream.get("prefix") or ""),
        version_files=list(stream.get("version_files") or []),
        packages=[str(p) for p in row.get("packages") or [] if "<" not in str(p)],
        gfx_packages=str(row.get("gfx_packages") or ""),
        dkms_package=str(row.get("dkms_package") or ""),
        torch_index=_mirror(str(torch.get("index") or ""), mirrors),
        torch_versions=[str(v) for v in torch.get("versions") or []],
        torch_version=str((torch.get("versions") or [""])[0]),
        # AMD's multi-arch wheels pick the GPU code with an extra (torch[device-gfx942]);
        # device-all installs every architecture's, as AMD's "all GPUs" choice does.
        torch_extra="device-all" if "device-" in str(torch.get("extras") or "") else "",
        source=str(row.get("source", "")),
        family="",
        suite="",
        components=["main"],
        rocm_url="",
        amdgpu_url="",
        amdgpu_suite="",
        amdgpu_key_url=_mirror(str(driver_key or pick("key_url")), mirrors),
        amdgpu_error="",
        graphics_url="",
    )
    if not facts:
        return out
    host = _host_keys(facts)
    out["family"] = host["family"]
    where = f"ROCm {out['version']} ({out['stream']} stream)"
    if host["family"] == "apt":
        apt = row.get("apt") or {}
        suites = apt.get("suites") or {}
        apt_key = next((k for k in host["apt_keys"] if k in suites), host["apt_keys"][0])
        suite = suites.get(apt_key)
        if suite is None or not apt.get("rocm"):
            listed = ", ".join(sorted(suites)) or "none"
            out["error"] = f"{where} has no apt repository for {host['label']} ({listed})"
            return out
        distro_dir = str((apt.get("distro_dirs") or {}).get(apt_key, ""))

        def url(path: object) -> str:
            return _mirror(_join(base, str(path or "").replace("{distro}", distro_dir)), mirrors)

        # The driver repository may have suites of its own (TheRock 10.x: "stable" for ROCm,
        # the Ubuntu codename for amdgpu/<driver>/ubuntu).
        amdgpu_suite = str((apt.get("amdgpu_suites") or suites).get(apt_key) or "")
        amdgpu_path = apt.get("amdgpu") if amdgpu_suite else None
        out.update(
            suite=str(suite),
            components=list(apt.get("components") or ["main"]),
            rocm_url=url(apt.get("rocm")),
            amdgpu_url=_mirror(_join(driver_base, amdgpu_path), mirrors),
            amdgpu_suite=amdgpu_suite if amdgpu_path else "",
            graphics_url=url(apt.get("graphics")),
        )
    elif host["family"] in ("rpm", "zypper"):
        section = row.get("rpm" if host["family"] == "rpm" else "sles") or {}
        rocm_paths = section.get("rocm") or {}
        rocm_key = _pick_minor(rocm_paths, host["version"], host["major"], "newest")
        if rocm_key is None:
            listed = ", ".join(sorted(rocm_paths)) or "none"
            out["error"] = f"{where} has no repository for {host['label']} ({listed})"
            return out
        out["rocm_url"] = _mirror(_join(base, rocm_paths[rocm_key]), mirrors)
        amdgpu_paths = section.get("amdgpu") or {}
        rule = str(section.get("amdgpu_rule") or "exact")
        amdgpu_key = _pick_minor(amdgpu_paths, host["version"], host["major"], rule)
        if amdgpu_paths and amdgpu_key is None:
            # ROCm itself installs; only the driver repository is missing for this minor.
            listed = ", ".join(sorted(amdgpu_paths))
            out["amdgpu_error"] = f"{where}: no amdgpu driver for {host['label']} (AMD: {listed})"
        if amdgpu_key is not None:
            out["amdgpu_url"] = _mirror(_join(driver_base, amdgpu_paths[amdgpu_key]), mirrors)
        graphics = section.get("graphics") or {}
        graphics_key = _pick_minor(graphics, host["version"], host["major"], "newest")
        if graphics_key is not None:
            out["graphics_url"] = _mirror(_join(base, graphics[graphics_key]), mirrors)
    else:
        label = host["label"] or "this OS"
        out["error"] = f"{where}: {label} is not of the Debian, RedHat or SUSE family"
    return out


class FilterModule:
    """Ansible filter plugin entry point."""

    def filters(self) -> dict[str, Any]:
        return {"rocmprov_release": resolve}
