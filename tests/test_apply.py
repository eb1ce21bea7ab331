"""rocmprov apply without the lab: usage errors, -e parsing, the run record, a real check run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from rocmprov.exitcodes import UsageError
from rocmprov.provision.runner import (
    ApplyOptions,
    EventCollector,
    failure_message,
    fresh_run_dir,
    parse_extravars,
    run_apply,
    scrub_run_dir,
)


def cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "rocmprov", "apply", *args],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, **(env or {})},
        check=False,
    )


def test_missing_inventory_is_usage_64_with_one_line() -> None:
    cp = cli("/nonexistent/inventory.ini")
    assert cp.returncode == 64
    assert cp.stderr.strip().count("\n") == 0 and "no such inventory" in cp.stderr


@pytest.mark.parametrize("bad", ["novalue", "bad key=1", "{not json", "@/nonexistent.yml"])
def test_bad_extra_vars_are_usage_64_and_json_error_document(tmp_path: Path, bad: str) -> None:
    inv = tmp_path / "inv.ini"
    inv.write_text("h1 ansible_host=192.0.2.1\n")
    cp = cli(str(inv), "-e", bad, "--format", "json", env={"XDG_STATE_HOME": str(tmp_path)})
    assert cp.returncode == 64, cp.stderr
    doc = json.loads(cp.stdout)
    assert doc["schema"] == "rocmprov.apply/1" and doc["exit_code"] == 64
    assert not (tmp_path / "rocmprov").exists(), "nothing may be run or recorded"


def test_limit_matching_nothing_is_usage(tmp_path: Path) -> None:
    inv = tmp_path / "inv.ini"
    inv.write_text("h1 ansible_host=192.0.2.1\n")
    cp = cli(str(inv), "--limit", "nothere")
    assert cp.returncode == 64 and "no hosts" in cp.stderr


def test_parse_extravars_types() -> None:
    v = parse_extravars(["a=true", "b=False", "c=6.10", 'd={"x": 1}'.replace("d=", ""), "e=x=y"])
    assert v == {"a": True, "b": False, "c": "6.10", "x": 1, "e": "x=y"}
    with pytest.raises(UsageError):
        parse_extravars(["1abc=2"])


def test_run_dirs_are_fresh(tmp_path: Path) -> None:
    dirs = {fresh_run_dir(tmp_path) for _ in range(5)}
    assert len(dirs) == 5
    assert all(oct(d.stat().st_mode)[-3:] == "700" for d in dirs)


def test_scrub_removes_secrets(tmp_path: Path) -> None:
    (tmp_path / "env").mkdir()
    (tmp_path / "env/passwords").write_text("x")
    (tmp_path / "artifacts").mkdir()
    f = tmp_path / "artifacts/command"
    f.write_text(
        'ansible-playbook -e {"ansible_become_password": "hunter22", "x": 1}\n'
        "-----BEGIN OPENSSH PRIVATE KEY-----\nabc\n-----END OPENSSH PRIVATE KEY-----\n"
    )
    scrub_run_dir(tmp_path, {"ansible_become_password": "hunter22", "rocmprov_repo_key_url": "u"})
    text = f.read_text()
    assert "hunter22" not in text and "BEGIN OPENSSH PRIVATE KEY" not in text
    assert text.startswith("ansible-playbook -e")  # the rest of the text is kept
    assert not (tmp_path / "env/passwords").exists()
    assert oct(f.stat().st_mode)[-3:] == "600"


def test_failure_message_from_real_result_shapes() -> None:
    assert failure_message({"msg": "E: boom", "stderr": ""}) == "E: boom"
    assert "item failed" in failure_message(
        {"results": [{"failed": False}, {"failed": True, "msg": "item failed"}]}
    )
    assert failure_message(None) == ""


def test_check_run_against_localhost_counts_and_handler(tmp_path: Path) -> None:
    """A real ansible-runner run (check mode, local connection, two harmless roles)."""
    inv = tmp_path / "local.ini"
    inv.write_text(
        f"localhost ansible_connection=local ansible_python_interpreter={sys.executable}\n"
    )
    events: list[str] = []
    res = run_apply(
        ApplyOptions(
            inventory=str(inv),
            check=True,
            tags="rocmprov_gpu_manager,rocmprov_reboot",
            extravars={"rocmprov_torch_enabled": False},
            state_dir=str(tmp_path / "runs"),
        ),
        on_event=lambda col, ev: events.append(ev.get("event", "")),
    )
    assert res.status == "successful", res
    assert res.exit_code == 0
    assert [h.host for h in res.hosts] == ["localhost"]
    h = res.hosts[0]
    assert h.ok > 0 and h.changed == 0 and h.failed == 0
    assert "playbook_on_stats" in events
    assert res.command.startswith("ansible-playbook") and "--check" in res.command
    run_dir = Path(res.run_dir)
    assert (run_dir / "artifacts/run/job_events").is_dir()
    assert not (run_dir / "env/cmdline").exists()
    # a second run never reuses the first one's directory
    res2 = run_apply(
        ApplyOptions(
            inventory=str(inv),
            check=True,
            tags="rocmprov_gpu_manager",
            state_dir=str(tmp_path / "runs"),
        )
    )
    assert res2.run_dir != res.run_dir and res2.status == "successful"


def test_event_collector_handler_returns_true() -> None:
    col = EventCollector()
    assert (
        col.handle(
            {
                "event": "runner_on_failed",
                "event_data": {"host": "h", "task": "T", "res": {"msg": "m"}},
            }
        )
        is True
    )
    assert (
        col.handle(
            {
                "event": "playbook_on_stats",
                "event_data": {
                    "ok": {"h": 1},
                    "failures": {"h": 1},
                    "changed": {},
                    "dark": {},
                    "skipped": {},
                    "rescued": {},
                    "ignored": {},
                    "processed": {"h": 1},
                },
            }
        )
        is True
    )
    (r,) = col.results()
    assert r.status == "failed" and r.failure and r.failure.task == "T"
