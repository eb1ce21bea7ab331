"""The containers role's filters (daemon.json merged, never replaced), its place in site.yml, and
`verify --container`'s host script run here against stub engines (the arguments each method
passes)."""

from __future__ import annotations

import importlib.util
import os
import subprocess
from pathlib import Path

import pytest
import yaml

from rocmprov.commands.verify_container import (
    NO_GPU_RC,
    check_image,
    host_script,
    parse_container,
)
from rocmprov.exitcodes import UsageError
from rocmprov.model import Severity
from rocmprov.provision.runner import on_request_roles

REPO = Path(__file__).resolve().parent.parent
spec = importlib.util.spec_from_file_location(
    "rocmprov_containers_filters", REPO / "playbooks/filter_plugins/rocmprov_containers.py")
filters = importlib.util.module_from_spec(spec)
assert spec.loader is not None
spec.loader.exec_module(filters)


def test_merge_keeps_every_other_key() -> None:
    now = {"features": {"containerd-snapshotter": True}, "log-driver": "local",
           "runtimes": {"nvidia": {"path": "nvidia-container-runtime"}}}
    out = filters.docker_merge(now)
    assert out["features"] == {"containerd-snapshotter": True, "cdi": True}
    assert out["runtimes"] == {"nvidia": {"path": "nvidia-container-runtime"},
                               "amd": {"path": "amd-container-runtime", "args": []}}
    assert out["log-driver"] == "local" and "default-runtime" not in out
    assert now["features"] == {"containerd-snapshotter": True}  # the input is not changed
    assert filters.docker_merge(out) == out  # idempotent
    assert filters.docker_merge({}, runtime=False) == {"features": {"cdi": True}}
    assert filters.docker_merge(None, default=True)["default-runtime"] == "amd"
    mine = {"runtimes": {"amd": {"path": "/opt/amd/bin/amd-container-runtime"}}}
    assert filters.docker_merge(mine)["runtimes"]["amd"] == mine["runtimes"]["amd"]


@pytest.mark.parametrize("bad", [[], "x", {"runtimes": []}, {"features": "cdi"}])
def test_merge_refuses_what_it_cannot_merge(bad: object) -> None:
    with pytest.raises(ValueError):
        filters.docker_merge(bad)


def test_mirror_url() -> None:
    m = {"https://repo.radeon.com": "http://10.0.0.1:8100/repo.radeon.com/"}
    assert filters.mirror_url("https://repo.radeon.com/amd-container-toolkit/apt/", m) == \
        "http://10.0.0.1:8100/repo.radeon.com/amd-container-toolkit/apt/"
    assert filters.mirror_url("https://repo.radeon.company/x", m) == \
        "https://repo.radeon.company/x"


def test_role_is_opt_in() -> None:
    roles = on_request_roles(REPO / "playbooks")
    assert roles["rocmprov_containers"] == {"containers", "rocmprov_containers"}
    specs = yaml.safe_load((REPO / "playbooks/roles/rocmprov_containers/meta/argument_specs.yml")
                           .read_text())["argument_specs"]["main"]["options"]
    defaults = yaml.safe_load((REPO / "playbooks/roles/rocmprov_containers/defaults/main.yml")
                              .read_text())
    assert set(specs) == set(defaults)
    assert all(k.startswith("rocmprov_containers_") for k in defaults)


# ---------------------------------------------------------------- verify --container

STUB = """#!/bin/sh
printf '%s\\n' "$0" "$@" > "$STUB_OUT"
echo '{"torch": "2.9.1", "hip": "7.0", "results": [{"test": "devices", "status": "pass"}]}'
"""


ENGINE_NAMES = ("docker", "podman")


def _system_tools(tmp_path: Path) -> Path:
    """A folder of links to the host's /usr/bin and /bin without its container engines: a host
    with Debian's docker.io or podman in /usr/bin must not answer for the stubs (or for their
    absence)."""
    tools = tmp_path / "system-tools"
    if tools.is_dir():
        return tools
    tools.mkdir()
    for folder in (Path("/usr/bin"), Path("/bin")):
        for tool in folder.iterdir():
            link = tools / tool.name
            if tool.name not in ENGINE_NAMES and not link.exists() and not link.is_symlink():
                link.symlink_to(tool)
    return tools


def run_script(tmp_path: Path, script: str, engines: tuple[str, ...], uid0: bool = True,
               kfd: bool = True) -> tuple[subprocess.CompletedProcess[str], list[str]]:  # fmt: skip
    """The host script with stub engines on PATH; /dev/kfd and /etc/cdi looked up under a
    fake root (the script's absolute paths rewritten)."""
    root = tmp_path / "root"
    (root / "dev").mkdir(parents=True, exist_ok=True)
    if kfd:
        (root / "dev/kfd").write_text("")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    for e in engines:
        (bin_dir / e).write_text(STUB)
        (bin_dir / e).chmod(0o755)
    (bin_dir / "id").write_text(f"#!/bin/sh\necho {0 if uid0 else 1000}\n")
    (bin_dir / "id").chmod(0o755)
    (bin_dir / "getent").write_text("#!/bin/sh\ncase $2 in render) echo render:x:992:;; "
                                    "video) echo video:x:44:;; esac\n")
    (bin_dir / "getent").chmod(0o755)
    script = script.replace("/dev/kfd ]", f"{root}/dev/kfd ]").replace(
        "/etc/cdi/", f"{root}/etc/cdi/").replace("/var/run/cdi/", f"{root}/var/run/cdi/")
    out = tmp_path / "argv"
    env = {"PATH": f"{bin_dir}:{_system_tools(tmp_path)}", "STUB_OUT": str(out)}
    cp = subprocess.run(["sh", "-c", script], capture_output=True, text=True, env=env,
                        timeout=60, check=False)
    argv = out.read_text().splitlines() if out.exists() else []
    return cp, argv


