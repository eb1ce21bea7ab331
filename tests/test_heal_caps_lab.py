"""The caps of `rocmprov heal` on a real three-node Slurm cluster (Debian 12's slurmctld on one
lab host, slurmd + munge on three, one partition): the same software fault on every node at
once, every node drained by the gate; heal takes one node of the partition at a time
(--per-partition 1), defers the others, and the next runs finish them."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.lab import Lab
from tests.test_gate_slurm_lab import GATE, PACKAGES, Node, slurm_conf
from tests.test_heal_lab import _rocmprov

pytestmark = pytest.mark.lab

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def cluster(lab: Lab) -> Iterator[list[Node]]:
    """Three lab hosts: the last runs slurmctld, all three slurmd; every node IDLE."""
    hosts = [lab.reset(h) for h in lab.hosts[-3:]]
    nodes = [Node(lab, h) for h in hosts]
    ctl = nodes[-1]
    conf = slurm_conf(ctl, nodes)
    for n in nodes:
        # slurm-client: the gate in each node runs scontrol
        n.install(
            PACKAGES if n is ctl else [p for p in PACKAGES if p != "slurmctld"] + ["slurm-client"]
        )
        n.configure_slurm(conf)
        n.copy_rocmprov()
        n.gpu_user()
    key = (ctl.host.root / "etc/munge/munge.key").read_bytes()
    for n in nodes:
        target = n.host.root / "etc/munge/munge.key"
        target.write_bytes(key)
        n.sh("chown", "munge:munge", "/etc/munge/munge.key")
        n.sh("chmod", "0400", "/etc/munge/munge.key")
        n.sh("systemctl", "restart", "munge")
    ctl.sh("systemctl", "restart", "slurmctld")
    for n in nodes:
        n.sh("systemctl", "restart", "slurmd")
    for n in nodes:
        n.wait_state(lambda s: s[0] == "IDLE", f"{n.name} to register", timeout=90)
    yield nodes
    for h in hosts:
        lab.reset(h)


def test_every_node_failing_at_once_is_healed_one_per_partition_at_a_time(
    cluster: list[Node], tmp_path: Path
) -> None:
    ctl = cluster[-1]
    names = [n.name for n in cluster]
    for n in cluster:  # the same fault everywhere: the GPU user lost render
        n.sh("gpasswd", "-d", "admin", "render")
    audit = _rocmprov(
        "audit",
        str(ctl.lab.inventory),
        "--limit",
        ",".join(names),
        "--gpu-user",
        "admin",
        "--format",
        "json",
        timeout=180,
    )
    doc = json.loads(audit.stdout)
    for n in cluster:  # each node's own gate judges its own audit
        host = next(h for h in doc["hosts"] if h["host"] == n.name)
        n.put("/root/audit.json", json.dumps({**doc, "hosts": [host]}))
        cp = n.lab.exec(
            n.host, [*GATE, "--result", "/root/audit.json", "--drain", "user.groups"], check=False
        )
        assert "action=drain" in cp.stderr, cp.stderr

    def states() -> dict[str, tuple[str, str]]:
        return {n.name: n.show() for n in cluster}

    assert all(
        s[0] == "IDLE+DRAIN" and s[1].startswith("rocmprov: user.groups") for s in states().values()
    ), states()
    heal = [
        "heal",
        str(ctl.lab.inventory),
        "--limit",
        ",".join(names),
        "--slurm-host",
        ctl.name,
        "--state-dir",
        str(tmp_path / "state"),
        "--per-partition",
        "1",
        "--drain",
        "user.groups",
        "-e",
        "rocmprov_gpu_users=admin",
        "--format",
        "json",
    ]
    resumed: list[str] = []
    for run in range(3):  # bounded: one node per run
        cp = _rocmprov(*heal, timeout=400)
        assert cp.returncode == (1 if run < 2 else 0), cp.stderr
        outcomes = {n["node"]: n["outcome"] for n in json.loads(cp.stdout)["nodes"]}
        now = [k for k, v in outcomes.items() if v == "resumed"]
        assert len(now) == 1, outcomes  # the cap: one node of partition main in hand
        assert sorted(k for k, v in outcomes.items() if v == "deferred") == sorted(
            set(names) - set(resumed) - set(now)
        ), outcomes
        resumed += now
        for n in cluster:
            n.wait_state(
                (lambda s: s == ("IDLE", ""))
                if n.name in resumed
                else (lambda s: s[0] == "IDLE+DRAIN" and s[1].startswith("rocmprov: ")),
                f"{n.name} after run {run + 1}",
            )
    assert sorted(resumed) == sorted(names)
    for n in cluster:
        journal = tmp_path / "state" / "journal" / f"{n.name}.jsonl"
        events = [json.loads(line)["event"] for line in journal.read_text().splitlines()]
        assert events[-3:] == ["attempt", "fixed", "resumed"], (n.name, events)
        assert set(events[:-3]) <= {"deferred"}, (n.name, events)
