"""The known_hosts index (a fleet's 2,000-entry file must not cost a scan per host) gives the
same answers as matching every entry in order, for plain, wildcard, negated, hashed, [host]:port
and @revoked entries, also after accept-new appends."""

from __future__ import annotations

import base64
import hashlib
import hmac
from collections.abc import Callable
from pathlib import Path

import paramiko
from hypothesis import given, settings
from hypothesis import strategies as st

from rocmprov.transport.ssh.known_hosts import KnownHosts, _host_matches
from tests.growth import cpu_ratio

NAMES = ["gpu01", "GPU02", "[gpu03]:2222", "10.0.0.1", "[10.0.0.1]:2200", "node-a.lab", "x"]


def _hashed(name: str, salt: bytes) -> str:
    digest = hmac.new(salt, name.encode(), hashlib.sha1).digest()
    return f"|1|{base64.b64encode(salt).decode()}|{base64.b64encode(digest).decode()}"


patterns = st.one_of(
    st.sampled_from(NAMES),
    st.sampled_from(NAMES).map(str.upper),
    st.sampled_from(["gpu*", "*", "10.0.0.?", "[gpu0?]:2222", "node-*.lab", "*.lab"]),
    st.sampled_from(NAMES).map(lambda n: "!" + n),
    st.tuples(st.sampled_from(NAMES), st.binary(min_size=4, max_size=8)).map(lambda t: _hashed(*t)),
)
blobs = st.sampled_from([b"key-a", b"key-b", b"key-c"])
entries = st.lists(
    st.tuples(
        st.sampled_from(["", "", "", "@revoked"]),
        st.lists(patterns, min_size=1, max_size=3),
        st.sampled_from(["ssh-ed25519", "ecdsa-sha2-nistp256"]),
        blobs,
    ),
    max_size=12,
)


def _write(path: Path, rows: list) -> None:
    lines = []
    for marker, pats, ktype, blob in rows:
        b64 = base64.b64encode(blob).decode()
        lines.append(" ".join(x for x in (marker, ",".join(pats), ktype, b64) if x))
    path.write_text("\n".join(lines) + "\n")


@settings(max_examples=300, deadline=None)
@given(rows=entries, name=st.sampled_from([*NAMES, "GPU01", "other", "node-b.lab"]))
def test_index_equals_a_linear_scan(tmp_path_factory, rows: list, name: str) -> None:
    path = tmp_path_factory.mktemp("kh") / "known_hosts"
    _write(path, rows)
    known = KnownHosts(path, system=None)
    linear = [e for e in known._entries if not e.marker and _host_matches(e.patterns, name)]
    assert known._for_name(name) == linear
    types: list[str] = []
    for e in linear:
        if e.keytype not in types:
            types.append(e.keytype)
    assert known.key_types(name) == types


def test_verify_states_and_accept_new(tmp_path: Path) -> None:
    key = paramiko.Ed25519Key.generate() if hasattr(paramiko.Ed25519Key, "generate") else None
    if key is None:  # paramiko has no Ed25519 generator: use an ECDSA key
        key = paramiko.ECDSAKey.generate()
    other = paramiko.ECDSAKey.generate()
    path = tmp_path / "known_hosts"
    path.write_text(
        f"gpu01,10.0.0.1 {key.get_name()} {key.get_base64()}\n"
        f"gpu0? {other.get_name()} {other.get_base64()}\n"
    )
    known = KnownHosts(path, system=None)
    assert known.verify("GPU01", key) == "known"
    assert known.verify("gpu02", key) == "changed"  # only the wildcard entry, another key
    assert known.verify("gpu02", other) == "known"
    assert known.verify("gpu99", key) == "unknown"
    known.add("gpu99", key)
    assert known.verify("gpu99", key) == "known"
    assert KnownHosts(path, system=None).verify("gpu99", key) == "known"
    path.write_text(path.read_text() + f"@revoked * {key.get_name()} {key.get_base64()}\n")
    assert KnownHosts(path, system=None).verify("gpu01", key) == "revoked"


def test_lookup_cost_does_not_grow_with_the_file(tmp_path: Path) -> None:
    key = paramiko.ECDSAKey.generate()
    line = f"{key.get_name()} {key.get_base64()}"
    small, big = tmp_path / "small", tmp_path / "big"
    small.write_text("".join(f"[127.20.0.{i}]:2222 {line}\n" for i in range(1, 11)))
    big.write_text(
        "".join(f"[127.20.{i // 250}.{i % 250 + 1}]:2222 {line}\n" for i in range(20000))
    )

    def lookups(path: Path) -> Callable[[], object]:
        known = KnownHosts(path, system=None)

        def call() -> None:
            for _ in range(10):  # few: a scanning build takes seconds for these alone
                assert known.verify("[127.20.0.5]:2222", key) == "known"

        return call

    # CPU time of the same lookups in a 20,000-entry file over a 10-entry one (tests/growth.py:
    # each side repeated to a measurable time, no absolute bound): a scan of every entry per
    # lookup was ~2,000x; an index ~1x; 10 leaves room for noise
    ratio = cpu_ratio(lookups(big), lookups(small))
    if ratio >= 10:  # a second, independent timing: noise rarely inflates both, a scan does
        ratio = min(ratio, cpu_ratio(lookups(big), lookups(small)))
    assert ratio < 10, f"a lookup in 20,000 entries costs {ratio:.0f}x one in 10"
