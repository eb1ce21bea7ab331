"""rocmprov apply keeps secrets off command lines and out of run records; bad -e input is usage.

Real ansible-playbook runs against localhost (ansible_connection=local), no mocks: while a
playbook runs, every process's /proc/<pid>/cmdline and every file of the run record are read
and searched for the secret values (issue 13 of the hostile review).
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from rocmprov.provision.runner import ApplyOptions, parse_extravars, run_apply, scrub_run_dir

BECOME_PW = "Hunter2-become-6f1c0a"
NESTED_TOKEN = "nested-tok-93b7e2"
ENV_AWS = "aws-env-secret-5d41a9"
ENV_GH = "ghp_envtoken_77aa31"


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def project(tmp: Path, tasks: str) -> Path:
    """A playbook directory like the packaged one (site.yml + ansible.cfg) running `tasks`."""
    proj = tmp / "proj"
    proj.mkdir()
    (proj / "ansible.cfg").write_text("[defaults]\ninterpreter_python = auto_silent\n")
    (proj / "site.yml").write_text(
        "- name: test play\n  hosts: all\n  gather_facts: false\n  tasks:\n" + tasks
    )
    return proj


def local_inventory(tmp: Path) -> Path:
    inv = tmp / "local.ini"
    inv.write_text(
        f"localhost ansible_connection=local ansible_python_interpreter={sys.executable}\n"
    )
    return inv


def secrets_file(tmp: Path, data: dict[str, object]) -> Path:
    path = tmp / "secrets.yml"
    path.write_text(json.dumps(data))  # JSON is YAML
    return path


def files_under(root: Path) -> Iterator[Path]:
    for dirpath, _dirs, names in os.walk(root):
        for name in names:
            yield Path(dirpath) / name


def read_bytes(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError:  # renamed or removed between the walk and the read
        return b""


@dataclass
class Watcher:
    """Polls, while a run goes on, all processes' argv and the run record's files."""

    secrets: tuple[str, ...]
    state_dir: Path
    marker: str  # a path that only this test's ansible-playbook has on its command line
    stop: threading.Event = field(default_factory=threading.Event)
    playbook_argv: list[list[str]] = field(default_factory=list)
    playbook_environ: list[bytes] = field(default_factory=list)
    leaks: list[str] = field(default_factory=list)
    polls: int = 0

    def poll_once(self) -> None:
        needles = [s.encode() for s in self.secrets]
        for proc in Path("/proc").iterdir():
            if not proc.name.isdigit():
                continue
            raw = read_bytes(proc / "cmdline")
            for s in needles:
                if s in raw:
                    self.leaks.append(f"cmdline of pid {proc.name}: {raw[:300]!r}")
            argv = [a.decode(errors="replace") for a in raw.split(b"\0") if a]
            if any("ansible-playbook" in a for a in argv[:2]) and self.marker in argv:
                if argv not in self.playbook_argv:
                    self.playbook_argv.append(argv)
                env = read_bytes(proc / "environ")
                if env:
                    self.playbook_environ.append(env)
                    for s in needles:
                        if s in env:
                            self.leaks.append(f"environment of ansible-playbook {proc.name}")
        for path in files_under(self.state_dir):
            data = read_bytes(path)
            for s in needles:
                if s in data:
                    self.leaks.append(f"run record file {path} during the run")
        self.polls += 1

    def loop(self) -> None:
        while not self.stop.is_set():
            self.poll_once()
            time.sleep(0.05)

    def __enter__(self) -> Watcher:
        self.thread = threading.Thread(target=self.loop, daemon=True)
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join(timeout=30)


@pytest.fixture
def secret_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """The caller's environment holds credentials that ansible-playbook has no use for."""
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", ENV_AWS)
    monkeypatch.setenv("GITHUB_TOKEN", ENV_GH)
    monkeypatch.setenv("ROCMPROV_TEST_BENIGN", "benign-value")


