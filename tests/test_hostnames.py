"""rocmprov.inventory.hostnames: what may be a host name, address, user, port or jump host."""

from __future__ import annotations

import pytest

from rocmprov.exitcodes import Exit, UsageError
from rocmprov.inventory.hostnames import (
    BadHostValue,
    JumpHop,
    check_host,
    check_port,
    check_user,
    host_problem,
    parse_jump,
    port_problem,
    strip_brackets,
    user_problem,
)

GOOD_HOSTS = [
    "gpu01",
    "mi300-01.cluster.example.com",
    "node-01.example.com.",  # fully qualified, final dot
    "_ssh._tcp.example",  # underscores: ssh_config aliases and SRV-style names
    "127.0.0.1",
    "10.0.0.255",
    "::1",
    "2001:db8::17",
    "[2001:db8::17]",
    "fe80::1%eth0",
    "[fe80::1%enp65s0f0]",
    "a" * 63 + ".example",
    ".".join(["a" * 63] * 3) + "." + "b" * 61,  # 253 characters
]

BAD_HOSTS = [
    ("127.0.0.1;touch /tmp/x;", "';'"),
    ("host$(id)", "'$'"),
    ("host`id`", "'`'"),
    ("a|b", "'|'"),
    ("a&b", "'&'"),
    ("a>b", "'>'"),
    ("a'b", '"\'"'),
    ('a"b', "'\"'"),
    ("a\\b", "'\\\\'"),
    ("a b", "whitespace"),
    ("a\tb", "control character"),
    ("gpu\n01", "control character"),
    ("gpu\x00", "control character"),
    ("-oProxyCommand=touch x", "starts with '-'"),
    ("-gpu01", "starts with '-'"),
    ("", "empty"),
    ("a" * 64 + ".example", "label longer than 63"),
    ("a." * 127 + "ab", "longer than 25"),
    ("a..b", "empty label"),
    (".a", "empty label"),
    ("a-.b", "bad label"),
    ("gpü.example", "non-ASCII"),
    ("1.2.3.256", "not an IPv4"),
    ("1.2.3", "not an IPv4"),
    ("fe80::1%eth0;id", "';'"),
    ("[::1;id]", "IPv6"),
    ("[gpu01]", "IPv6"),
    ("::g", "IPv6"),
    ("user@host", "bad label"),
    ("host:22", "IPv6"),
    ("*.example", "'*'"),
]


@pytest.mark.parametrize("value", GOOD_HOSTS)
def test_good_hosts_pass(value: str) -> None:
    assert host_problem(value) is None
    assert check_host("alias", "ansible_host", value) == value


@pytest.mark.parametrize(("value", "why"), BAD_HOSTS)
def test_bad_hosts_refused_with_the_reason(value: str, why: str) -> None:
    reason = host_problem(value)
    assert reason is not None and why in reason, reason
    with pytest.raises(BadHostValue) as info:
        check_host("web1", "ansible_host", value)
    message = str(info.value)
    assert message.startswith("host 'web1': ansible_host ")
    assert "\n" not in message and "\x00" not in message and len(message) < 250
    assert info.value.exit_code == Exit.USAGE and isinstance(info.value, UsageError)


def test_every_shell_metacharacter_is_refused() -> None:
    for c in "'`\"$\\;&<>|(){}[]*?!~#=%^, \t\r\n":
        assert host_problem(f"gpu{c}01") is not None, repr(c)
        assert user_problem(f"ops{c}x") is not None, repr(c)


@pytest.mark.parametrize(
    "value", ["root", "ops", "svc_gpu", "first.last", "jdoe@AD.EXAMPLE", "u1-x"]
)
def test_good_users(value: str) -> None:
    assert check_user("h", "ansible_user", value) == value


@pytest.mark.parametrize(
    "value", ["", "-root", ".hidden", "a b", "a;b", "$(id)", "a\nb", "x" * 65, "röot", "a/b"]
)
def test_bad_users(value: str) -> None:
    assert user_problem(value) is not None
    with pytest.raises(BadHostValue, match=r"^host 'h': ansible_user "):
        check_user("h", "ansible_user", value)


@pytest.mark.parametrize(("value", "port"), [(22, 22), ("2222", 2222), (65535, 65535), ("1", 1)])
def test_good_ports(value: object, port: int) -> None:
    assert port_problem(value) is None and check_port("h", "ansible_port", value) == port


@pytest.mark.parametrize("value", [0, -1, 65536, "0", "", "22;id", " 22", "ssh", True, 2.5, None])
def test_bad_ports(value: object) -> None:
    assert port_problem(value) is not None
    with pytest.raises(BadHostValue, match=r"^host 'h': ansible_port "):
        check_port("h", "ansible_port", value)


def test_jump_specs() -> None:
    assert parse_jump("bastion", alias="a") == (JumpHop("bastion", None, None),)
    assert parse_jump("ssh://ops@[2001:db8::1]:2222, b2:22", alias="a") == (
        JumpHop("2001:db8::1", 2222, "ops"),
        JumpHop("b2", 22, None),
    )
    assert parse_jump("none", alias="a") == ()


@pytest.mark.parametrize(
    ("value", "field"),
    [
        ("bastion;touch x", "ProxyJump host"),
        ("$(id)@bastion", "ProxyJump user"),
        ("bastion:22;id", "ProxyJump port"),
        ("-oProxyCommand=x", "ProxyJump"),
        ("[::1;id]:22", "ProxyJump host"),
        ("ok,bad host", "ProxyJump host"),
        (",".join(["b"] * 9), "ProxyJump"),
        (",", "ProxyJump"),
    ],
)
def test_bad_jump_specs_name_the_part(value: str, field: str) -> None:
    with pytest.raises(BadHostValue) as info:
        parse_jump(value, alias="gpu1")
    assert str(info.value).startswith(f"host 'gpu1': {field} ")


def test_hostile_alias_is_shown_escaped_on_one_line() -> None:
    err = BadHostValue("evil\nalias\x1b[31m", "ansible_host", "x;y", "is bad")
    assert "\n" not in str(err) and "\x1b" not in str(err)


def test_strip_brackets() -> None:
    assert strip_brackets("[::1]") == "::1" and strip_brackets("gpu01") == "gpu01"
