"""A fleet's names are looked up in ssh_config once per run: the preflight and the
connections share one parsed config and its answers (a lookup costs ~0.1 ms, and `Match exec`
runs a command each time)."""

from __future__ import annotations

from pathlib import Path

import paramiko

from rocmprov.inventory.hosts import HostSpec
from rocmprov.transport.ssh import SSHOptions, SSHTransport
from rocmprov.transport.ssh.config import resolve


class CountingConfig(paramiko.SSHConfig):
    def __init__(self) -> None:
        super().__init__()
        self.asked: list[str] = []

    def lookup(self, hostname: str) -> paramiko.SSHConfigDict:
        self.asked.append(hostname)
        return super().lookup(hostname)


def _config(tmp_path: Path) -> CountingConfig:
    text = "Host gpu*\n  HostName 10.0.0.7\n  User admin\n  Port 2200\n"
    cfg = CountingConfig()
    cfg.parse(iter(text.splitlines(keepends=True)))
    (tmp_path / "known_hosts").write_text("")
    return cfg


def test_each_name_is_looked_up_once_and_answers_stay_right(tmp_path: Path) -> None:
    cfg = _config(tmp_path)
    first = resolve(cfg, "gpu01")
    again = resolve(cfg, "gpu01", port=22, user="root")
    other = resolve(cfg, "gpu02")
    assert cfg.asked == ["gpu01", "gpu02"]
    assert (first.hostname, first.port, first.user) == ("10.0.0.7", 2200, "admin")
    assert (again.port, again.user) == (22, "root")  # the inventory's values still win
    assert other.alias == "gpu02"


def test_a_new_config_is_asked_again(tmp_path: Path) -> None:
    one, two = _config(tmp_path), _config(tmp_path)
    resolve(one, "gpu01")
    resolve(two, "gpu01")
    assert one.asked == two.asked == ["gpu01"]


def test_preflight_and_connection_share_the_answers(tmp_path: Path) -> None:
    from rocmprov.fleet.fanout import preflight

    cfg = _config(tmp_path)
    options = SSHOptions(
        known_hosts=SSHOptions.load(known_hosts=tmp_path / "known_hosts").known_hosts,
        ssh_config=cfg,
    )
    hosts = [HostSpec(name=f"gpu{i:02d}", address=f"gpu{i:02d}") for i in range(5)]
    preflight(hosts, options)
    for spec in hosts:
        SSHTransport.from_spec(spec, options).close()
    assert sorted(cfg.asked) == [f"gpu{i:02d}" for i in range(5)]