def test_become_password_never_on_a_command_line_nor_in_the_record_while_running(
    tmp_path: Path, secret_env: None
) -> None:
    """The fault: -e @secrets.yml went on ansible-playbook's argv (and into artifacts/command)."""
    proj = project(
        tmp_path,
        "    - name: the secrets arrived\n"
        "      ansible.builtin.assert:\n"
        "        that:\n"
        f"          - (ansible_become_password | hash('sha256')) == '{_sha(BECOME_PW)}'\n"
        f"          - (rocmprov_mirror.auth[0].token | hash('sha256')) == '{_sha(NESTED_TOKEN)}'\n"
        "    - name: pause so that the run can be watched\n"
        "      ansible.builtin.command: sleep 4\n"
        "      changed_when: false\n",
    )
    inv = local_inventory(tmp_path)
    sec = secrets_file(
        tmp_path,
        {
            "ansible_become_password": BECOME_PW,
            "rocmprov_mirror": {"url": "https://mirror.example", "auth": [{"token": NESTED_TOKEN}]},
        },
    )
    state = tmp_path / "runs"
    state.mkdir()
    extravars = parse_extravars([f"@{sec}"])
    secrets = (BECOME_PW, NESTED_TOKEN, ENV_AWS, ENV_GH)
    with Watcher(secrets, state, str(inv)) as watch:
        res = run_apply(
            ApplyOptions(
                inventory=str(inv),
                extravars=extravars,
                playbook_dir=str(proj),
                state_dir=str(state),
            )
        )
    watch.poll_once()  # and once more after the end
    assert res.status == "successful", (res, (Path(res.run_dir) / "artifacts").rglob("stdout"))
    assert watch.playbook_argv, f"never saw ansible-playbook running ({watch.polls} polls)"
    assert not watch.leaks, watch.leaks
    # the variables went through a file, which is gone now with its private directory
    argv = watch.playbook_argv[0]
    files = [a[1:] for a in argv if a.startswith("@")]
    assert files, argv
    for f in files:
        assert not Path(f).exists() and not Path(f).parent.exists(), f
    # only an allow-listed environment reached ansible-playbook
    env = watch.playbook_environ[0].decode(errors="replace")
    assert "AWS_SECRET_ACCESS_KEY" not in env and "GITHUB_TOKEN" not in env
    assert "ROCMPROV_TEST_BENIGN" not in env and "PATH=" in env
    assert BECOME_PW not in res.command


def test_run_record_scrubbed_by_key_and_value_after_a_real_run(
    tmp_path: Path, secret_env: None
) -> None:
    """Nested secrets, secret-named variables and the caller's environment stay out of every
    file of the run record, even where a task printed them."""
    values = {
        "db_pw": "dbpw-1f9e77",
        "repo_pass": "repopass-a81c",
        "gpg_passphrase": "phrase-c0ffee",
        "deploy_key": "deploykey-0b3d",
        "hf_token": "hftok-55e1f0",
        "my_secret": "mysecret-d00d",
    }
    nested = {
        "servers": [{"name": "a", "password": "nestedpw-7e7e"}],
        "extra": {"api_key": "ak-3141"},
    }
    tasks = "".join(
        f"    - name: print {k}\n      ansible.builtin.debug:\n        msg: 'value {{{{ {k} }}}}'\n"
        for k in values
    ) + (
        "    - name: echo a nested one\n"
        "      ansible.builtin.command: echo {{ rocmprov_cfg.servers[0].password }}\n"
        "      changed_when: false\n"
    )
    proj = project(tmp_path, tasks)
    inv = local_inventory(tmp_path)
    extravars = {**values, "rocmprov_cfg": nested, "rocmprov_rocm_version": "6.4.1"}
    res = run_apply(
        ApplyOptions(
            inventory=str(inv),
            extravars=extravars,
            playbook_dir=str(proj),
            state_dir=str(tmp_path / "runs"),
        )
    )
    assert res.status == "successful", res
    run_dir = Path(res.run_dir)
    secrets = [*values.values(), "nestedpw-7e7e", "ak-3141", ENV_AWS, ENV_GH]
    record = list(files_under(run_dir))
    assert any(p.name == "command" for p in record) and any("job_events" in str(p) for p in record)
    for path in record:
        data = path.read_bytes()
        for s in secrets:
            assert s.encode() not in data, f"{s} in {path.relative_to(run_dir)}"
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, path
    for dirpath, _dirs, _names in os.walk(run_dir):
        assert stat.S_IMODE(os.stat(dirpath).st_mode) == 0o700, dirpath
    doc = json.loads((run_dir / "rocmprov-apply.json").read_text())
    assert doc["extravars"]["rocmprov_rocm_version"] == "6.4.1"  # not a secret: kept
    assert doc["extravars"]["rocmprov_cfg"]["servers"][0]["name"] == "a"
    command = json.loads((run_dir / "artifacts/run/command").read_text())
    assert "AWS_SECRET_ACCESS_KEY" not in command["env"] and "GITHUB_TOKEN" not in command["env"]
    assert "ROCMPROV_TEST_BENIGN" not in command["env"]
    # the printed values were replaced, the rest of the output is still there
    stdout = (run_dir / "artifacts/run/stdout").read_text()
    assert "value ********" in stdout and "print db_pw" in stdout


