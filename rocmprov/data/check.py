"""Validate the ROCm release table: `python -m rocmprov.data.check [--online]`.

Offline (CI): the schema, a source URL on every row and stream, every torch pairing pointing
at a listed index, the default being a production release with a torch wheel, and every row
resolvable by the playbooks' own resolver. With --online, for a maintainer refreshing the
table: fetch each row's apt Release file and key URL and say which answer 404 (bounded in
size and time; nothing else is fetched).

Exit 0 when the table is sound, 1 when a problem is found, 64 on a bad argument.
"""

from __future__ import annotations

import argparse
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

from rocmprov.knowledge import releases

_STATUSES = {"production", "preview", "unconfirmed"}
_STREAMS = {"legacy", "therock"}
_ROW_KEYS = {"version", "stream", "status", "source"}
ONLINE_TIMEOUT = 10.0
ONLINE_MAX_BYTES = 64 * 1024


def _is_url(value: object) -> bool:
    return isinstance(value, str) and value.startswith(("https://", "http://"))


def problems(table: dict[str, Any]) -> Iterator[str]:
    """Every way the table breaks its contract, one line each (none = sound)."""
    if table.get("schema") != releases.SCHEMA:
        yield f"schema is {table.get('schema')!r}, not {releases.SCHEMA}"
    streams = table.get("streams") or {}
    for name in _STREAMS:
        stream = streams.get(name)
        if not isinstance(stream, dict):
            yield f"stream {name}: missing"
            continue
        if not _is_url(stream.get("source")):
            yield f"stream {name}: no source URL"
        if not _is_url(stream.get("base_url")) or not _is_url(stream.get("key_url")):
            yield f"stream {name}: base_url and key_url must be URLs"
    rows = table.get("releases")
    if not isinstance(rows, list) or not rows:
        yield "no releases"
        return
    seen: set[str] = set()
    for row in rows:
        if not isinstance(row, dict):
            yield f"a release row is not a mapping: {row!r}"
            continue
        version = str(row.get("version", "?"))
        for key in sorted(_ROW_KEYS - set(row)):
            yield f"{version}: no {key}"
        if version in seen:
            yield f"{version}: listed twice"
        seen.add(version)
        if row.get("stream") not in _STREAMS:
            yield f"{version}: unknown stream {row.get('stream')!r}"
        if row.get("status") not in _STATUSES:
            yield f"{version}: unknown status {row.get('status')!r}"
        if not _is_url(row.get("source")):
            yield f"{version}: source is not a URL"
        for p in row.get("packages") or []:
            if "<" in str(p) or " " in str(p):
                yield f"{version}: packages must be installable names, not {p!r}"
        torch = row.get("torch") or {}
        if torch.get("versions") and not _is_url(torch.get("index")):
            yield f"{version}: torch versions without an index URL"
        if torch.get("index"):
            if not _is_url(torch["index"]):
                yield f"{version}: torch index {torch['index']!r} is not a URL"
            if not _is_url(torch.get("source") or row.get("source")):
                yield f"{version}: torch pairing without a source"
        apt = row.get("apt") or {}
        for key in apt.get("suites") or {}:
            facts = _facts_for(key)
            if facts is None:
                yield f"{version}: suite key {key!r} is not <distro>-<version>"
                continue
            plan = releases.resolve(version, facts)
            if plan.get("error"):
                yield f"{version} on {key}: {plan['error']}"
            elif not plan.get("rocm_url"):
                yield f"{version} on {key}: no ROCm URL"
    default = releases.find(table.get("default"))
    if default is None:
        yield f"default {table.get('default')!r} is not a release of the table"
    else:
        if default.status != "production":
            yield f"default {default.version} is not a production release"
        if not default.torch_index or not default.torch_versions:
            yield f"default {default.version} has no published torch wheel"
        newer = [
            r.version
            for r in releases.all_releases()
            if r.status == "production"
            and r.torch_index
            and r.torch_versions
            and releases.version_key(r.version) > releases.version_key(default.version)
        ]
        if newer:
            yield f"default {default.version} is not the newest release with a wheel ({newer[-1]})"


def _facts_for(key: str) -> dict[str, str] | None:
    name, _, version = key.partition("-")
    dist = {"ubuntu": "Ubuntu", "debian": "Debian"}.get(name)
    if not dist or not version:
        return None
    return {
        "distribution": dist,
        "distribution_version": version,
        "distribution_major_version": version.split(".")[0],
        "os_family": "Debian",
    }


def online_urls(table: dict[str, Any]) -> Iterator[tuple[str, str]]:
    """(what, URL) to fetch for --online: each row's Release file per suite, and each key."""
    keys = set()
    for row in releases.all_releases():
        for key in (table_row(table, row.version).get("apt") or {}).get("suites") or {}:
            facts = _facts_for(key)
            plan = releases.resolve(row.version, facts) if facts else {}
            if plan.get("rocm_url") and plan.get("suite"):
                url = f"{plan['rocm_url'].rstrip('/')}/dists/{plan['suite']}/Release"
                yield f"{row.version} {key}", url
            # the driver and graphics repositories 404 on their own (graphics/7.2.2, ROCm#5881)
            for kind in ("amdgpu", "graphics"):
                suite = (plan.get(f"{kind}_suite") or plan.get("suite")) if plan else ""
                if plan.get(f"{kind}_url") and suite:
                    url = f"{plan[f'{kind}_url'].rstrip('/')}/dists/{suite}/Release"
                    yield f"{row.version} {key} {kind}", url
            if plan.get("key_url"):
                keys.add(plan["key_url"])
            if plan.get("amdgpu_url") and plan.get("amdgpu_key_url"):
                keys.add(plan["amdgpu_key_url"])
    for url in sorted(keys):
        yield "key", url


def table_row(table: dict[str, Any], version: str) -> dict[str, Any]:
    return next((r for r in table.get("releases") or [] if r.get("version") == version), {})


def fetch_status(url: str) -> str:
    """'ok' or why not, reading at most ONLINE_MAX_BYTES within ONLINE_TIMEOUT seconds."""
    try:
        with urllib.request.urlopen(url, timeout=ONLINE_TIMEOUT) as resp:
            resp.read(ONLINE_MAX_BYTES)
            return "ok"
    except urllib.error.HTTPError as exc:
        return f"HTTP {exc.code}"
    except (urllib.error.URLError, OSError) as exc:
        return f"unreachable ({getattr(exc, 'reason', exc)})"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m rocmprov.data.check", description=__doc__)
    parser.add_argument("--online", action="store_true", help="also fetch each URL once")
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return 0 if exc.code == 0 else 64
    try:
        table = releases.load_table()
    except (OSError, ValueError) as exc:
        print(f"rocmprov.data.check: {exc}", file=sys.stderr)
        return 1
    found = list(problems(table))
    for line in found:
        print(f"problem: {line}")
    rows = releases.all_releases()
    print(
        f"{len(rows)} releases ({sum(r.stream == 'legacy' for r in rows)} legacy, "
        f"{sum(r.stream == 'therock' for r in rows)} TheRock), default {table.get('default')}: "
        + ("sound" if not found else f"{len(found)} problem(s)")
    )
    bad_online = 0
    if args.online:
        for what, url in online_urls(table):
            status = fetch_status(url)
            bad_online += status != "ok"
            print(f"{status:>12}  {what}  {url}")
    return 1 if found or bad_online else 0


if __name__ == "__main__":
    raise SystemExit(main())
