"""Container readiness: runtimes, the AMD Container Toolkit, Docker's configuration, CDI specs
(valid, not stale, not in conflict) and the GPU users' access. Facts and sources:
rocmprov/data/containers.yaml. A host with no container runtime gets SKIPPED, never a problem.
"""

from __future__ import annotations

from rocmprov.checks.base import CRITICAL, OK, UNKNOWN, WARNING, skipped
from rocmprov.checks.policy import Policy
from rocmprov.facts.host import HostFacts
from rocmprov.model import Finding
from rocmprov.parse.cdi import CdiSpec
from rocmprov.parse.containers import ContainerFacts

AMD_KIND = "amd.com/gpu"
REF_CTK = (
    "https://github.com/ROCm/container-toolkit/blob/main/docs/container-runtime/requirements.rst"
)
REF_CDI_GUIDE = (
    "https://github.com/ROCm/container-toolkit/blob/main/docs/container-runtime/cdi-guide.rst"
)
REF_WORKLOADS = "https://github.com/ROCm/container-toolkit/blob/main/docs/container-runtime/running-workloads.rst"
REF_CDI = "https://github.com/cncf-tags/container-device-interface/blob/main/SPEC.md"
REF_DOCKERD = "https://docs.docker.com/reference/cli/dockerd/#configure-cdi-devices"
REF_ROCM_DOCKER = "https://rocm.docs.amd.com/projects/install-on-linux/en/latest/how-to/docker.html"
REF_PODMAN_GROUPS = (
    "https://docs.podman.io/en/latest/markdown/podman-run.1.html#group-add-group-keep-groups"
)
NO_RUNTIME = "no container runtime installed (docker, podman, containerd)"
GENERATE = "sudo amd-ctk cdi generate (or rocmprov apply INVENTORY --tags containers)"

DOCKER_MIN_CDI = (25, 0, 0)
DOCKER_CDI_DEFAULT = (28, 3, 0)
PODMAN_MIN_CDI = (3, 2, 0)


def _ver(text: str) -> tuple[int, ...] | None:
    parts = text.split("~")[0].split("-")[0].split(".")
    try:
        nums = tuple(int(p) for p in parts[:3])
    except ValueError:
        return None
    return nums + (0,) * (3 - len(nums)) if nums else None


def _c(facts: HostFacts) -> ContainerFacts | None:
    return getattr(facts, "containers", None)


def _not_applicable(check: str, c: ContainerFacts | None) -> Finding | None:
    """SKIPPED when the probes did not run or no runtime is there; UNKNOWN when the tool list
    could not be read."""
    if c is None:
        return skipped(check, "container probes not collected (a bundle from an older rocmprov)")
    if c.tools is None:
        return Finding(check, UNKNOWN, "container runtimes not collected", actual="not collected")
    if not c.runtimes:
        return skipped(check, NO_RUNTIME)
    return None


def _amd_specs(c: ContainerFacts) -> list[CdiSpec]:
    return [s for s in c.specs or () if s.kind == AMD_KIND]


def _broken_amd(c: ContainerFacts) -> list[CdiSpec]:
    """Invalid specs that are AMD's by kind or by file name (an unreadable one has no kind)."""
    return [
        s
        for s in c.specs or ()
        if not s.valid
        and (s.kind == AMD_KIND or (not s.kind and "amd" in s.path.rsplit("/", 1)[-1].lower()))
    ]


def check_runtime(facts: HostFacts, policy: Policy) -> list[Finding]:
    c = _c(facts)
    na = _not_applicable("container.runtime", c)
    if na or c is None:
        return [na] if na else []
    wants_cdi = c.has("amd-ctk") or bool(_amd_specs(c))
    out: list[Finding] = []
    for name, minimum, label in (
        ("docker", DOCKER_MIN_CDI, "Docker 25.0"),
        ("podman", PODMAN_MIN_CDI, "Podman 3.2.0"),
    ):
        if not c.has(name):
            continue
        version = c.version(name)
        if name == "docker" and c.docker_info and c.docker_info.server_version:
            version = c.docker_info.server_version
        v = _ver(version)
        if v is not None and v < minimum and wants_cdi:
            out.append(
                Finding(
                    "container.runtime",
                    WARNING,
                    f"{name} {version} cannot use CDI specs ({label} or newer can); containers get "
                    "AMD GPUs only through --device /dev/kfd --device /dev/dri",
                    subject=name,
                    actual=version,
                    expected=f">= {label.split()[1]}",
                    fix=f"upgrade {name} (AMD: Docker 25.0+ for the toolkit), or use the "
                    "device flags",
                    ref=REF_CTK,
                )
            )
        else:
            note = (
                ""
                if v is not None and v >= minimum
                else " (device flags only)"
                if v is not None
                else " (version not read)"
            )
            out.append(
                Finding(
                    "container.runtime",
                    OK,
                    f"{name} {version or '?'}{note}",
                    subject=name,
                    actual=version,
                )
            )
        if name == "docker" and c.docker_info and c.docker_info.errors:
            err = c.docker_info.errors[0][:300]
            # "permission denied" is the audit user's lack of access (no --become), not the
            # daemon's state: only a daemon that is not there is reported.
            if "daemon running" in err and "permission denied" not in err.lower():
                out.append(
                    Finding(
                        "container.runtime",
                        WARNING,
                        f"docker is installed but its daemon did not answer: {err}",
                        subject="dockerd",
                        actual=err,
                        expected="dockerd running",
                        fix="sudo systemctl enable --now docker",
                        ref=REF_ROCM_DOCKER,
                    )
                )
    if c.has("containerd"):
        out.append(
            Finding(
                "container.runtime",
                OK,
                f"containerd {c.version('containerd') or '?'}",
                subject="containerd",
                actual=c.version("containerd"),
            )
        )
    return out