def test_scrub_run_dir_nested_values_and_secret_names(tmp_path: Path) -> None:
    extravars = {
        "x_pw": "pw-abc123",
        "ssh_pass": "pass-xyz789",
        "key_passphrase": "phrase-qwe",
        "signing_key": "sk-rty456",
        "vault": {"list": ["listed-secret-1", {"deep": "deep-secret-2"}]},
        "plain": {"inner_token": "tok-in-plain"},
        "rocmprov_rocm_version": "6.4.1",
    }
    secrets = ["pw-abc123", "pass-xyz789", "phrase-qwe", "sk-rty456", "listed-secret-1"]
    secrets += ["deep-secret-2", "tok-in-plain"]
    art = tmp_path / "artifacts/run"
    (art / "job_events").mkdir(parents=True)
    ev = {"event_data": {"res": {"stdout_lines": ["a", "got pw-abc123 and tok-in-plain"]}}}
    (art / "job_events/1-x.json").write_text(json.dumps(ev))
    (art / "stdout").write_text('msg: "deep-secret-2" then sk-rty456\nok\n')
    (art / "binary").write_bytes(b"\xff\xfe phrase-qwe \x00")
    (tmp_path / "rocmprov-apply.json").write_text(json.dumps({"extravars": extravars}))
    scrub_run_dir(tmp_path, extravars)
    for path in files_under(tmp_path):
        for s in secrets:
            assert s.encode() not in path.read_bytes(), (s, path)
    doc = json.loads((tmp_path / "rocmprov-apply.json").read_text())
    assert doc["extravars"]["rocmprov_rocm_version"] == "6.4.1"
    assert doc["extravars"]["plain"]["inner_token"] == "********"
    ev2 = json.loads((art / "job_events/1-x.json").read_text())
    assert ev2["event_data"]["res"]["stdout_lines"][0] == "a"  # still valid JSON, rest kept


@pytest.mark.parametrize(
    "name",
    [
        "ansible_become_password",
        "db_pw",
        "ssh_pass",
        "gpg_passphrase",
        "deploy_key",
        "hf_token",
        "client_secret",
        "aws_credentials",
        "api_key",
        "ANSIBLE_VAULT_PASSWORD",
    ],
)
def test_secret_names(name: str) -> None:
    from rocmprov.inventory.secrets import is_secret_name

    assert is_secret_name(name)


@pytest.mark.parametrize(
    "name", ["rocmprov_rocm_version", "rocmprov_repo_key_url", "rocmprov_gpu_users", "keyboard"]
)
def test_not_secret_names(name: str) -> None:
    from rocmprov.inventory.secrets import is_secret_name

    assert not is_secret_name(name)


def test_private_vars_file_modes_and_removal_even_on_ctrl_c(tmp_path: Path) -> None:
    from rocmprov.provision.extravars import private_vars_file

    seen: list[Path] = []
    with pytest.raises(KeyboardInterrupt), private_vars_file({"a_pw": BECOME_PW}) as path:
        seen.append(path)
        st = os.lstat(path)
        assert stat.S_ISREG(st.st_mode) and stat.S_IMODE(st.st_mode) == 0o600
        assert st.st_uid == os.getuid()
        dst = os.lstat(path.parent)
        assert stat.S_ISDIR(dst.st_mode) and stat.S_IMODE(dst.st_mode) == 0o700
        assert json.loads(path.read_text()) == {"a_pw": BECOME_PW}
        raise KeyboardInterrupt
    assert seen and not seen[0].exists() and not seen[0].parent.exists()


def test_ctrl_c_during_a_run_removes_the_vars_file(tmp_path: Path) -> None:
    """A real run interrupted with SIGINT: exit status canceled, the private file is gone."""
    proj = project(
        tmp_path,
        "    - name: long pause\n"
        "      ansible.builtin.command: sleep 60\n"
        "      changed_when: false\n",
    )
    inv = local_inventory(tmp_path)
    script = (
        "import json, sys\n"
        "from rocmprov.provision.runner import ApplyOptions, run_apply\n"
        f"r = run_apply(ApplyOptions(inventory={str(inv)!r}, playbook_dir={str(proj)!r},"
        f" state_dir={str(tmp_path / 'runs')!r}, extravars={{'a_pw': {BECOME_PW!r}}}))\n"
        "print(json.dumps({'status': r.status, 'exit': int(r.exit_code)}))\n"
    )
    (tmp_path / "child.py").write_text(script)  # not `-c`: the secret is in the script
    child = subprocess.Popen(
        [sys.executable, str(tmp_path / "child.py")],
        stdout=subprocess.PIPE,
        text=True,
        cwd=Path.cwd(),
        env={**os.environ, "PYTHONPATH": str(Path.cwd())},
    )
    watch = Watcher((BECOME_PW,), tmp_path / "runs", str(inv))
    deadline = time.monotonic() + 120
    while not watch.playbook_argv and time.monotonic() < deadline and child.poll() is None:
        watch.poll_once()
        time.sleep(0.1)
    assert watch.playbook_argv, "ansible-playbook never started"
    time.sleep(2)
    child.send_signal(signal.SIGINT)
    out, _ = child.communicate(timeout=120)
    assert json.loads(out.strip().splitlines()[-1]) == {"status": "canceled", "exit": 130}
    files = [a[1:] for a in watch.playbook_argv[0] if a.startswith("@")]
    assert files and all(not Path(f).parent.exists() for f in files)
    assert not watch.leaks, watch.leaks


