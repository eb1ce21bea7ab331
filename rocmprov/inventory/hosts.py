"""Hosts from an Ansible inventory, resolved by Ansible itself (`ansible-inventory --list`).

Ansible does the parsing (INI, YAML, ranges, children, group_vars/host_vars, plugins) and the
`--limit` patterns, so a host list here is exactly the one `ansible-playbook` would use. This
module only turns Ansible's JSON into `HostSpec`s. Ansible's answer is cached while the
inventory's files are unchanged (rocmprov.inventory.cache).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rocmprov.exitcodes import UsageError
from rocmprov.inventory.cache import cached_inventory
from rocmprov.inventory.hostnames import check_host, check_port, check_user

INVENTORY_TIMEOUT = 120.0  # a dynamic inventory plugin may be slow; never wait forever
_TRUE = frozenset({"1", "true", "yes", "on", "y", "t"})
_FALSE = frozenset({"0", "false", "no", "off", "n", "f", ""})
_AUTO_PYTHON = frozenset({"auto", "auto_silent", "auto_legacy", "auto_legacy_silent"})


@dataclass(frozen=True)
class HostSpec:
    """One inventory host as rocmprov connects to it (Ansible's variable names in brackets)."""

    name: str  # inventory_hostname
    address: str  # ansible_host, else the name
    port: int | None = None  # ansible_port; None: ssh_config's, else 22
    user: str | None = None  # ansible_user; None: ssh_config's, else the local user
    key_file: str | None = None  # ansible_ssh_private_key_file, ~ expanded
    become: bool = False  # ansible_become
    become_user: str | None = None  # ansible_become_user; None means root
    # rocmprov_gpu_users (the variable apply's users role reads): who runs GPU work; () is
    # the login user, as apply's default is (AMD's install docs: usermod -aG render,video $LOGNAME)
    gpu_users: tuple[str, ...] = ()
    # the interpreter whose torch the audit judges: rocmprov_python, else the venv apply
    # installs torch into (rocmprov_torch_venv), else ansible_python_interpreter / python3
    python: str = "/opt/rocmprov/torch-venv/bin/python"  # DEFAULT_TORCH_VENV's
    python_fallback: str = "python3"  # used when `python` is not on the host (no venv yet)
    vars: Mapping[str, Any] = field(default_factory=dict, compare=False, hash=False)

    @property
    def connection(self) -> str:
        """ansible_connection: "ssh" unless the inventory says e.g. "local"."""
        return str(self.vars.get("ansible_connection") or "ssh")


def ansible_inventory_bin() -> str:
    """`ansible-inventory` beside this interpreter (same venv) first, else the one on PATH."""
    beside = Path(sys.executable).parent / "ansible-inventory"
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    found = shutil.which("ansible-inventory")
    if found is None:
        raise UsageError("ansible-inventory not found: install ansible-core (pip install rocmprov)")
    return found


def load_inventory(
    inventory: str | os.PathLike[str],
    *,
    limit: str | None = None,
    timeout: float = INVENTORY_TIMEOUT,
    extra_vars: Mapping[str, Any] | None = None,
) -> list[HostSpec]:
    """The hosts of `inventory` (a path, or Ansible's "h1,h2," list) matching `limit`.

    `extra_vars` (apply's -e) win over every inventory variable, as in Ansible.

    Order: Ansible's inventory order (groups depth-first from `all`). Raises UsageError with one
    line when the inventory does not exist, Ansible cannot parse it, or nothing matches.
    """
    source = os.fspath(inventory)
    if not source:
        raise UsageError("no inventory given")
    if "," not in source and not Path(source).expanduser().exists():
        raise UsageError(f"no such inventory: {source}")
    tool = ansible_inventory_bin()
    data = cached_inventory(
        source, limit, tool, lambda: _run_ansible_inventory(source, limit, timeout, tool)
    )
    names = _host_order(data)
    if not names:
        where = f" matching --limit {limit!r}" if limit else ""
        raise UsageError(f"no hosts{where} in inventory {source}")
    hostvars = data.get("_meta", {}).get("hostvars", {})
    over = dict(extra_vars or {})
    hosts = [host_spec(name, {**(hostvars.get(name) or {}), **over}) for name in names]
    if any("rocmprov_gpu_user" in (hostvars.get(n) or {}) for n in names) or (
        "rocmprov_gpu_user" in over
    ):
        _deprecated_once(
            "rocmprov_gpu_user is deprecated: use rocmprov_gpu_users (a list), which apply "
            "and audit both read; its value is still used"
        )
    return hosts


_said: set[str] = set()


def _deprecated_once(message: str) -> None:
    """One line on stderr per process and message (a fleet audit loads the inventory once)."""
    if message not in _said:
        _said.add(message)
        print(f"rocmprov: deprecated: {message}", file=sys.stderr)


DEFAULT_TORCH_VENV = "/opt/rocmprov/torch-venv"  # playbooks/roles/rocmprov_torch/defaults


def gpu_users(name: str, v: Mapping[str, Any]) -> tuple[str, ...]:
    """rocmprov_gpu_users (a list, or "a,b" as an INI inventory gives it) plus the deprecated
    rocmprov_gpu_user; each checked as a user name. () means the login user."""
    value = v.get("rocmprov_gpu_users")
    if isinstance(value, str):
        items = value.split(",")
    elif isinstance(value, list | tuple):
        items = [str(x) for x in value]
    elif value is None:
        items = []
    else:
        raise UsageError(f"{name}: rocmprov_gpu_users {value!r} is not a list of user names")
    old = v.get("rocmprov_gpu_user")
    if old not in (None, ""):
        items.append(str(old))
    users = dict.fromkeys(i.strip() for i in items if i.strip())
    return tuple(check_user(name, "rocmprov_gpu_users", u) for u in users)


def torch_python(v: Mapping[str, Any]) -> tuple[str, str]:
    """(interpreter, fallback) whose torch the audit judges: rocmprov_python as given; else the
    torch venv apply makes (when rocmprov_torch_enabled is not false), falling back to
    ansible_python_interpreter or python3 where that venv does not exist yet."""
    base = v.get("rocmprov_python") or v.get("ansible_python_interpreter")
    if base is None or str(base) in _AUTO_PYTHON:
        base = "python3"
    if v.get("rocmprov_python") not in (None, ""):
        return str(base), ""
    enabled = v.get("rocmprov_torch_enabled", True)
    if str(enabled).strip().lower() in _FALSE or enabled is False:
        return str(base), ""
    venv = str(v.get("rocmprov_torch_venv") or DEFAULT_TORCH_VENV).rstrip("/")
    return f"{venv}/bin/python", str(base)


def _run_ansible_inventory(
    source: str, limit: str | None, timeout: float, tool: str | None = None
) -> dict[str, Any]:
    argv = [tool or ansible_inventory_bin(), "-i", source, "--list"]
    if limit:
        argv += ["--limit", limit]
    env = {
        **os.environ,
        # an inventory Ansible cannot parse is an error, not a warning and an empty list
        "ANSIBLE_INVENTORY_UNPARSED_FAILED": "True",
        "ANSIBLE_INVENTORY_ANY_UNPARSED_IS_FAILED": "True",
        "ANSIBLE_NOCOLOR": "1",
        "ANSIBLE_FORCE_COLOR": "0",
        "ANSIBLE_DEPRECATION_WARNINGS": "False",
    }
    try:
        proc = subprocess.run(
            argv,
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
            env=env,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        raise UsageError(f"ansible-inventory -i {source} took over {timeout:g}s") from exc
    except OSError as exc:
        raise UsageError(f"cannot run ansible-inventory: {exc.strerror or exc}") from exc
    if proc.returncode != 0:
        raise UsageError(f"inventory {source}: {_ansible_error(proc.stderr)}")
    try:
        data = json.loads(proc.stdout)
    except json.JSONDecodeError as exc:
        raise UsageError(f"inventory {source}: ansible-inventory gave no JSON ({exc.msg})") from exc
    if not isinstance(data, dict):
        raise UsageError(f"inventory {source}: ansible-inventory gave unexpected JSON")
    return data


def _ansible_error(stderr: str) -> str:
    """The one line of Ansible's stderr that says what is wrong."""
    lines = [ln.strip() for ln in stderr.splitlines() if ln.strip()]
    for ln in lines:
        if ln.startswith("[ERROR]:") or ln.startswith("ERROR!"):
            return ln.split(":", 1)[1].strip() if ln.startswith("[ERROR]") else ln[6:].strip()
    return lines[-1] if lines else "ansible-inventory failed"


def _host_order(data: Mapping[str, Any]) -> list[str]:
    """Hosts in Ansible's order: from `all`, each group's hosts, then its children, depth-first."""
    seen_groups: set[str] = set()
    seen_hosts: dict[str, None] = {}
    stack = ["all"]
    while stack:
        group = stack.pop()
        if group in seen_groups:
            continue
        seen_groups.add(group)
        node = data.get(group) or {}
        for host in node.get("hosts") or []:
            seen_hosts.setdefault(host, None)
        stack.extend(reversed(node.get("children") or []))
    return list(seen_hosts)


def host_spec(name: str, hostvars: Mapping[str, Any]) -> HostSpec:
    """One host's connection settings from its Ansible variables (deprecated aliases honoured)."""
    v = dict(hostvars)

    def first(*keys: str) -> Any:
        for key in keys:
            if v.get(key) not in (None, ""):
                return v[key]
        return None

    port = first("ansible_port", "ansible_ssh_port")
    key_file = first("ansible_ssh_private_key_file", "ansible_private_key_file")
    python, python_fallback = torch_python(v)
    user = first("ansible_user", "ansible_ssh_user", "ansible_remote_user")
    become_user = first("ansible_become_user")
    # checked here, before anything reaches ssh_config's Match exec, a config or a shell
    address_key = _key_of(v, "ansible_host", "ansible_ssh_host") or "inventory_hostname"
    address = check_host(name, address_key, str(first("ansible_host", "ansible_ssh_host") or name))
    if user is not None:
        user_key = _key_of(v, "ansible_user", "ansible_ssh_user") or "ansible_remote_user"
        user = check_user(name, user_key, str(user))
    if become_user is not None:
        become_user = check_user(name, "ansible_become_user", str(become_user))
    return HostSpec(
        name=name,
        address=address,
        port=_port(name, port),
        user=user,
        key_file=os.path.expanduser(str(key_file)) if key_file is not None else None,
        become=_bool(name, "ansible_become", first("ansible_become")),
        become_user=become_user,
        gpu_users=gpu_users(name, v),
        python=python,
        python_fallback=python_fallback,
        vars=v,
    )


def _key_of(v: Mapping[str, Any], *keys: str) -> str | None:
    """The first of `keys` set in `v` (which variable a value came from, for messages)."""
    return next((k for k in keys if v.get(k) not in (None, "")), None)


def _port(host: str, value: Any) -> int | None:
    if value is None:
        return None
    return check_port(host, "ansible_port", value.strip() if isinstance(value, str) else value)


def _bool(host: str, key: str, value: Any) -> bool:
    """Ansible's boolean(): INI gives strings ("yes", "true"), YAML gives real booleans."""
    if value is None:
        return False
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise UsageError(f"{host}: {key} {value!r} is not a boolean")