def check_toolkit(facts: HostFacts, policy: Policy) -> list[Finding]:
    c = _c(facts)
    na = _not_applicable("container.toolkit", c)
    if na or c is None:
        return [na] if na else []
    if not c.has("amd-ctk"):
        return [
            skipped(
                "container.toolkit",
                "AMD Container Toolkit not installed: containers get "
                "GPUs through --device /dev/kfd --device /dev/dri (no CDI, no amd runtime)",
            )
        ]
    return [
        Finding(
            "container.toolkit",
            OK,
            f"amd-ctk {c.version('amd-ctk') or '?'}",
            actual=c.version("amd-ctk"),
            subject=c.tools["amd-ctk"].path if c.tools else "",
        )
    ]


def check_docker_config(facts: HostFacts, policy: Policy) -> list[Finding]:
    check = "container.docker.config"
    c = _c(facts)
    na = _not_applicable(check, c)
    if na or c is None:
        return [na] if na else []
    if not c.has("docker") and not c.has("dockerd"):
        return [skipped(check, "Docker not installed")]
    d = c.daemon_json
    if d is None:
        return [Finding(check, UNKNOWN, "daemon.json not collected", actual="not collected")]
    if d.error:
        return [
            Finding(
                check,
                CRITICAL,
                f"/etc/docker/daemon.json is broken ({d.error}): dockerd will not start",
                actual=d.error,
                expected="a JSON object",
                fix="restore it from its backup (rocmprov keeps daemon.json.<time>~) "
                "or fix the JSON, then sudo systemctl restart docker",
                ref=REF_DOCKERD,
            )
        ]
    out: list[Finding] = []
    has_runtime = c.has("amd-container-runtime")
    if d.default_runtime == "amd" and not has_runtime:
        out.append(
            Finding(
                check,
                CRITICAL,
                "default-runtime is amd but amd-container-runtime is "
                "not installed: every docker run fails",
                actual="default-runtime: amd",
                expected="amd-container-runtime on PATH",
                fix="install amd-container-toolkit, or remove default-runtime from "
                "/etc/docker/daemon.json",
                ref=REF_CTK,
            )
        )
    elif "amd" in d.runtimes and not has_runtime:
        out.append(
            Finding(
                check,
                WARNING,
                "runtime amd is registered but amd-container-runtime "
                "is not installed: docker run --runtime=amd fails",
                actual=f"runtimes.amd: {d.runtimes['amd']}",
                expected="amd-container-runtime on PATH",
                fix="install amd-container-toolkit, or remove runtimes.amd",
                ref=REF_CTK,
            )
        )
    version = (
        c.docker_info.server_version
        if c.docker_info and c.docker_info.server_version
        else c.version("docker") or c.version("dockerd")
    )
    v = _ver(version)
    cdi = d.features.get("cdi")
    if _amd_specs(c) and v is not None and v >= DOCKER_MIN_CDI:
        if v < DOCKER_CDI_DEFAULT and cdi is not True:
            out.append(
                Finding(
                    check,
                    WARNING,
                    f"Docker {version} reads no CDI specs: "
                    "features.cdi is not true in daemon.json (CDI is on by default "
                    "only from 28.3.0)",
                    actual=f"features: {d.features or '{}'}",
                    expected='"features": {"cdi": true}',
                    fix="rocmprov apply INVENTORY --tags containers (merges it), then "
                    "sudo systemctl restart docker",
                    ref=REF_DOCKERD,
                )
            )
        elif cdi is False:
            out.append(
                Finding(
                    check,
                    WARNING,
                    "CDI is turned off in daemon.json (features.cdi "
                    "false): --device amd.com/gpu=... fails",
                    actual="features.cdi: false",
                    expected="true or unset",
                    fix="remove features.cdi or set it true; restart docker",
                    ref=REF_DOCKERD,
                )
            )
        elif c.docker_info and c.docker_info.cdi_spec_dirs == () and not c.docker_info.errors:
            out.append(
                Finding(
                    check,
                    WARNING,
                    "the Docker daemon reports no CDI spec "
                    "directories: CDI is off in the running daemon (restart pending?)",
                    actual="CDISpecDirs: []",
                    expected="/etc/cdi, /var/run/cdi",
                    fix="sudo systemctl restart docker",
                    ref=REF_DOCKERD,
                )
            )
    if not out:
        on = cdi is True or (v is not None and v >= DOCKER_CDI_DEFAULT and cdi is not False)
        parts = [f"CDI {'on' if on else 'off'}"]
        if "amd" in d.runtimes:
            parts.append(
                "amd runtime registered" + (" (default)" if d.default_runtime == "amd" else "")
            )
        out.append(
            Finding(
                check,
                OK,
                "daemon.json: " + ", ".join(parts),
                actual="present" if d.present else "absent (defaults)",
            )
        )
    return out