def test_devices_method_with_numeric_groups(tmp_path: Path) -> None:
    cp, argv = run_script(tmp_path, host_script("rocm/pytorch:latest"), ("docker", "podman"))
    assert cp.returncode == 0, cp.stderr
    assert os.path.basename(argv[0]) == "docker"
    assert argv[1:11] == ["run", "--rm", "--ipc=host", "--device", "/dev/kfd", "--device",
                          "/dev/dri", "--security-opt", "seccomp=unconfined", "--group-add"]
    assert argv[11:14] == ["992", "--group-add", "44"]
    assert argv[14:17] == ["rocm/pytorch:latest", "python3", "-c"]
    report = parse_container("h", "rocm/pytorch:latest", "python3", cp.returncode, cp.stdout,
                             cp.stderr)
    assert (report.engine, report.method) == ("docker", "devices")
    assert report.smoke is not None and report.smoke.torch == "2.9.1"


def test_cdi_method_and_rootless_podman(tmp_path: Path) -> None:
    (tmp_path / "root/etc/cdi").mkdir(parents=True)
    (tmp_path / "root/etc/cdi/amd.json").write_text('{"kind": "amd.com/gpu"}')
    cp, argv = run_script(tmp_path, host_script("img"), ("podman",), uid0=False)
    assert cp.returncode == 0, cp.stderr
    assert argv[1:7] == ["run", "--rm", "--ipc=host", "--device", "amd.com/gpu=all",
                         "--group-add"]
    assert argv[7] == "keep-groups"


def test_no_gpu_is_said_plainly(tmp_path: Path) -> None:
    cp, argv = run_script(tmp_path, host_script("img"), ("docker",), kfd=False)
    assert cp.returncode == NO_GPU_RC and argv == []
    report = parse_container("h", "img", "python3", cp.returncode, cp.stdout, cp.stderr)
    assert report.severity is Severity.UNKNOWN and "no AMD GPU" in report.note
    cp, _ = run_script(tmp_path / "b", host_script("img"), ())
    assert "no container engine" in cp.stdout


def test_image_is_checked() -> None:
    assert check_image("registry.example:5000/rocm/pytorch:rocm6.4_ubuntu24.04@sha256:ab")
    for bad in ("x;rm -rf /", "$(id)", "", "-v/:/host"):
        with pytest.raises(UsageError):
            check_image(bad)


ROLE = REPO / "playbooks/roles/rocmprov_containers"


def _tasks(path: Path) -> list[dict[str, object]]:
    """Every task of a task file, blocks flattened."""
    out: list[dict[str, object]] = []
    for t in yaml.safe_load(path.read_text()) or []:
        out.append(t)
        out.extend(t.get("block", []) if isinstance(t.get("block"), list) else [])
    return out


def test_uninstall_runs_only_on_request_and_every_command_says_changed() -> None:
    main = _tasks(ROLE / "tasks/main.yml")
    imp = [t for t in main if t.get("ansible.builtin.import_tasks") == "uninstall.yml"]
    assert len(imp) == 1 and imp[0]["tags"] == ["never", "uninstall"]
    for f in sorted((ROLE / "tasks").glob("*.yml")):
        for t in _tasks(f):
            if any(k in t for k in ("ansible.builtin.command", "ansible.builtin.shell")):
                assert "changed_when" in t, (f.name, t["name"])
            assert all(not k.startswith(("command", "shell", "file", "copy")) for k in t), f.name


def test_every_noted_path_is_one_uninstall_may_remove() -> None:
    """record.yml notes a path; the uninstall removes a noted path only when it is ownable."""
    ownable = yaml.safe_load((ROLE / "vars/main.yml").read_text())["_rocmprov_containers_ownable"]
    noted: list[str] = []
    for f in sorted((ROLE / "tasks").glob("*.yml")):
        for t in _tasks(f):
            if t.get("ansible.builtin.include_tasks") == "record.yml":
                loop = t["loop"]
                cdi = t.get("vars", {}).get("_rocmprov_containers_cdi_paths", [])
                noted += loop if isinstance(loop, list) else cdi
    # the udev rule is noted only while the refresh is on
    cond = " if rocmprov_containers_cdi_refresh | bool else '' }}"
    noted = [n.replace(cond, " }}") for n in noted]
    assert len(noted) >= 10
    assert set(noted) <= set(ownable), set(noted) - set(ownable)
    # a foreign spec in /etc/cdi is never a candidate: only the spec apply writes and its dir
    assert [p for p in ownable if "cdi_output" in p] == [
        "{{ rocmprov_containers_cdi_output }}", "{{ rocmprov_containers_cdi_output | dirname }}"]
