"""Inventories resolved by Ansible itself: INI and YAML, ranges, children, group_vars/host_vars,
and --limit patterns exactly as ansible-playbook would select them."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from rocmprov.exitcodes import UsageError
from rocmprov.inventory.hosts import HostSpec, ansible_inventory_bin, host_spec, load_inventory

FIX = Path(__file__).parent / "fixtures" / "inventory"
INI = FIX / "ini" / "hosts.ini"
YAML = FIX / "yaml" / "hosts.yml"


def names(hosts: list[HostSpec]) -> list[str]:
    return [h.name for h in hosts]


def ansible_list_hosts(inventory: Path, pattern: str) -> set[str]:
    """What `ansible PATTERN --list-hosts` selects: the reference for --limit."""
    ansible = Path(ansible_inventory_bin()).with_name("ansible")
    proc = subprocess.run(
        [str(ansible), "-i", str(inventory), "all", "--list-hosts", "--limit", pattern],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={**os.environ, "ANSIBLE_NOCOLOR": "1"},
    )
    lines = [ln.strip() for ln in proc.stdout.splitlines()[1:] if ln.strip()]
    return set(lines)


def test_ini_ranges_children_and_vars() -> None:
    hosts = load_inventory(INI)
    assert names(hosts) == [
        "login1",
        "mi300-01",
        "mi300-02",
        "mi300-03",
        "mi300-04",
        "mi210-a",
        "mi210-b",
        "mi210-c",
        "epyc-old",
    ]
    by = {h.name: h for h in hosts}
    assert by["login1"] == HostSpec(name="login1", address="login1")
    assert by["mi300-03"].user == "ops"
    assert by["mi300-03"].become is True  # group_vars/gpu.yml through the children chain
    assert by["mi300-03"].gpu_users == ("alice",)  # the deprecated rocmprov_gpu_user
    # the torch venv apply makes, else ansible_python_interpreter
    assert by["mi210-b"].python == "/opt/rocmprov/torch-venv/bin/python"
    assert by["mi210-b"].python_fallback == "/usr/bin/python3.11"
    assert by["mi210-b"].become_user == "root"
    old = by["epyc-old"]
    assert (old.address, old.port, old.user) == ("10.0.0.9", 2222, "admin")  # host_vars wins
    assert old.key_file == os.path.expanduser("~/.ssh/legacy_rsa")
    assert old.python == "/opt/py/bin/python3"  # rocmprov_python over the interpreter
    assert old.python_fallback == ""  # as given: never another interpreter
    assert old.become is True
    assert old.vars["rocmprov_gpu_user"] == "alice"


def test_yaml_inventory_with_group_vars_all_and_local_connection() -> None:
    hosts = load_inventory(YAML)
    by = {h.name: h for h in hosts}
    assert set(by) == {"bastion", "node01", "node02", "node03", "localhost"}
    assert by["bastion"].address == "192.0.2.1" and by["bastion"].become is False
    assert by["node02"].user == "ubuntu" and by["node02"].become is True
    assert all(h.gpu_users == ("render",) for h in hosts)  # group_vars/all.yml
    assert by["localhost"].connection == "local"
    assert by["localhost"].python_fallback == "python3"  # auto_silent means: the default
    assert by["node01"].connection == "ssh"


@pytest.mark.parametrize(
    "pattern",
    [
        "mi300x",
        "gpu:!mi300x",
        "gpu:&rack1",
        "mi300-0*",
        "~mi(300|210)-0?[2b]",
        "legacy,login1",
        "mi300x[1:2]",
        "epyc-old",
    ],
)
def test_limit_selects_what_ansible_selects(pattern: str) -> None:
    selected = set(names(load_inventory(INI, limit=pattern)))
    assert selected == ansible_list_hosts(INI, pattern)
    assert selected  # every pattern here matches something


def test_limit_examples() -> None:
    assert names(load_inventory(INI, limit="gpu:&rack1")) == ["mi300-01", "mi300-02", "mi210-a"]
    assert names(load_inventory(YAML, limit="gpu:!local")) == ["node01", "node02", "node03"]


def test_comma_host_list() -> None:
    hosts = load_inventory("n1.example,n2.example,")
    assert names(hosts) == ["n1.example", "n2.example"]
    assert hosts[0].address == "n1.example" and hosts[0].port is None


def test_missing_inventory_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="no such inventory"):
        load_inventory(tmp_path / "nope.ini")


def test_unparsable_inventory_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(UsageError) as info:
        load_inventory(FIX / "broken.ini")
    message = str(info.value)
    assert "\n" not in message and "broken.ini" in message


def test_limit_matching_nothing(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="no hosts matching --limit 'nosuch'"):
        load_inventory(INI, limit="nosuch")


def test_bad_port_and_boolean_are_usage_errors() -> None:
    with pytest.raises(UsageError, match="ansible_port"):
        host_spec("h", {"ansible_port": "ssh"})
    with pytest.raises(UsageError, match="ansible_become"):
        host_spec("h", {"ansible_become": "maybe"})
    assert host_spec("h", {"ansible_become": "False", "ansible_port": "22"}).become is False
    assert host_spec("h", {"ansible_ssh_host": "10.1.1.1", "ansible_ssh_user": "u"}).address == (
        "10.1.1.1"
    )


# ---- one GPU-users variable for apply and audit (issue 24)


def test_gpu_users_from_a_list_an_ini_string_and_the_deprecated_name(tmp_path: Path) -> None:
    inv = tmp_path / "hosts.ini"
    inv.write_text(
        "[gpu]\n"
        "a rocmprov_gpu_users=alice,bob\n"  # INI: a plain string, split on commas
        "b rocmprov_gpu_users='[\"carol\"]'\n"  # INI: a JSON-ish list Ansible parses
        "c rocmprov_gpu_user=dave\n"  # the deprecated single name
        "d\n"
    )
    by = {h.name: h for h in load_inventory(inv)}
    assert by["a"].gpu_users == ("alice", "bob")
    assert by["b"].gpu_users == ("carol",)
    assert by["c"].gpu_users == ("dave",)
    assert by["d"].gpu_users == ()  # the login user, as apply's default


def test_deprecated_gpu_user_says_so_once(tmp_path: Path, capfd: pytest.CaptureFixture) -> None:
    import rocmprov.inventory.hosts as inventory

    inventory._said.clear()
    inv = tmp_path / "hosts.ini"
    inv.write_text("[gpu]\nx rocmprov_gpu_user=dave\ny rocmprov_gpu_user=erin\n")
    load_inventory(inv)
    load_inventory(inv)
    err = capfd.readouterr().err
    assert err.count("rocmprov_gpu_user is deprecated") == 1, err
    assert "rocmprov_gpu_users" in err


def test_extra_vars_win_over_the_inventory(tmp_path: Path) -> None:
    inv = tmp_path / "hosts.ini"
    inv.write_text("[gpu]\nx rocmprov_gpu_users=alice rocmprov_torch_venv=/srv/venv\n")
    (x,) = load_inventory(inv, extra_vars={"rocmprov_gpu_users": ["bob"]})
    assert x.gpu_users == ("bob",)
    assert (x.python, x.python_fallback) == ("/srv/venv/bin/python", "python3")
    (y,) = load_inventory(inv, extra_vars={"rocmprov_torch_enabled": False})
    assert (y.python, y.python_fallback) == ("python3", "")


@pytest.mark.parametrize("bad", ["al ice", "-rf", "a;b", "x$(id)"])
def test_a_bad_gpu_user_name_is_a_usage_error(bad: str) -> None:
    with pytest.raises(UsageError):
        host_spec("h", {"rocmprov_gpu_users": [bad]})