def check_users(facts: HostFacts, policy: Policy) -> list[Finding]:
    """The GPU users can start GPU containers: Docker's socket (docker group), rootless Podman
    (subordinate ids; render and video kept with keep-groups, which needs crun)."""
    check = "container.user"
    c = _c(facts)
    na = _not_applicable(check, c)
    if na or c is None:
        return [na] if na else []
    if not facts.groups:
        return [Finding(check, UNKNOWN, "GPU users' groups not collected", actual="not collected")]
    out: list[Finding] = []
    for u in facts.groups:
        if not u.exists or u.user in ("", "root"):
            continue
        gpu_missing = sorted({"render", "video"} & set(u.existing) - set(u.groups))
        problems: list[str] = []
        fixes: list[str] = []
        if c.has("docker") and "docker" not in u.groups:
            problems.append("not in the docker group (cannot reach the Docker daemon without sudo)")
            fixes.append(
                f"sudo usermod -aG docker {u.user} (root-equivalent access), or sudo docker"
            )
        if c.has("podman"):
            if (c.subuid is not None and u.user not in c.subuid) or (
                c.subgid is not None and u.user not in c.subgid
            ):
                problems.append(
                    "no /etc/subuid or /etc/subgid entry (rootless Podman cannot start)"
                )
                fixes.append(
                    f"sudo usermod --add-subuids 100000-165535 --add-subgids 100000-165535 {u.user}"
                )
            if gpu_missing:
                problems.append(
                    f"not in {', '.join(gpu_missing)}: a rootless container cannot "
                    "open /dev/kfd even with --group-add keep-groups"
                )
                fixes.append(f"sudo usermod -aG render,video {u.user}")
        if problems:
            out.append(
                Finding(
                    check,
                    WARNING,
                    f"{u.user}: " + "; ".join(problems),
                    subject=u.user,
                    actual=", ".join(sorted(u.groups)),
                    expected="docker group (Docker); subordinate ids, render and "
                    "video (rootless Podman)",
                    fix="; ".join(fixes),
                    ref=REF_WORKLOADS,
                )
            )
    if not out:
        out.append(
            Finding(
                check,
                OK,
                "the GPU users can start GPU containers",
                actual=", ".join(u.user for u in facts.groups),
            )
        )
    if c.has("podman"):
        out.extend(_keep_groups(c))
    return out


def _keep_groups(c: ContainerFacts) -> list[Finding]:
    runtime = c.podman_runtime or ("crun" if c.has("crun") else "runc" if c.has("runc") else "")
    if runtime and runtime != "crun":
        return [
            Finding(
                "container.podman.groups",
                WARNING,
                f"Podman's OCI runtime is {runtime}: "
                "--group-add keep-groups needs crun, so rootless containers lose "
                "render/video and cannot open /dev/kfd",
                actual=f"runtime {runtime}",
                expected="crun",
                fix='install crun and set [engine] runtime = "crun" '
                "in containers.conf (or run the container rootful)",
                ref=REF_PODMAN_GROUPS,
            )
        ]
    how = (
        f"containers.conf keeps them ({c.keep_groups})"
        if c.keep_groups
        else "pass --group-add keep-groups to rootless podman run"
    )
    return [
        Finding(
            "container.podman.groups",
            OK,
            f"rootless Podman can keep render/video: {how}",
            actual=f"runtime {runtime or 'crun (default)'}",
        )
    ]
