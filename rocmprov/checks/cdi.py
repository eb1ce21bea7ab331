"""CDI specs for AMD GPUs: valid (the CDI schema), readable by the runtimes installed, not stale
(their device nodes are the ones that exist now), not defined twice. Facts and sources:
rocmprov/data/containers.yaml.
"""

from __future__ import annotations

from rocmprov.checks.base import CRITICAL, OK, SKIPPED, UNKNOWN, WARNING, skipped
from rocmprov.checks.containers import (
    AMD_KIND,
    GENERATE,
    REF_CDI,
    REF_CDI_GUIDE,
    REF_WORKLOADS,
    _amd_specs,
    _broken_amd,
    _c,
    _not_applicable,
    _ver,
)
from rocmprov.checks.policy import Policy
from rocmprov.facts.host import HostFacts
from rocmprov.model import Finding
from rocmprov.parse.cdi import version_tuple

# Podman below 4.7.0 vendors a CDI library that reads cdiVersion up to 0.5.0.
PODMAN_CDI_060 = (4, 7, 0)


def check_cdi_spec(facts: HostFacts, policy: Policy) -> list[Finding]:
    check = "container.cdi.spec"
    c = _c(facts)
    na = _not_applicable(check, c)
    if na or c is None:
        return [na] if na else []
    if c.specs is None:
        return [Finding(check, UNKNOWN, "CDI specs not collected", actual="not collected")]
    out: list[Finding] = []
    for s in _broken_amd(c):
        out.append(
            Finding(
                check,
                CRITICAL,
                f"{s.path} is not a valid CDI spec: " + "; ".join(s.errors[:3]),
                subject=s.path,
                actual="; ".join(s.errors),
                expected="cdiVersion, kind and devices (name + containerEdits each)",
                fix=GENERATE,
                ref=REF_CDI,
            )
        )
    for s in c.specs:
        if not s.valid and s not in _broken_amd(c):
            out.append(
                Finding(
                    check,
                    WARNING,
                    f"{s.path} (another vendor's or unknown) is not a "
                    "valid CDI spec; runtimes skip it",
                    subject=s.path,
                    actual="; ".join(s.errors),
                    fix="fix or remove it (not rocmprov's)",
                    ref=REF_CDI,
                )
            )
    amd = _amd_specs(c)
    if not amd and not _broken_amd(c):
        gpu = bool(facts.amd_gpus) or bool(c.nodes and "/dev/kfd" in c.nodes)
        if c.has("amd-ctk") and gpu:
            out.append(
                Finding(
                    check,
                    WARNING,
                    f"no CDI spec for {AMD_KIND}: --device "
                    f"{AMD_KIND}=all fails (unresolvable CDI devices)",
                    actual="none in /etc/cdi, /var/run/cdi",
                    expected="/etc/cdi/amd.json",
                    fix=GENERATE,
                    ref=REF_CDI_GUIDE,
                )
            )
        elif not out:
            why = "no AMD GPU on this host" if not gpu else "AMD Container Toolkit not installed"
            out.append(skipped(check, f"no {AMD_KIND} CDI spec ({why}): device flags method"))
        return out
    podman = _ver(c.version("podman")) if c.has("podman") else None
    for s in amd:
        names = [d.name for d in s.devices]
        if "all" not in names:
            out.append(
                Finding(
                    check,
                    WARNING,
                    f"{s.path} has no device 'all': --device {AMD_KIND}=all fails",
                    subject=s.path,
                    actual=", ".join(names),
                    expected="all, 0, 1...",
                    fix=GENERATE,
                    ref=REF_WORKLOADS,
                )
            )
        sv = version_tuple(s.version)
        if podman is not None and podman < PODMAN_CDI_060 and sv is not None and sv > (0, 5, 0):
            out.append(
                Finding(
                    check,
                    CRITICAL,
                    f"podman {c.version('podman')} cannot read "
                    f"{s.path} (cdiVersion {s.version}; its CDI library reads up to "
                    f"0.5.0): --device {AMD_KIND}=all fails 'unresolvable CDI "
                    "devices'",
                    subject=s.path,
                    actual=f"cdiVersion {s.version}",
                    expected="podman 4.7.0 or newer",
                    fix="upgrade podman (4.7.0+), or use --device /dev/kfd --device "
                    "/dev/dri --group-add keep-groups",
                    ref=REF_WORKLOADS,
                )
            )
    if not any(
        f.severity in (CRITICAL, WARNING) and f.subject in {s.path for s in amd} for f in out
    ):
        out.append(
            Finding(
                check,
                OK,
                ", ".join(
                    f"{s.path} ({len(s.devices)} devices, cdiVersion {s.version})" for s in amd
                ),
                actual=", ".join(q for s in amd for q in s.qualified()),
            )
        )
    return out


