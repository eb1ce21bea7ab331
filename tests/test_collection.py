"""The Ansible collection rocmprov.rocm (issue 17): built from playbooks/roles by
collection/build.py, built and installed by ansible-galaxy from its tarball into a fresh
collections path, documented for ansible-doc, its FQCN playbooks and filter resolved, and its
modules run for real on this machine (connection local) against this checkout's rocmprov.

The lab test (FQCN playbook on real hosts) is tests/test_collection_lab.py; ansible-test sanity
and ansible-builder are tests/test_collection_sanity.py.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import yaml

REPO = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
FQ = "rocmprov.rocm"
# The command the modules run on a node: here, this checkout's rocmprov.
# Modules on localhost run under this venv's python (pyenv shims would pick another).
PY = ["-e", f"ansible_python_interpreter={sys.executable}"]
CHECKOUT_ROCMPROV = ["env", f"PYTHONPATH={REPO}", sys.executable, "-m", "rocmprov"]


def load_builder() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "rocmprov_collection_build", REPO / "collection/build.py"
    )
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # dataclasses look their module up
    spec.loader.exec_module(mod)
    return mod


builder = load_builder()


def run(
    argv: list[str],
    *,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
    timeout: float = 300,
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        argv,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        env={**os.environ, **(env or {})},
        cwd=cwd,
    )


def ansible_env(collections: Path, **extra: str) -> dict[str, str]:
    """Only the given collections path; no roles path, no ansible.cfg of the checkout."""
    return {
        "ANSIBLE_COLLECTIONS_PATH": str(collections),
        "ANSIBLE_ROLES_PATH": str(collections / "no-roles"),
        "ANSIBLE_CONFIG": "",
        "ANSIBLE_NOCOLOR": "1",
        "ANSIBLE_HOST_KEY_CHECKING": "True",
        **extra,
    }


def build_tree(root: Path) -> Path:
    """The collection tree at root/ansible_collections/rocmprov/rocm (ansible-test's layout)."""
    dest = root / "ansible_collections" / "rocmprov" / "rocm"
    builder.build(dest)
    return dest


@pytest.fixture(scope="session")
def tarball(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tree = build_tree(tmp_path_factory.mktemp("tree"))
    return builder.galaxy_build(tree, tmp_path_factory.mktemp("dist"))


@pytest.fixture(scope="session")
def installed(tarball: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh collections path holding only rocmprov.rocm, installed from the tarball."""
    path = tmp_path_factory.mktemp("collections")
    cp = run([str(BIN / "ansible-galaxy"), "collection", "install", str(tarball), "-p", str(path)])
    assert cp.returncode == 0, cp.stdout + cp.stderr
    assert (path / "ansible_collections/rocmprov/rocm/MANIFEST.json").is_file()
    return path


def test_qualify_spells_roles_and_the_filter_as_fqcns() -> None:
    text = (
        "dependencies:\n  - role: rocmprov_release\n"
        "roles:\n    - role: rocmprov_repo  # the repo\n"
        "      tags: [rocmprov_repo]\n"
        'x: "{{ t | rocmprov_release(v, ansible_facts) }}"\n'
        'y: "{{ t |rocmprov_release }}"\n'
        "z: rocmprov_release_version\n"
    )
    out = builder.qualify(text)
    assert "  - role: rocmprov.rocm.rocmprov_release\n" in out
    assert "    - role: rocmprov.rocm.rocmprov_repo  # the repo\n" in out
    assert "tags: [rocmprov_repo]" in out  # tags and variables are not roles
    assert "t | rocmprov.rocm.rocmprov_release(v, ansible_facts)" in out
    assert "t |rocmprov.rocm.rocmprov_release }}" in out
    assert "z: rocmprov_release_version" in out
    assert builder.unqualified(out) == []
    assert builder.qualify(out) == out  # idempotent: FQCNs are left alone


def test_unqualified_finds_what_the_rewrite_cannot_fix() -> None:
    assert builder.unqualified("- { role: rocmprov_repo, tags: [x] }") == ["role: rocmprov_repo"]
    assert builder.unqualified("{{ a | rocmprov_release }}") == ["| rocmprov_release"]
    assert builder.unqualified("- role: rocmprov.rocm.rocmprov_repo") == []


def test_a_role_reference_the_builder_cannot_qualify_stops_the_build(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    shutil.copytree(REPO / "collection", repo / "collection")
    shutil.copytree(
        REPO / "playbooks", repo / "playbooks", ignore=shutil.ignore_patterns("__pycache__")
    )
    (repo / "rocmprov").mkdir()
    shutil.copy2(REPO / "rocmprov/__init__.py", repo / "rocmprov/__init__.py")
    shutil.copy2(REPO / "LICENSE", repo / "LICENSE")
    meta = repo / "playbooks/roles/rocmprov_torch/meta/main.yml"
    meta.write_text(meta.read_text() + "# - { role: rocmprov_release }\n")
    with pytest.raises(builder.SourceError, match=r"rocmprov_torch/meta/main\.yml"):
        builder.build(tmp_path / "out", repo=repo)


def test_build_cli_exit_codes(tmp_path: Path) -> None:
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy/file").write_text("x")
    cp = run([sys.executable, str(REPO / "collection/build.py"), str(tmp_path / "busy")])
    assert cp.returncode == 64 and "not empty" in cp.stderr and cp.stdout == ""
    cp = run([sys.executable, str(REPO / "collection/build.py"), str(tmp_path / "c")])
    assert cp.returncode == 0, cp.stderr
    assert "rocmprov.rocm" in cp.stdout and (tmp_path / "c/galaxy.yml").is_file()


def test_the_built_roles_are_the_playbook_roles_with_fqcns(tmp_path: Path) -> None:
    built = builder.build(tmp_path / "c")
    source = REPO / "playbooks/roles"
    names = sorted(p.name for p in source.iterdir() if (p / "tasks").is_dir())
    assert list(built.roles) == names
    assert sorted(p.name for p in (built.root / "roles").iterdir()) == sorted(
        [*names, "rocmprov_node"]
    )
    for role in names:
        src_files = sorted(
            p.relative_to(source / role)
            for p in (source / role).rglob("*")
            if p.is_file() and "__pycache__" not in p.parts
        )
        dst_files = sorted(
            p.relative_to(built.root / "roles" / role)
            for p in (built.root / "roles" / role).rglob("*")
            if p.is_file()
        )
        assert src_files == dst_files, role
        for rel in src_files:
            original = (source / role / rel).read_text()
            copy = (built.root / "roles" / role / rel).read_text()
            # identical but for the qualified references
            assert copy == builder.qualify(original), f"{role}/{rel}"
            assert builder.unqualified(copy) == [], f"{role}/{rel}"
    # the role dependencies really were rewritten (the table-reading role first)
    meta = yaml.safe_load((built.root / "roles/rocmprov_repo/meta/main.yml").read_text())
    assert meta["dependencies"] == [{"role": "rocmprov.rocm.rocmprov_release"}]
    assert "roles/rocmprov_release/tasks/main.yml" in built.rewritten


def test_site_playbook_runs_the_same_roles_with_the_same_tags(tmp_path: Path) -> None:
    built = builder.build(tmp_path / "c")
    ours = yaml.safe_load((REPO / "playbooks/site.yml").read_text())
    theirs = yaml.safe_load((built.root / "playbooks/site.yml").read_text())
    assert len(ours) == len(theirs) == 1
    for key in ("hosts", "become", "gather_facts"):
        assert ours[0][key] == theirs[0][key]
    assert [f"{FQ}.{r['role']}" for r in ours[0]["roles"]] == [
        r["role"] for r in theirs[0]["roles"]
    ]
    assert [r.get("tags") for r in ours[0]["roles"]] == [r.get("tags") for r in theirs[0]["roles"]]


def test_data_filter_license_and_version_come_from_the_checkout(tmp_path: Path) -> None:
    import rocmprov

    built = builder.build(tmp_path / "c")
    pairs = {
        "playbooks/data/rocm_releases.yml": "data/rocm_releases.yml",
        "playbooks/filter_plugins/rocmprov_release.py": "plugins/filter/rocmprov_release.py",
        "LICENSE": "LICENSE",
    }
    for src, dst in pairs.items():
        assert (REPO / src).read_bytes() == (built.root / dst).read_bytes(), dst
    galaxy = yaml.safe_load((built.root / "galaxy.yml").read_text())
    assert (galaxy["namespace"], galaxy["name"]) == ("rocmprov", "rocm")
    assert galaxy["version"] == built.version == rocmprov.__version__
    runtime = yaml.safe_load((built.root / "meta/runtime.yml").read_text())
    assert runtime["requires_ansible"].startswith(">=2.15")
    assert not (built.root / "build.py").exists()


def test_tarball_holds_the_collection_and_nothing_of_the_build(tarball: Path) -> None:
    with tarfile.open(tarball) as tar:
        names = set(tar.getnames())
    for want in (
        "MANIFEST.json",
        "FILES.json",
        "meta/runtime.yml",
        "plugins/modules/audit.py",
        "plugins/modules/facts.py",
        "plugins/module_utils/rocmprov_cli.py",
        "plugins/filter/rocmprov_release.py",
        "plugins/filter/rocmprov_release.yml",
        "data/rocm_releases.yml",
        "playbooks/site.yml",
        "playbooks/audit.yml",
        "playbooks/node.yml",
        "roles/rocmprov_release/tasks/main.yml",
        "roles/rocmprov_node/tasks/main.yml",
    ):
        assert want in names, want
    assert not [n for n in names if n.endswith((".pyc", "build.py")) or "__pycache__" in n]
    with tarfile.open(tarball) as tar:
        manifest = json.load(tar.extractfile("MANIFEST.json"))  # type: ignore[arg-type]
    assert manifest["collection_info"]["name"] == "rocm"


def test_ansible_doc_documents_the_modules_roles_and_filter(installed: Path) -> None:
    env = ansible_env(installed)
    doc = run([str(BIN / "ansible-doc"), f"{FQ}.audit"], env=env)
    assert doc.returncode == 0, doc.stderr
    assert "fail_on_critical" in doc.stdout and "rocmprov.audit/1" in doc.stdout
    js = run([str(BIN / "ansible-doc"), "--json", f"{FQ}.audit", f"{FQ}.facts"], env=env)
    assert js.returncode == 0, js.stderr
    docs = json.loads(js.stdout)
    audit = docs[f"{FQ}.audit"]["doc"]
    assert audit["options"]["fail_on_critical"]["default"] is False
    assert audit["options"]["profile"]["choices"] == ["full", "quick"]
    assert audit["attributes"]["check_mode"]["support"] == "full"
    assert {"findings", "critical", "severity", "audit"} <= set(docs[f"{FQ}.audit"]["return"])
    assert "ansible_facts" in docs[f"{FQ}.facts"]["return"]
    roles = run([str(BIN / "ansible-doc"), "-t", "role", "-l", FQ], env=env)
    assert roles.returncode == 0, roles.stderr
    listed = {ln.rstrip(":") for ln in roles.stdout.splitlines() if ln.startswith(FQ)}
    expected = {
        f"{FQ}.{p.name}" for p in (REPO / "playbooks/roles").iterdir() if (p / "tasks").is_dir()
    }
    assert expected | {f"{FQ}.rocmprov_node"} == listed
    flt = run([str(BIN / "ansible-doc"), "-t", "filter", f"{FQ}.rocmprov_release"], env=env)
    assert flt.returncode == 0 and "release table" in flt.stdout, flt.stderr


def test_collection_playbooks_pass_ansible_lint_production(
    installed: Path, tmp_path: Path
) -> None:
    """The FQCN playbooks (collection/playbooks, collection/awx) with the collection installed
    from its tarball: the repository's lint excludes collection/ because they cannot parse
    without it."""
    for part in ("playbooks", "awx"):
        shutil.copytree(REPO / "collection" / part, tmp_path / part)
    (tmp_path / ".ansible-lint").write_text("profile: production\nstrict: true\n")
    cp = run(
        [str(BIN / "ansible-lint"), "--profile", "production", "--strict", "--nocolor",
         "playbooks", "awx"],
        env={**ansible_env(installed), "PATH": f"{BIN}:{os.environ.get('PATH', '')}"},
        cwd=tmp_path,
        timeout=600,
    )  # fmt: skip
    assert cp.returncode == 0, cp.stdout[-4000:] + cp.stderr[-4000:]


def test_fqcn_playbooks_parse_from_the_installed_collection(
    installed: Path, tmp_path: Path
) -> None:
    """The collection's playbooks by FQCN, and the AWX project's files that import them."""
    inv = tmp_path / "inv.ini"
    inv.write_text("[lab]\nh1 ansible_host=192.0.2.1\n")
    awx = sorted((REPO / "collection/awx").glob("*.yml"))
    assert [p.stem for p in awx] == ["audit", "node", "site"]
    for book in [f"{FQ}.site", f"{FQ}.audit", f"{FQ}.node", *map(str, awx)]:
        cp = run(
            [str(BIN / "ansible-playbook"), "-i", str(inv), "--list-tasks", book],
            env=ansible_env(installed),
            cwd=tmp_path,
        )
        assert cp.returncode == 0, f"{book}: {cp.stdout[-1500:]} {cp.stderr[-1500:]}"
        assert "tasks:" in cp.stdout, book
        if book.endswith("site") or book.endswith("site.yml"):
            assert f"{FQ}.rocmprov_release : Pick the release for this host" in cp.stdout
    reqs = yaml.safe_load((REPO / "collection/awx/collections/requirements.yml").read_text())
    assert reqs["collections"][0]["name"] == FQ


def playbook(
    installed: Path,
    tmp_path: Path,
    tasks: list[dict[str, Any]],
    *args: str,
    env: dict[str, str] | None = None,
    gather: bool = False,
) -> dict[str, dict[str, Any]]:
    """Run tasks on localhost (connection local); task name -> its registered result. Each task
    registers a variable of its own name; a last task writes them all to a JSON file (the json
    callback lives in ansible.posix, which the fresh collections path does not have)."""
    n = len(list(tmp_path.glob("play-*.yml")))
    book, out = tmp_path / f"play-{n}.yml", tmp_path / f"results-{n}.json"
    names = [t["name"] for t in tasks]
    dump = "{{ {" + ", ".join(f"'{name}': {name}" for name in names) + "} | to_json }}"
    save = {
        "name": "save",
        "ansible.builtin.copy": {"content": dump, "dest": str(out), "mode": "0600"},
        "check_mode": False,
    }
    registered = [{**t, "register": t["name"]} for t in tasks]
    play = {
        "name": "t",
        "hosts": "localhost",
        "connection": "local",
        "gather_facts": gather,
        "tasks": [*registered, save],
    }
    book.write_text(yaml.safe_dump([play], sort_keys=False))
    full_env = ansible_env(installed, ANSIBLE_LOCALHOST_WARNING="False", **(env or {}))
    cp = run(
        [str(BIN / "ansible-playbook"), "-i", "localhost,", str(book), *PY, *args],
        env=full_env,
        cwd=tmp_path,
        timeout=600,
    )
    if not out.is_file():
        pytest.fail(
            f"playbook failed (rc {cp.returncode}): {cp.stdout[-2000:]} {cp.stderr[-1000:]}"
        )
    return json.loads(out.read_text())


def test_release_role_resolves_the_fqcn_filter_and_the_collection_data(
    installed: Path, tmp_path: Path
) -> None:
    table = yaml.safe_load((REPO / "playbooks/data/rocm_releases.yml").read_text())
    tasks = [
        {"name": "release", "ansible.builtin.include_role": {"name": f"{FQ}.rocmprov_release"}},
        {"name": "plan", "ansible.builtin.set_fact": {"plan": "{{ rocmprov_release_plan }}"}},
    ]
    res = playbook(installed, tmp_path, tasks, gather=True)
    plan = res["plan"]["ansible_facts"]["plan"]
    row = next(r for r in table["releases"] if str(r["version"]) == str(table["default"]))
    assert (plan["version"], plan["stream"]) == (str(row["version"]), row["stream"])


def audit_task(name: str, **params: Any) -> dict[str, Any]:
    return {
        "name": name,
        f"{FQ}.audit": {"executable": CHECKOUT_ROCMPROV, **params},
        "ignore_errors": True,
    }


def test_audit_and_facts_modules_run_rocmprov_on_the_host(installed: Path, tmp_path: Path) -> None:
    state = tmp_path / "state"
    env = {"ROCMPROV_STATE_DIR": str(state)}
    tasks = [
        audit_task("quick", profile="quick"),
        audit_task("gate", profile="quick", fail_on_critical=True),
        {"name": "facts", f"{FQ}.facts": {"executable": CHECKOUT_ROCMPROV, "profile": "quick"}},
        audit_task("missing", executable=["rocmprov-not-installed-here"]),
        audit_task("garbage", executable=["/bin/echo"]),
    ]
    res = playbook(installed, tmp_path, tasks, env=env)
    quick = res["quick"]
    assert not quick.get("failed"), quick
    assert quick["changed"] is False
    assert quick["audit"]["schema"] == "rocmprov.audit/1" and quick["audit"]["error"] is None
    checks = [f["check"] for f in quick["findings"]]
    assert "gpu.amd.present" in checks and "torch.rocm" in checks
    assert quick["critical"] == [f for f in quick["findings"] if f["severity"] == "critical"]
    assert (
        quick["exit_code"]
        == {"ok": 0, "skipped": 0, "warning": 1, "critical": 2, "unknown": 3}[quick["severity"]]
    )
    # the quick profile leaves torch out: SKIPPED, not UNKNOWN
    torch = next(f for f in quick["findings"] if f["check"] == "torch.rocm")
    assert torch["severity"] == "skipped"
    # the same checks as the CLI run directly
    cli = run(
        [*CHECKOUT_ROCMPROV, "audit", "--local", "--format", "json", "--profile", "quick"],
        env={"ROCMPROV_STATE_DIR": str(tmp_path / "cli-state")},
    )
    assert [f["check"] for f in json.loads(cli.stdout)["hosts"][0]["findings"]] == checks
    # fail_on_critical fails the task exactly when there is a CRITICAL finding
    gate = res["gate"]
    assert bool(gate.get("failed")) == bool(quick["critical"]), gate
    if quick["critical"]:
        assert gate["msg"].startswith("CRITICAL findings: ") and "gpu.amd.present" in gate["msg"]
    facts = res["facts"]["ansible_facts"]["rocmprov"]
    assert facts == quick["facts"]
    assert facts["kernel"] == os.uname().release
    assert res["missing"]["failed"] and "rocmprov.rocm.rocmprov_node" in res["missing"]["msg"]
    assert res["garbage"]["failed"] and "no rocmprov.audit/1 document" in res["garbage"]["msg"]
    assert (state / "dmesg-cursor.collection").is_file()  # the quick profile kept its cursor


def test_check_mode_leaves_the_quick_profiles_cursor_alone(installed: Path, tmp_path: Path) -> None:
    state = tmp_path / "state"
    env = {"ROCMPROV_STATE_DIR": str(state)}
    cursor = state / "dmesg-cursor.collection"
    playbook(installed, tmp_path, [audit_task("first", profile="quick")], env=env)
    before = cursor.stat()
    check = [audit_task("check", profile="quick")]
    res = playbook(installed, tmp_path, check, "--check", env=env)
    assert not res["check"].get("failed") and res["check"]["findings"], res["check"]
    after = cursor.stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
    assert not [p for p in state.iterdir() if p.name != "dmesg-cursor.collection"]
    # without --check the same task does replace it (so the assertion above can fail)
    playbook(installed, tmp_path, [audit_task("again", profile="quick")], env=env)
    again = cursor.stat()
    assert (again.st_ino, again.st_mtime_ns) != (before.st_ino, before.st_mtime_ns)


class _Failed(Exception):
    pass


class _FakeModule:
    """AnsibleModule's surface that module_utils/rocmprov_cli uses, with a canned command."""

    def __init__(self, rc: int, out: str, err: str) -> None:
        self.params = {
            "executable": ["/opt/rocmprov/venv/bin/rocmprov"],
            "profile": "full",
            "gpu_user": "",
            "python": "",
            "rocm_version": "",
            "timeout": 0,
        }
        self.check_mode = False
        self._answer = (rc, out, err)
        self.failed: dict[str, Any] = {}

    def get_bin_path(self, name: str, required: bool = False, opt_dirs: Any = None) -> None:
        return None

    def run_command(self, argv: list[str], environ_update: Any = None) -> tuple[int, str, str]:
        return self._answer

    def fail_json(self, **kwargs: Any) -> None:
        self.failed = kwargs
        raise _Failed(kwargs["msg"])


def test_module_failure_messages_are_one_line() -> None:
    """A rocmprov that dies with a traceback (several lines on stderr) or with an error
    document: the task's msg is one line, the last line that says what went wrong."""
    spec = importlib.util.spec_from_file_location(
        "rocmprov_cli_under_test", REPO / "collection/plugins/module_utils/rocmprov_cli.py"
    )
    assert spec and spec.loader
    cli = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(cli)
    trace = (
        "Traceback (most recent call last):\n"
        '  File "/opt/rocmprov/venv/bin/rocmprov", line 5, in <module>\n'
        "    from rocmprov.__main__ import main\n"
        "ModuleNotFoundError: No module named 'rocmprov'\n"
    )
    doc = json.dumps({"schema": "rocmprov.audit/1", "error": None, "hosts": []})
    for rc, out, err in ((1, "", trace), (64, doc, "warning: x\nrocmprov: bad --python\n\n")):
        module = _FakeModule(rc, out, err)
        with pytest.raises(_Failed):
            cli.run_audit(module)
        msg = module.failed["msg"]
        assert "\n" not in msg, msg
        assert msg.endswith(err.strip().splitlines()[-1]), msg
        assert f"exit {rc}" in msg
