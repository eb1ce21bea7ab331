"""The ansible-inventory cache: hit, miss when a file changes, corrupt or unsafe entries, and
the inventories that are never cached. One test runs the real ansible-inventory; the others
count calls of the parse function."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from rocmprov.inventory import cache as inventory_cache
from rocmprov.inventory import hosts as inventory
from rocmprov.inventory.cache import cached_inventory

INI = "[gpu]\nn1 ansible_host=10.0.0.1 ansible_user=admin\nn2 ansible_host=10.0.0.2\n"


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv("ROCMPROV_CACHE_DIR", raising=False)
    monkeypatch.delenv("ROCMPROV_INVENTORY_CACHE", raising=False)
    monkeypatch.chdir(tmp_path)
    return tmp_path / "xdg" / "rocmprov"


class Counter:
    def __init__(self, answer: dict | None = None) -> None:
        self.calls = 0
        self.answer = answer or {"all": {"children": ["gpu"]}, "gpu": {"hosts": ["n1"]}}

    def __call__(self) -> dict:
        self.calls += 1
        return json.loads(json.dumps(self.answer))


def _inv(tmp_path: Path, text: str = INI) -> Path:
    path = tmp_path / "inv" / "hosts.ini"
    path.parent.mkdir(exist_ok=True)
    path.write_text(text)
    return path


def _bump(path: Path, text: str | None = None) -> None:
    """Change the file's mtime (and content when given) for sure, whatever the clock's grain."""
    st = path.stat()
    if text is not None:
        path.write_text(text)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))


def test_hit_then_miss_on_mtime_change(cache: Path, tmp_path: Path) -> None:
    inv = _inv(tmp_path)
    parse = Counter()
    first = cached_inventory(str(inv), None, "/nonexistent/tool", parse)
    second = cached_inventory(str(inv), None, "/nonexistent/tool", parse)
    assert parse.calls == 1 and first == second == parse.answer
    _bump(inv)  # same bytes, new mtime: a miss
    cached_inventory(str(inv), None, "/nonexistent/tool", parse)
    assert parse.calls == 2
    cached_inventory(str(inv), None, "/nonexistent/tool", parse)
    assert parse.calls == 2


def test_group_vars_and_host_vars_count(cache: Path, tmp_path: Path) -> None:
    inv = _inv(tmp_path)
    parse = Counter()
    cached_inventory(str(inv), None, "t", parse)
    (inv.parent / "host_vars").mkdir()
    new = inv.parent / "host_vars" / "n1.yml"
    new.write_text("rocmprov_gpu_user: alice\n")
    cached_inventory(str(inv), None, "t", parse)  # a new vars file: a miss
    assert parse.calls == 2
    cached_inventory(str(inv), None, "t", parse)
    assert parse.calls == 2
    _bump(new, "rocmprov_gpu_user: bob\n")
    cached_inventory(str(inv), None, "t", parse)
    assert parse.calls == 3


def test_key_holds_limit_and_ansible_env(
    cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    inv = _inv(tmp_path)
    parse = Counter()
    cached_inventory(str(inv), None, "t", parse)
    cached_inventory(str(inv), "gpu", "t", parse)
    assert parse.calls == 2
    monkeypatch.setenv("ANSIBLE_INVENTORY_ENABLED", "ini")
    cached_inventory(str(inv), "gpu", "t", parse)
    assert parse.calls == 3


@pytest.mark.parametrize("garbage", [b"", b"{not json", b"[]", b'{"schema": "other"}', b"\xff" * 9])
def test_corrupt_entry_is_a_miss_and_is_replaced(
    cache: Path, tmp_path: Path, garbage: bytes
) -> None:
    inv = _inv(tmp_path)
    parse = Counter()
    cached_inventory(str(inv), None, "t", parse)
    (entry,) = cache.iterdir()
    entry.write_bytes(garbage)
    assert cached_inventory(str(inv), None, "t", parse) == parse.answer
    assert parse.calls == 2
    assert cached_inventory(str(inv), None, "t", parse) == parse.answer  # rewritten: a hit
    assert parse.calls == 2


def test_tampered_data_with_a_valid_shape_but_another_stamp_is_a_miss(
    cache: Path, tmp_path: Path
) -> None:
    inv = _inv(tmp_path)
    parse = Counter()
    cached_inventory(str(inv), None, "t", parse)
    (entry,) = cache.iterdir()
    doc = json.loads(entry.read_text())
    doc["stamp"][0][1] += 1
    doc["data"] = {"all": {"hosts": ["evil"]}}
    entry.write_text(json.dumps(doc))
    assert cached_inventory(str(inv), None, "t", parse) == parse.answer
    assert parse.calls == 2


def test_modes_and_no_symlink_followed(cache: Path, tmp_path: Path) -> None:
    inv = _inv(tmp_path)
    cached_inventory(str(inv), None, "t", Counter())
    assert stat.S_IMODE(cache.stat().st_mode) == 0o700
    (entry,) = cache.iterdir()
    assert stat.S_IMODE(entry.stat().st_mode) == 0o600
    # an entry that is a link to elsewhere is never read
    target = tmp_path / "elsewhere.json"
    target.write_text(entry.read_text())
    entry.unlink()
    entry.symlink_to(target)
    parse = Counter()
    cached_inventory(str(inv), None, "t", parse)
    assert parse.calls == 1
    # a cache directory that is a symbolic link is refused: parsed every time, nothing written
    other = tmp_path / "other"
    other.mkdir(mode=0o700)
    link = tmp_path / "xdg2" / "rocmprov"
    link.parent.mkdir()
    link.symlink_to(other)
    os.environ["XDG_CACHE_HOME"] = str(link.parent)
    parse = Counter()
    cached_inventory(str(inv), None, "t", parse)
    cached_inventory(str(inv), None, "t", parse)
    assert parse.calls == 2 and not list(other.iterdir())


def test_open_cache_dir_refused(cache: Path, tmp_path: Path) -> None:
    inv = _inv(tmp_path)
    parse = Counter()
    cached_inventory(str(inv), None, "t", parse)
    cache.chmod(0o755)
    cached_inventory(str(inv), None, "t", parse)
    assert parse.calls == 2  # not read from a directory others can list


@pytest.mark.parametrize(
    "kind",
    ["list", "script", "plugin", "vault-file", "vault-inline", "disabled"],
)
def test_never_cached(
    cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    inv = _inv(tmp_path)
    source = str(inv)
    if kind == "list":
        source = "n1,n2,"
    elif kind == "script":
        inv.write_text("#!/bin/sh\necho '{}'\n")
        inv.chmod(0o755)
    elif kind == "plugin":
        inv = inv.with_name("aws_ec2.yml")
        inv.write_text("plugin: amazon.aws.aws_ec2\nregions: [us-east-1]\n")
        source = str(inv)
    elif kind == "vault-file":
        (inv.parent / "group_vars").mkdir()
        (inv.parent / "group_vars" / "all.yml").write_text("$ANSIBLE_VAULT;1.1;AES256\n3031\n")
    elif kind == "vault-inline":
        (inv.parent / "group_vars").mkdir()
        (inv.parent / "group_vars" / "all.yml").write_text(
            "pw: !vault |\n  $ANSIBLE_VAULT;1.1;AES256\n  3031\n"
        )
    elif kind == "disabled":
        monkeypatch.setenv("ROCMPROV_INVENTORY_CACHE", "0")
    parse = Counter()
    cached_inventory(source, None, "t", parse)
    cached_inventory(source, None, "t", parse)
    assert parse.calls == 2
    assert not cache.exists() or not list(cache.iterdir())


def test_inventory_directory(cache: Path, tmp_path: Path) -> None:
    top = tmp_path / "invdir"
    (top / "group_vars").mkdir(parents=True)
    (top / "a.ini").write_text(INI)
    (top / "group_vars" / "gpu.yml").write_text("x: 1\n")
    parse = Counter()
    cached_inventory(str(top), None, "t", parse)
    cached_inventory(str(top), None, "t", parse)
    assert parse.calls == 1
    (top / "b.ini").write_text("[more]\nn3\n")
    cached_inventory(str(top), None, "t", parse)
    assert parse.calls == 2


def test_load_inventory_uses_the_cache_with_real_ansible(
    cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    inv = _inv(tmp_path)
    calls = []
    real = inventory._run_ansible_inventory

    def counted(*args: object, **kw: object) -> dict:
        calls.append(args)
        return real(*args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(inventory, "_run_ansible_inventory", counted)
    first = inventory.load_inventory(inv)
    assert [h.address for h in first] == ["10.0.0.1", "10.0.0.2"]
    assert first[0].user == "admin"
    second = inventory.load_inventory(inv)
    assert second == first and len(calls) == 1
    _bump(inv, INI.replace("10.0.0.2", "10.0.0.9"))
    third = inventory.load_inventory(inv)
    assert [h.address for h in third] == ["10.0.0.1", "10.0.0.9"] and len(calls) == 2
    assert inventory_cache.cache_dir() == cache


def test_a_symlinked_vars_directory_is_followed(cache: Path, tmp_path: Path) -> None:
    """Ansible reads group_vars/<group>/ through a symbolic link to a directory: a change (or
    Vault data) there must be seen, as for a plain directory."""
    inv = _inv(tmp_path)
    shared = tmp_path / "shared-vars"
    shared.mkdir()
    vars_file = shared / "main.yml"
    vars_file.write_text("rocmprov_gpu_user: alice\n")
    (inv.parent / "group_vars").mkdir()
    (inv.parent / "group_vars" / "gpu").symlink_to(shared, target_is_directory=True)
    (inv.parent / "group_vars" / "loop").symlink_to(inv.parent / "group_vars")  # no endless walk
    parse = Counter()
    cached_inventory(str(inv), None, "t", parse)
    cached_inventory(str(inv), None, "t", parse)
    assert parse.calls == 1
    _bump(vars_file, "rocmprov_gpu_user: bob\n")
    cached_inventory(str(inv), None, "t", parse)
    assert parse.calls == 2
    (shared / "secret.yml").write_text("$ANSIBLE_VAULT;1.1;AES256\n6162\n")
    for _ in range(2):
        cached_inventory(str(inv), None, "t", parse)
    assert parse.calls == 4  # Vault data behind the link: never cached


def test_limit_from_a_file_is_part_of_the_stamp(cache: Path, tmp_path: Path) -> None:
    """`--limit @file` (Ansible's retry-file form) names hosts in a file: when the file
    changes, the cached answer for the old host list is stale."""
    inv = _inv(tmp_path)
    retry = tmp_path / "site.retry"
    retry.write_text("n1\n")
    parse = Counter()
    for _ in range(2):
        cached_inventory(str(inv), "@site.retry", "t", parse)
    assert parse.calls == 1
    _bump(retry, "n2\n")
    cached_inventory(str(inv), "@site.retry", "t", parse)
    assert parse.calls == 2
    cached_inventory(str(inv), "gpu:@site.retry", "t", parse)  # one pattern of several
    _bump(retry, "n1\n")
    cached_inventory(str(inv), "gpu:@site.retry", "t", parse)
    assert parse.calls == 4


def test_a_cache_that_cannot_be_keyed_is_only_skipped(
    cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The cache is an optimisation: a working directory that was removed (os.getcwd fails)
    or no home directory to find (no HOME, a uid without a passwd entry, as in some
    containers) must give ansible-inventory's answer, not a traceback."""
    import pwd

    inv = _inv(tmp_path)
    gone = tmp_path / "gone"
    gone.mkdir()
    monkeypatch.chdir(gone)
    gone.rmdir()
    parse = Counter()
    assert cached_inventory(str(inv), None, "t", parse) == parse.answer
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("HOME", raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)

    def no_entry(uid: int) -> None:
        raise KeyError(uid)

    monkeypatch.setattr(pwd, "getpwuid", no_entry)
    assert cached_inventory(str(inv), None, "t", parse) == parse.answer
    assert parse.calls == 2


@pytest.mark.parametrize("var", ["ansible_password", "ansible_become_password", "ansible_ssh_pass"])
def test_plain_text_connection_secrets_are_not_written(
    cache: Path, tmp_path: Path, var: str
) -> None:
    """A password set in plain text in the inventory must not be copied into the cache (a
    second copy that outlives the inventory file and its permissions)."""
    inv = _inv(tmp_path)
    answer = {"_meta": {"hostvars": {"n1": {var: "s3cret-xyz"}}}, "all": {"hosts": ["n1"]}}
    parse = Counter(answer)
    for _ in range(2):
        assert cached_inventory(str(inv), None, "t", parse) == answer
    assert parse.calls == 2
    written = [p.read_bytes() for p in cache.rglob("*") if p.is_file()] if cache.exists() else []
    assert not any(b"s3cret-xyz" in body for body in written)
    group = {"all": {"children": ["gpu"]}, "gpu": {"hosts": ["n1"], "vars": {var: "s3cret-xyz"}}}
    cached_inventory(str(inv), "gpu", "t", Counter(group))
    written = [p.read_bytes() for p in cache.rglob("*") if p.is_file()] if cache.exists() else []
    assert not any(b"s3cret-xyz" in body for body in written)