def check_cdi_stale(facts: HostFacts, policy: Policy) -> list[Finding]:
    check = "container.cdi.stale"
    c = _c(facts)
    na = _not_applicable(check, c)
    if na or c is None:
        return [na] if na else []
    amd = [s for s in _amd_specs(c) if s.valid]
    if not amd:
        return [skipped(check, f"no valid {AMD_KIND} CDI spec to compare")]
    if c.nodes is None:
        return [Finding(check, UNKNOWN, "device nodes not collected", actual="not collected")]
    out: list[Finding] = []
    named: set[str] = set()
    for s in amd:
        wrong: list[str] = []
        for node in s.all_nodes():
            named.add(node.on_host)
            have = c.nodes.get(node.on_host)
            want = f"{node.major}:{node.minor or 0}" if node.major is not None else "any"
            if have is None:
                wrong.append(f"{node.on_host} ({want}) does not exist")
            elif have.kind != "c":
                wrong.append(f"{node.on_host} is not a character device")
            elif node.major is not None and (have.major, have.minor) != (
                node.major,
                node.minor or 0,
            ):
                wrong.append(f"{node.on_host} is {have.major}:{have.minor}, the spec says {want}")
        if wrong:
            out.append(
                Finding(
                    check,
                    CRITICAL,
                    f"{s.path} is stale (written before a GPU or "
                    "driver change): "
                    + "; ".join(wrong[:3])
                    + (f" (+{len(wrong) - 3} more)" if len(wrong) > 3 else ""),
                    subject=s.path,
                    actual="; ".join(wrong),
                    expected="the nodes in /dev/kfd, /dev/dri now",
                    fix=GENERATE
                    + (
                        "; rocmprov-cdi-refresh.service is enabled but did not regenerate it: "
                        "journalctl -u rocmprov-cdi-refresh"
                        if c.refresh_unit == "enabled"
                        else ""
                    ),
                    ref=REF_CDI_GUIDE,
                )
            )
    missing = sorted(
        p
        for p, n in c.nodes.items()
        if n.driver == "amdgpu"
        and p not in named
        and p.rsplit("/", 1)[-1].startswith(("renderD", "card"))
    )
    if missing:
        out.append(
            Finding(
                check,
                WARNING,
                "AMD GPU nodes not in any CDI spec (containers asking "
                f"for {AMD_KIND}=all do not get them): " + ", ".join(missing),
                actual=", ".join(missing),
                expected="every amdgpu DRM node",
                fix=GENERATE,
                ref=REF_CDI_GUIDE,
            )
        )
    if not out:
        out.append(
            Finding(
                check,
                OK,
                f"the {AMD_KIND} spec matches the device nodes ({len(named)} nodes)"
                + (", kept current by rocmprov-cdi-refresh" if c.refresh_unit == "enabled" else ""),
                actual=", ".join(sorted(named)),
            )
        )
    return out


def check_cdi_conflict(facts: HostFacts, policy: Policy) -> list[Finding]:
    check = "container.cdi.conflict"
    c = _c(facts)
    na = _not_applicable(check, c)
    if na or c is None:
        return [na] if na else []
    where: dict[str, list[str]] = {}
    for s in c.specs or ():
        if s.valid:
            for q in s.qualified():
                where.setdefault(q, []).append(s.path)
    out: list[Finding] = []
    for q, paths in sorted(where.items()):
        if len(paths) < 2:
            continue
        dirs = [p.rsplit("/", 1)[0] for p in paths]
        same = len(set(dirs)) < len(dirs)
        out.append(
            Finding(
                check,
                CRITICAL if same else WARNING,
                f"{q} is defined by {', '.join(paths)}: "
                + (
                    "the runtime drops it as a conflict"
                    if same
                    else f"{paths[dirs.index(max(dirs, key=_dir_rank))]} wins, the other is ignored"
                ),
                subject=q,
                actual=", ".join(paths),
                expected="one spec per device",
                fix="keep one spec (amd-ctk writes /etc/cdi/amd.json); move the other away",
                ref=REF_CDI,
            )
        )
    if not out:
        return [
            Finding(
                check,
                OK if where else SKIPPED,
                "no CDI device defined twice" if where else "no CDI specs",
            )
        ]
    return out


def _dir_rank(directory: str) -> int:
    return {"/etc/cdi": 0, "/var/run/cdi": 1, "/run/cdi": 1}.get(directory, -1)
