"""The GPU users: one list (rocmprov_gpu_users, else the login user) that apply's users role
adds to render and video and the audit checks, run through a real shell and the real `id`."""

from __future__ import annotations

import os
import pwd
import subprocess

from rocmprov.checks.driver import check_groups
from rocmprov.checks.policy import Policy
from rocmprov.collect.probes import build_probes
from rocmprov.facts.host import HostFacts
from rocmprov.model import Severity
from rocmprov.parse.system import UserGroups, parse_groups

MISSING = "rocmprov-no-such-user"


def _groups_output(users: tuple[str, ...]) -> str:
    probe = next(p for p in build_probes(gpu_users=users) if p.id == "groups")
    return subprocess.run(
        ["bash", "-c", probe.command], capture_output=True, text=True, timeout=30, check=False
    ).stdout


def test_each_user_is_probed_and_an_unknown_one_is_said() -> None:
    root = pwd.getpwuid(0).pw_name
    users = parse_groups(_groups_output((root, MISSING)))
    assert [u.user for u in users] == [root, MISSING]
    assert users[0].exists and "root" in users[0].groups
    assert not users[1].exists
    findings = check_groups(HostFacts("h", groups=users), Policy.from_vars({}))
    assert [(f.subject, f.severity) for f in findings] == [
        (root, Severity.OK),
        (MISSING, Severity.WARNING),
    ]
    assert "rocmprov_gpu_users" in findings[1].fix


def test_no_users_given_probes_the_login_user() -> None:
    (me,) = parse_groups(_groups_output(()))
    assert me.user == pwd.getpwuid(os.getuid()).pw_name


def test_a_user_name_cannot_reach_the_shell() -> None:
    probe = next(p for p in build_probes(gpu_users=("a'; touch /tmp/x; '",)) if p.id == "groups")
    assert "'\"'\"'" in probe.command  # shlex-quoted, never formatted in raw


def test_a_bundle_of_the_earlier_single_user_form_still_reads() -> None:
    text = (
        "uid=1000(alice) gid=1000(alice) groups=1000(alice),44(video),993(render)\n"
        "--- getent\nvideo:x:44:alice\nrender:x:993:alice\n"
    )
    (alice,) = parse_groups(text)
    assert alice == UserGroups("alice", frozenset({"alice", "video", "render"}),
                               frozenset({"video", "render"}))


def test_every_user_missing_render_is_critical_and_named() -> None:
    users = (
        UserGroups("alice", frozenset({"alice", "video", "render"})),
        UserGroups("bob", frozenset({"bob", "video"})),
    )
    findings = check_groups(HostFacts("h", groups=users), Policy.from_vars({}))
    assert [(f.subject, f.severity) for f in findings] == [
        ("alice", Severity.OK),
        ("bob", Severity.CRITICAL),
    ]
    assert "usermod -aG render,video bob" in findings[1].fix