# ------------------------------------------------------------------ bad -e input: exit 64


def cli(*args: str, state: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "rocmprov", "apply", *args],
        capture_output=True,
        text=True,
        timeout=60,  # /dev/zero or a FIFO must not hang
        env={**os.environ, "XDG_STATE_HOME": str(state)},
        check=False,
    )


def _bad_inputs(tmp: Path) -> dict[str, str]:
    (tmp / "dir").mkdir()
    (tmp / "bad.yml").write_text("a: [1, 2\nb: {\n")
    (tmp / "list.yml").write_text("- a\n- b\n")
    (tmp / "scalar.yml").write_text("just text\n")
    (tmp / "empty.yml").write_text("")
    (tmp / "big.yml").write_text("a: '" + "x" * (1024 * 1024 + 10) + "'\n")
    (tmp / "latin1.yml").write_bytes(b"a: caf\xe9\n")
    (tmp / "badname.yml").write_text("'1bad': x\n")
    (tmp / "python.yml").write_text("a: !!python/object/apply:os.system ['true']\n")
    lol = ["a: &a ['x','x','x','x','x','x','x','x','x','x']"]
    for i in range(1, 9):
        prev = "a" if i == 1 else f"l{i - 1}"
        lol.append(f"l{i}: &l{i} [" + ",".join([f"*{prev}"] * 10) + "]")
    (tmp / "lol.yml").write_text("\n".join(lol) + "\n")
    (tmp / "deep.yml").write_text("a: " + "[" * 5000 + "]" * 5000 + "\n")
    os.mkfifo(tmp / "fifo")
    return {
        "binary": "@/bin/ls",
        "missing": f"@{tmp / 'missing.yml'}",
        "directory": f"@{tmp / 'dir'}/",
        "dev_zero": "@/dev/zero",
        "fifo": f"@{tmp / 'fifo'}",
        "too_big": f"@{tmp / 'big.yml'}",
        "invalid_yaml": f"@{tmp / 'bad.yml'}",
        "yaml_list": f"@{tmp / 'list.yml'}",
        "yaml_scalar": f"@{tmp / 'scalar.yml'}",
        "empty": f"@{tmp / 'empty.yml'}",
        "not_utf8": f"@{tmp / 'latin1.yml'}",
        "bad_name": f"@{tmp / 'badname.yml'}",
        "python_tag": f"@{tmp / 'python.yml'}",
        "billion_laughs": f"@{tmp / 'lol.yml'}",
        "deep_nesting": f"@{tmp / 'deep.yml'}",
        "json_list": "[1, 2]",
    }


BAD_KINDS = [
    "binary",
    "missing",
    "directory",
    "dev_zero",
    "fifo",
    "too_big",
    "invalid_yaml",
    "yaml_list",
    "yaml_scalar",
    "empty",
    "not_utf8",
    "bad_name",
    "python_tag",
    "billion_laughs",
    "deep_nesting",
    "json_list",
]


@pytest.mark.parametrize("kind", BAD_KINDS)
def test_bad_extra_vars_file_is_one_line_and_64(tmp_path: Path, kind: str) -> None:
    arg = _bad_inputs(tmp_path)[kind]
    inv = local_inventory(tmp_path)
    state = tmp_path / "state"
    cp = cli(str(inv), "-e", arg, state=state)
    assert cp.returncode == 64, (cp.returncode, cp.stderr)
    lines = cp.stderr.strip().splitlines()
    assert len(lines) == 1, cp.stderr
    assert lines[0].startswith("rocmprov: -e ") and "internal error" not in lines[0]
    assert not (state / "rocmprov").exists(), "nothing may be run or recorded"
    cpj = cli(str(inv), "-e", arg, "--format", "json", state=state)
    doc = json.loads(cpj.stdout)
    assert cpj.returncode == 64 and doc["exit_code"] == 64 and doc["status"] == "error"


def test_inline_secret_gets_a_warning(tmp_path: Path) -> None:
    """-e ansible_become_password=... is on rocmprov's own argv, visible in ps: say so."""
    from rocmprov.provision.extravars import inline_secret_names

    assert inline_secret_names(["ansible_become_password=x", "a=b", "@f.yml"]) == [
        "ansible_become_password"
    ]
    assert inline_secret_names(['{"db_pw": "x", "b": 1}']) == ["db_pw"]
