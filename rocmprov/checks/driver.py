"""amdgpu driver, /dev/kfd and render nodes, the GPU user's groups, DKMS and secure boot."""

from __future__ import annotations

from rocmprov.checks.base import CRITICAL, OK, UNKNOWN, WARNING, gpu_scope
from rocmprov.checks.policy import Policy
from rocmprov.facts.host import HostFacts
from rocmprov.model import Finding
from rocmprov.parse.system import UserGroups

REF_PERMS = (
    "https://rocm.docs.amd.com/projects/install-on-linux/en/latest/install/prerequisites.html"
)
REF_DKMS = (
    "https://rocm.docs.amd.com/projects/install-on-linux/en/latest/install/amdgpu-install.html"
)


def check_amdgpu(facts: HostFacts, policy: Policy) -> list[Finding]:
    if (scope := gpu_scope(facts, "driver.amdgpu")) is not None:
        return scope
    if facts.modules is None and facts.amdgpu_initstate is None:
        why = facts.not_collected("lsmod", "amdgpu-initstate")
        return [Finding("driver.amdgpu", UNKNOWN, f"loaded modules not collected: {why}")]
    if "amdgpu" not in (facts.modules or ()):
        return [
            Finding(
                "driver.amdgpu",
                CRITICAL,
                "amdgpu driver not loaded",
                actual="not loaded",
                expected="loaded",
                fix="sudo apt install amdgpu-dkms && sudo modprobe amdgpu;"
                " then see `sudo dmesg | grep -i amdgpu`",
                ref=REF_DKMS,
            )
        ]
    state = facts.amdgpu_initstate or ""
    if state and state != "live":
        return [
            Finding(
                "driver.amdgpu",
                CRITICAL,
                f"amdgpu initstate {state}",
                actual=state,
                expected="live",
                fix="sudo dmesg | grep -i amdgpu  # why init failed",
            )
        ]
    return [Finding("driver.amdgpu", OK, "amdgpu loaded" + (f" ({state})" if state else ""))]


def check_nodes(facts: HostFacts, policy: Policy) -> list[Finding]:
    if (scope := gpu_scope(facts, "driver.kfd", "driver.render")) is not None:
        return scope
    if facts.devnodes is None:
        why = facts.not_collected("kfd")
        return [Finding("driver.kfd", UNKNOWN, f"device nodes not collected: {why}")]
    out = []
    if "/dev/kfd" in facts.devnodes:
        out.append(Finding("driver.kfd", OK, "/dev/kfd present"))
    else:
        out.append(
            Finding(
                "driver.kfd",
                CRITICAL,
                "/dev/kfd missing",
                actual="absent",
                expected="character device 238:0 (or dynamic)",
                fix="load amdgpu (sudo modprobe amdgpu); in a container pass "
                "--device=/dev/kfd --device=/dev/dri",
                ref=REF_PERMS,
            )
        )
    render = sorted(p for p in facts.devnodes if p.startswith("/dev/dri/renderD"))
    if render:
        out.append(
            Finding("driver.render", OK, f"{len(render)} render node(s)", actual=", ".join(render))
        )
    else:
        out.append(
            Finding(
                "driver.render",
                CRITICAL,
                "no /dev/dri/renderD* node",
                actual="none",
                fix="sudo modprobe amdgpu; check dmesg",
                ref=REF_PERMS,
            )
        )
    return out


def check_groups(facts: HostFacts, policy: Policy) -> list[Finding]:
    """Every GPU user (rocmprov_gpu_users, else the login user) in render and video."""
    if not facts.groups:
        return [Finding("user.groups", UNKNOWN, "GPU user's groups not collected")]
    return [_user_groups_finding(g) for g in facts.groups]


def _user_groups_finding(g: UserGroups) -> Finding:
    if not g.exists:
        return Finding(
            "user.groups",
            WARNING,
            f"{g.user} is not a user on this host",
            subject=g.user,
            actual="no such user",
            expected="an existing account",
            fix=f"create {g.user}, or drop it from rocmprov_gpu_users",
            ref=REF_PERMS,
        )
    if g.user == "root":
        return Finding("user.groups", OK, "GPU user is root", subject="root", actual="root")
    missing = sorted({"render", "video"} - g.groups)
    if missing:
        return Finding(
            "user.groups",
            CRITICAL if "render" in missing else WARNING,
            f"{g.user} not in {' and '.join(missing)}",
            subject=g.user,
            actual=",".join(sorted(g.groups)),
            expected="render,video",
            fix=f"sudo usermod -aG render,video {g.user}  # then log in again",
            ref=REF_PERMS,
        )
    return Finding("user.groups", OK, f"{g.user} in render and video", subject=g.user)


def check_dkms(facts: HostFacts, policy: Policy) -> list[Finding]:
    if (scope := gpu_scope(facts, "driver.dkms")) is not None:
        return scope
    if facts.dkms is None:
        why = facts.not_collected("dkms")
        return [Finding("driver.dkms", UNKNOWN, f"dkms status not collected: {why}")]
    mods = [m for m in facts.dkms if m.name == "amdgpu"]
    if not mods:
        return [Finding("driver.dkms", OK, "no amdgpu DKMS module (in-kernel amdgpu)")]
    here = [m for m in mods if m.kernel == facts.kernel]
    if not here:
        kernels = ", ".join(sorted({m.kernel for m in mods}))
        return [
            Finding(
                "driver.dkms",
                CRITICAL,
                f"amdgpu DKMS not built for {facts.kernel}",
                actual=f"built for {kernels}",
                expected=f"installed for {facts.kernel}",
                fix=f"sudo apt install linux-headers-{facts.kernel} && sudo dkms autoinstall"
                f"  # then read /var/lib/dkms/amdgpu/*/build/make.log",
                ref=REF_DKMS,
            )
        ]
    bad = [m for m in here if m.state != "installed"]
    if bad:
        return [
            Finding(
                "driver.dkms",
                CRITICAL,
                f"amdgpu DKMS {bad[0].state} for {facts.kernel}",
                actual=bad[0].state,
                expected="installed",
                fix="sudo dkms autoinstall",
                ref=REF_DKMS,
            )
        ]
    return [Finding("driver.dkms", OK, f"amdgpu {here[0].version} installed for {facts.kernel}")]


def check_secureboot(facts: HostFacts, policy: Policy) -> list[Finding]:
    if facts.secureboot is None:
        return [Finding("boot.secureboot", UNKNOWN, "secure boot state not collected (mokutil)")]
    dkms_amdgpu = any(m.name == "amdgpu" for m in facts.dkms or ())
    if facts.secureboot == "enabled" and dkms_amdgpu:
        return [
            Finding(
                "boot.secureboot",
                WARNING,
                "secure boot on with a DKMS amdgpu: the module must be signed (MOK)",
                actual="enabled",
                fix="sudo mokutil --import /var/lib/dkms/mok.pub; reboot "
                "and enroll the key (or disable secure boot)",
                ref=REF_DKMS,
            )
        ]
    return [Finding("boot.secureboot", OK, f"secure boot {facts.secureboot or 'unknown'}")]
