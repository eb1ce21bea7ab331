"""The release table against AMD's repositories as the table publishes them (tests/lab/amdrepo.py),
on the lab's real hosts: every row x suite through apt, a converge per layout era, stream
switches, a host left by AMD's own instructions, uninstall and check mode.

Nothing here names a release except through the table: rows are picked by stream, status and
the apt suites they list, so a new row is tested the day it is added.

Ubuntu hosts are the lab's Debian 12 hosts with Ubuntu's /etc/os-release and /etc/lsb-release:
Ansible's distribution facts (read from those files) then say Ubuntu jammy/noble, which is all
the resolver and the roles look at; apt and dpkg stay bookworm's.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from rocmprov.knowledge import releases
from tests.lab import Lab, LabHost
from tests.lab.amdrepo import Served, load_table, rows, stream_of
from tests.test_apply_lab import apply, by_host, state_of

pytestmark = pytest.mark.lab

TABLE = load_table()
# Distro keys of the table the lab can be: (codename, name, point release); None = the lab's own.
EMULATED: dict[str, tuple[str, str, str] | None] = {
    "debian-12": None,
    "ubuntu-24.04": ("noble", "Noble Numbat", "24.04.3"),
    "ubuntu-22.04": ("jammy", "Jammy Jellyfish", "22.04.5"),
    "ubuntu-20.04": ("focal", "Focal Fossa", "20.04.6"),
}
SOURCES = "/etc/apt/sources.list.d"
PIN = "/etc/apt/preferences.d/rocmprov-rocm-pin"
ISO = "/etc/apt/rocmprov-lab"  # the fast path's own apt configuration, away from the host's
APT_ISO = [
    "-o", "Dir::Etc::SourceList=/dev/null", "-o", f"Dir::Etc::SourceParts={ISO}/sources",
    "-o", "Dir::Etc::Preferences=/dev/null", "-o", f"Dir::Etc::PreferencesParts={ISO}/prefs",
    "-o", f"Dir::State::Lists={ISO}/lists", "-o", "Dir::Cache::pkgcache=",
    "-o", "Dir::Cache::srcpkgcache=",
]


# ------------------------------------------------------------------ the table, read


def apt_keys(row: dict[str, Any]) -> list[str]:
    """The emulated distro keys a row has an apt repository for."""
    apt = row.get("apt") or {}
    if not apt.get("rocm"):
        return []
    return [k for k in EMULATED if k in (apt.get("suites") or {})]


def vkey(row: dict[str, Any]) -> tuple[int, ...]:
    return releases.version_key(str(row["version"]))


def apt_rows(stream: str, status: str = "production") -> list[dict[str, Any]]:
    found = [r for r in rows(TABLE) if r.get("stream") == stream
             and r.get("status", "production") == status and apt_keys(r)]
    assert found, f"the table has no {status} {stream} row with an apt repository"
    return sorted(found, key=vkey)


def legacy_full() -> dict[str, Any]:
    """The newest legacy row with all three repositories (rocm, driver-versioned amdgpu,
    graphics): the layout with the most to set up, show and take back."""
    full = [r for r in apt_rows("legacy") if r.get("driver")
            and (r.get("apt") or {}).get("amdgpu") and (r.get("apt") or {}).get("graphics")]
    assert full, "the table has no legacy row with driver-versioned amdgpu + graphics repositories"
    return full[-1]


def layout_eras() -> dict[str, dict[str, Any]]:
    """One row per layout era: the newest legacy 6.x, the newest legacy (7.2.x, driver-versioned
    amdgpu + graphics), the first production TheRock row (7.14) and the newest (10.x)."""
    legacy = apt_rows("legacy")
    therock = apt_rows("therock")
    eras = {
        "legacy-6": [r for r in legacy if str(r["version"]).startswith("6.")][-1],
        "legacy-newest": legacy_full(),
        "therock-first": therock[0],
        "therock-newest": therock[-1],
    }
    assert len({str(r["version"]) for r in eras.values()}) == 4, eras
    return eras


def key_for(row: dict[str, Any]) -> str:
    return apt_keys(row)[0]  # EMULATED's order: Debian 12 (native) first


def newest_sharing(row: dict[str, Any], package: str) -> str:
    """The newest release whose rows put `package` in the same repository as `row` (TheRock's
    7.14.0/7.14.1 share amdrocm7.14): what apt installs for `row`."""
    path = (row.get("apt") or {}).get("rocm")
    same = [r for r in rows(TABLE) if (r.get("apt") or {}).get("rocm") == path
            and package in (r.get("packages") or []) and r.get("stream") == row.get("stream")]
    return str(max(same, key=vkey)["version"])


def version_shape(row: dict[str, Any], upstream: str) -> str:
    """AMD's version shape per stream: legacy 7.2.1.70201-81~22.04, TheRock 10.0.0-1."""
    if row.get("stream") == "legacy":
        return rf"^{re.escape(upstream)}\.\d{{5}}-\d+~\d\d\.\d\d$"
    return rf"^{re.escape(upstream)}-\d+$"


# ------------------------------------------------------------------ hosts


def become(lab: Lab, host: LabHost, key: str) -> None:
    """Give a (pristine) host the identity of a distro key: Ubuntu's os-release + lsb-release."""
    ident = EMULATED[key]
    if ident is None:
        return
    codename, name, point = ident
    etc = host.root / "etc"
    (etc / "os-release").unlink()
    (etc / "os-release").write_text(
        f'PRETTY_NAME="Ubuntu {point} LTS"\nNAME="Ubuntu"\nVERSION_ID="{point[:5]}"\n'
        f'VERSION="{point} LTS ({name})"\nVERSION_CODENAME={codename}\nID=ubuntu\n'
        f"ID_LIKE=debian\nUBUNTU_CODENAME={codename}\n")
    (etc / "lsb-release").write_text(
        f"DISTRIB_ID=Ubuntu\nDISTRIB_RELEASE={point[:5]}\nDISTRIB_CODENAME={codename}\n"
        f'DISTRIB_DESCRIPTION="Ubuntu {point} LTS"\n')


def gather_facts(lab: Lab, hosts: list[LabHost]) -> dict[str, dict[str, Any]]:
    """Ansible's own distribution facts of the hosts (setup, min subset), keyed by host name."""
    env = {**os.environ, "ANSIBLE_HOST_KEY_CHECKING": "True", "ANSIBLE_NOCOLOR": "1"}
    cp = subprocess.run(
        [str(Path(sys.executable).parent / "ansible"), "all", "-i", str(lab.inventory),
         "--limit", ",".join(h.name for h in hosts), "-m", "ansible.builtin.setup",
         "-a", "gather_subset=!all", "--one-line"],
        capture_output=True, text=True, env=env, timeout=300, check=False)
    assert cp.returncode == 0, cp.stdout[-3000:] + cp.stderr[-2000:]
    out = {}
    for m in re.finditer(r"^(\S+) \| SUCCESS => (\{.*\})$", cp.stdout, re.M):
        facts = json.loads(m.group(2))["ansible_facts"]
        out[m.group(1)] = {k.removeprefix("ansible_"): v for k, v in facts.items()}
    assert set(out) == {h.name for h in hosts}, cp.stdout[-3000:]
    return out


def check_facts(facts: dict[str, Any], key: str) -> None:
    os_id, _, version = key.partition("-")
    assert facts["distribution"].lower() == os_id, (key, facts["distribution"])
    assert facts["os_family"] == "Debian"
    assert str(facts["distribution_version"]).startswith(version), (key, facts)


def inventory(lab: Lab, tmp: Path, hosts: list[tuple[LabHost, Any]]) -> Path:
    """An inventory of these hosts, each with its rocmprov_rocm_version (host var)."""
    text = lab.inventory.read_text()
    group_vars = text[text.index("[lab:vars]"):]
    lines = ["[lab]"] + [f"{h.name} ansible_host={h.address} rocmprov_rocm_version={v}"
                         for h, v in hosts]
    inv = tmp / f"inv-{time.monotonic_ns()}.ini"
    inv.write_text("\n".join(lines) + "\n\n" + group_vars + "\n")
    return inv


def extra(served: Served) -> str:
    return json.dumps({"rocmprov_mirrors": served.mirrors, "rocmprov_torch_enabled": False})


def sh(lab: Lab, host: LabHost, cmd: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return lab.exec(host, ["sh", "-c", cmd], check=check, timeout=300)


def listing(host: LabHost, d: str) -> set[str]:
    p = host.root / d.lstrip("/")
    return {f.name for f in p.iterdir()} if p.is_dir() else set()


def assert_release_installed(lab: Lab, host: LabHost, row: dict[str, Any],
                             facts: dict[str, Any], served: Served) -> None:
    """Sources, key, pin, packages, version record and linker entry of `row`, as the table says."""
    plan = releases.resolve(row["version"], facts, served.mirrors)
    upstream = releases.resolve(row["version"], facts)
    assert plan["error"] == "", plan["error"]
    root = host.root
    keyring = f"/etc/apt/keyrings/rocmprov-{plan['stream']}.asc"
    # TheRock 10.x: AMD's driver repository has its own key (legacy) and suite (codename)
    own = bool(plan["amdgpu_url"]) and upstream["amdgpu_key_url"] != upstream["key_url"]
    rings = {"rocm": keyring, "graphics": keyring,
             "amdgpu": "/etc/apt/keyrings/rocmprov-amdgpu.asc" if own else keyring}
    wanted = {f"{n}.sources" for n in ("rocm", "amdgpu", "graphics") if plan[f"{n}_url"]}
    assert {f for f in listing(host, SOURCES) if f.endswith(".sources")} == wanted
    for name in ("rocm", "amdgpu", "graphics"):
        if plan[f"{name}_url"]:
            suite = (plan["amdgpu_suite"] or plan["suite"]) if name == "amdgpu" else plan["suite"]
            text = (root / SOURCES.lstrip("/") / f"{name}.sources").read_text()
            for line in (f"URIs: {plan[f'{name}_url']}", f"Suites: {suite}",
                         f"Signed-By: {rings[name]}", "Components: main"):
                assert line in text.splitlines(), (line, text)
    assert listing(host, "/etc/apt/keyrings") == {Path(k).name for k in rings.values()
                                                  if k == keyring or own}
    assert (root / keyring.lstrip("/")).read_text() == served.repos.key_text(upstream["key_url"])
    if own:
        assert (root / rings["amdgpu"].lstrip("/")).read_text() == served.repos.key_text(
            upstream["amdgpu_key_url"])
    pins = listing(host, "/etc/apt/preferences.d")
    if plan["pin_origin"]:
        assert pins == {Path(PIN).name}
        assert f"Pin: release o={plan['pin_origin']}" in (root / PIN.lstrip("/")).read_text()
    else:
        assert pins == set(), pins
    for package in plan["packages"]:
        got = sh(lab, host, f"dpkg-query -W -f '${{Version}} ${{Status}}' {package}").stdout
        version, _, status = got.partition(" ")
        assert status == "install ok installed", got
        assert re.match(version_shape(row, newest_sharing(row, package)), version), got
    stream = stream_of(TABLE, row)
    installed = newest_sharing(row, plan["packages"][0]) if plan["packages"] else row["version"]
    for pattern in stream.get("version_files") or []:  # read inside the host: links are absolute
        text = sh(lab, host, f"cat {pattern}", check=False).stdout
        assert text.startswith(str(installed)), (pattern, text)
    assert f"{plan['prefix']}/lib" in (root / "etc/ld.so.conf.d/rocmprov-rocm.conf").read_text()


# ------------------------------------------------------------------ fixtures


@pytest.fixture(scope="module")
def facts_by_key(lab: Lab) -> dict[str, dict[str, Any]]:
    """Ansible's facts for every emulated distro key, read from lab hosts that are those."""
    hosts = lab.hosts[: len(EMULATED)]
    assert len(hosts) == len(EMULATED), "the lab needs a host per emulated distro key"
    for host, key in zip(hosts, EMULATED, strict=True):
        lab.reset(host)
        become(lab, host, key)
    facts = gather_facts(lab, hosts)
    out = {key: facts[h.name] for h, key in zip(hosts, EMULATED, strict=True)}
    for key, f in out.items():
        check_facts(f, key)
    return out


# ------------------------------------------------------------------ a. every row x suite


def _fast_path(lab: Lab, host: LabHost, row: dict[str, Any], key: str, facts: dict[str, Any],
               served: Served) -> str:
    """Write the sources the role would write (from the resolver), apt-get update, simulate the
    install; '' when all is well, else what went wrong."""
    plan = releases.resolve(row["version"], facts, served.mirrors)
    where = f"{row['version']} {key}"
    if plan["error"]:
        return f"{where}: resolver: {plan['error']}"
    iso = host.root / ISO.lstrip("/")
    sh(lab, host, f"rm -rf {ISO} && mkdir -p {ISO}/sources {ISO}/prefs {ISO}/lists/partial")
    for name in ("rocm", "amdgpu", "graphics"):
        if plan[f"{name}_url"]:
            suite = (plan["amdgpu_suite"] or plan["suite"]) if name == "amdgpu" else plan["suite"]
            ring = "amdgpu-keyring" if name == "amdgpu" else "keyring"
            (iso / "sources" / f"{name}.sources").write_text(
                f"Types: deb\nURIs: {plan[f'{name}_url']}\nSuites: {suite}\n"
                f"Components: {' '.join(plan['components'])}\nArchitectures: amd64\n"
                f"Signed-By: {ISO}/{ring}.asc\n")
    if plan["pin_origin"]:
        (iso / "prefs" / "rocm-pin").write_text(
            f"Package: *\nPin: release o={plan['pin_origin']}\nPin-Priority: 600\n")
    for url, ring in ((plan["key_url"], "keyring"), (plan["amdgpu_key_url"], "amdgpu-keyring")):
        fetch = sh(lab, host, "python3 -c 'import sys, urllib.request as u; "
                   f"u.urlretrieve(sys.argv[1], sys.argv[2])' {url} {ISO}/{ring}.asc",
                   check=False)
        if fetch.returncode and (ring == "keyring" or plan["amdgpu_url"]):
            return f"{where}: key {url}: {fetch.stderr[-300:]}"
    update = lab.exec(host, ["apt-get", *APT_ISO, "update"], check=False, timeout=300)
    text = update.stdout + update.stderr
    bad = [ln for ln in text.splitlines() if ln.startswith(("W:", "E:", "Err:"))]
    if update.returncode or bad:
        return f"{where}: apt-get update: {bad or text[-500:]}"
    for name in ("rocm", "amdgpu", "graphics"):
        url = plan[f"{name}_url"].rstrip("/")
        if url and url not in text:
            return f"{where}: apt-get update did not read {url}"
    if not plan["packages"]:
        return ""
    sim = lab.exec(host, ["apt-get", *APT_ISO, "install", "--simulate", "-y", *plan["packages"]],
                   check=False, timeout=300)
    if sim.returncode:
        return f"{where}: apt-get install --simulate: {(sim.stdout + sim.stderr)[-500:]}"
    policy = lab.exec(host, ["apt-cache", *APT_ISO, "policy", *plan["packages"]]).stdout
    priority = "600" if plan["pin_origin"] else "500"
    for package in plan["packages"]:
        m = re.search(rf"^Inst {re.escape(package)} \((\S+) ", sim.stdout, re.M)
        if not m or not re.match(version_shape(row, newest_sharing(row, package)), m.group(1)):
            return f"{where}: {package} not installable as AMD versions it: {sim.stdout[-400:]}"
        if not re.search(rf"^\s+{priority} {re.escape(plan['rocm_url'].rstrip('/'))} ",
                         policy, re.M):
            return f"{where}: {package} not at priority {priority}: {policy[-400:]}"
    return ""


def test_every_release_and_suite_installs_from_the_repositories_the_table_names(
    lab: Lab, facts_by_key: dict[str, dict[str, Any]], amd_mirror: Served
) -> None:
    started = time.monotonic()
    combos: list[tuple[dict[str, Any], str]] = []
    refused: list[str] = []
    for row in rows(TABLE):
        keys = apt_keys(row)
        combos += [(row, k) for k in keys]
        for key in EMULATED:
            if key in keys:
                continue
            plan = releases.resolve(row["version"], facts_by_key[key], amd_mirror.mirrors)
            # a release without an apt repository for this OS is refused, never half-set-up
            assert "no apt repository" in plan["error"], (row["version"], key, plan)
            refused.append(f"{row['version']} {key}")
    hosts = lab.hosts[: len(EMULATED)]
    lanes: list[list[tuple[dict[str, Any], str]]] = [combos[i:: len(hosts)]
                                                     for i in range(len(hosts))]

    def lane(i: int) -> list[str]:
        host = hosts[i]
        out = [_fast_path(lab, host, row, key, facts_by_key[key], amd_mirror)
               for row, key in lanes[i]]
        sh(lab, host, f"rm -rf {ISO}")
        return out

    with ThreadPoolExecutor(len(hosts)) as ex:
        problems = [p for res in ex.map(lane, range(len(hosts))) for p in res if p]
    empty = [f"{r['version']} {k}" for r, k in combos
             if not releases.resolve(r["version"], facts_by_key[k])["packages"]]
    print(f"\n{len(combos)} release x suite combinations through apt in "
          f"{time.monotonic() - started:.1f}s; ok: "
          + ", ".join(f"{r['version']}/{k}" for r, k in combos))
    print(f"refused (no apt repository in the table): {', '.join(refused)}")
    print(f"repository works, the table lists no package to install: {', '.join(empty) or '-'}")
    assert combos, "no row of the table has an apt repository the lab can emulate"
    assert problems == [], "\n".join(problems)


# ------------------------------------------------------------------ b. converge per era


@pytest.fixture(scope="module")
def converged(lab: Lab, amd_mirror: Served, tmp_path_factory: pytest.TempPathFactory
              ) -> dict[str, Any]:
    """One apply, four hosts, one layout era each (on a distro key the era lists), then again."""
    tmp = tmp_path_factory.mktemp("converge")
    eras = layout_eras()
    hosts = {}
    for host, (era, row) in zip(lab.hosts, eras.items(), strict=False):
        lab.reset(host)
        become(lab, host, key_for(row))
        hosts[era] = host
    facts = gather_facts(lab, list(hosts.values()))
    inv = inventory(lab, tmp, [(hosts[e], r["version"]) for e, r in eras.items()])
    args = ("-e", extra(amd_mirror), "--tags", "repo,packages")
    rc1, first, t1 = apply(inv, tmp, *args)
    rc2, second, t2 = apply(inv, tmp, *args)
    return {"eras": eras, "hosts": hosts, "facts": {e: facts[h.name] for e, h in hosts.items()},
            "runs": [(rc1, first, t1), (rc2, second, t2)], "tmp": tmp}


def test_each_layout_era_converges_and_a_second_run_changes_nothing(
    lab: Lab, converged: dict[str, Any], amd_mirror: Served
) -> None:
    (rc1, first, t1), (rc2, second, t2) = converged["runs"]
    eras, hosts = converged["eras"], converged["hosts"]
    picked = ", ".join(f"{e}={r['version']}/{key_for(r)}" for e, r in eras.items())
    print(f"\nconverge {picked}: {t1:.1f}s, again {t2:.1f}s")
    assert rc1 == 0, json.dumps(first["hosts"], indent=1)
    for era, host in hosts.items():
        assert by_host(first)[host.name]["changed"] > 0, era
        assert_release_installed(lab, host, eras[era], converged["facts"][era], amd_mirror)
    assert rc2 == 0, json.dumps(second["hosts"], indent=1)
    assert {h["host"]: h["changed"] for h in second["hosts"]} == {
        h.name: 0 for h in hosts.values()}, second["hosts"]


# ------------------------------------------------------------------ c. scenarios


def test_legacy_to_therock_and_back_replaces_sources_pin_and_keys(
    lab: Lab, converged: dict[str, Any], amd_mirror: Served
) -> None:
    """The newest legacy host moves to the newest TheRock release and the TheRock host back."""
    eras, hosts, tmp = converged["eras"], converged["hosts"], converged["tmp"]
    legacy, therock = eras["legacy-newest"], eras["therock-newest"]
    up, down = hosts["legacy-newest"], hosts["therock-newest"]
    common = [k for k in apt_keys(legacy) if k in apt_keys(therock)]
    assert common, "no distro key has both the newest legacy and the newest TheRock release"
    if key_for(legacy) != common[0] or key_for(therock) != common[0]:
        for host in (up, down):  # start over on a distro key both releases list
            lab.reset(host)
            become(lab, host, common[0])
        first = inventory(lab, tmp, [(up, legacy["version"]), (down, therock["version"])])
        rc, doc, _ = apply(first, tmp, "-e", extra(amd_mirror), "--tags", "repo,packages")
        assert rc == 0, doc["hosts"]
    inv = inventory(lab, tmp, [(up, therock["version"]), (down, legacy["version"])])
    rc, doc, took = apply(inv, tmp, "-e", extra(amd_mirror), "--tags", "repo,packages")
    print(f"\nswitch {legacy['version']} <-> {therock['version']} on {common[0]}: {took:.1f}s")
    assert rc == 0, json.dumps(doc["hosts"], indent=1)
    facts = gather_facts(lab, [up, down])
    # every old source, pin and keyring gone, only the new release's left (listings are exact)
    assert_release_installed(lab, up, therock, facts[up.name], amd_mirror)
    assert_release_installed(lab, down, legacy, facts[down.name], amd_mirror)
    # the other stream's packages went first (AMD: uninstall one before the other), so its
    # prefix is gone and /opt/rocm belongs to the release installed now
    for host, old in ((up, legacy), (down, therock)):
        for package in old.get("packages") or []:
            status = sh(lab, host, f"dpkg-query -W -f '${{Status}}' {package}", check=False)
            assert "installed" not in status.stdout.replace("not-installed", ""), (package, status)
        assert not (host.root / str(old["prefix"]).lstrip("/")).exists(), old["prefix"]
    for host in (up, down):
        update = lab.exec(host, ["apt-get", "update"], check=False, timeout=300)
        out = update.stdout + update.stderr
        assert update.returncode == 0 and "W:" not in out and "E:" not in out, out[-1500:]


def test_a_host_set_up_by_amds_instructions_converges_and_uninstall_takes_back_everything(
    lab: Lab, amd_mirror: Served, tmp_path: Path
) -> None:
    """Host A: AMD's one-line sources with signed-by=/etc/apt/keyrings/rocm.gpg and its pin
    file, ROCm installed from them; apply must not leave apt with two Signed-By for one URI.
    Host B: fresh; apply, then --tags uninstall: dpkg and /etc/apt exactly as before."""
    row = legacy_full()
    amd, fresh = lab.hosts[0], lab.hosts[1]
    for host in (amd, fresh):
        lab.reset(host)
    facts = gather_facts(lab, [amd])[amd.name]
    assert "debian-12" in apt_keys(row), f"legacy {row['version']} lists no Debian 12 suite"
    plan = releases.resolve(row["version"], facts, amd_mirror.mirrors)
    upstream = releases.resolve(row["version"], facts)
    stream = stream_of(TABLE, row)
    # what amdgpu-install / AMD's quick start leave: a dearmored key, .list files, the pin
    key = amd_mirror.repos.key_text(upstream["key_url"])
    keyring = amd.root / "etc/apt/keyrings/rocm.gpg"
    keyring.parent.mkdir(parents=True, exist_ok=True)
    keyring.write_bytes(subprocess.run(["gpg", "--dearmor"], input=key.encode(),
                                       capture_output=True, check=True).stdout)
    lists: dict[str, str] = {}
    for name in (n for n in ("rocm", "amdgpu", "graphics") if plan[f"{n}_url"]):
        # AMD writes its graphics line into rocm.list, next to the rocm line
        file = "rocm.list" if name == "graphics" else f"{name}.list"
        path = next(p for p in stream["amd_list_files"] if Path(p).name == file)
        lists[path] = lists.get(path, "") + (
            f"deb [arch=amd64 signed-by=/etc/apt/keyrings/rocm.gpg] "
            f"{plan[f'{name}_url']} {plan['suite']} main\n")
    for path, text in lists.items():
        (amd.root / path.lstrip("/")).write_text(text)
    (amd.root / stream["amd_pin_file"].lstrip("/")).write_text(
        f"Package: *\nPin: release o={stream['pin_origin']}\nPin-Priority: 600\n")
    amd_install = sh(lab, amd, "apt-get update && apt-get install -y "
                     + " ".join(plan["packages"]), check=False)
    assert amd_install.returncode == 0, amd_install.stdout[-1500:] + amd_install.stderr[-1500:]

    before = uninstall_state(lab, fresh)
    inv = inventory(lab, tmp_path, [(amd, row["version"]), (fresh, row["version"])])
    rc, doc, took = apply(inv, tmp_path, "-e", extra(amd_mirror), "--tags", "repo,packages")
    assert rc == 0, json.dumps(doc["hosts"], indent=1)
    for path in lists:
        assert not (amd.root / path.lstrip("/")).exists(), f"{path} left next to the .sources"
    update = lab.exec(amd, ["apt-get", "update"], check=False, timeout=300)
    out = update.stdout + update.stderr
    assert update.returncode == 0 and "Conflicting values set for option Signed-By" not in out
    assert "W:" not in out and "E:" not in out, out[-1500:]
    # the test has teeth: AMD's rocm.list next to rocmprov's sources is what apt refuses
    path, line = next(iter(lists.items()))
    (amd.root / path.lstrip("/")).write_text(line)
    clash = lab.exec(amd, ["apt-get", "update"], check=False, timeout=300)
    (amd.root / path.lstrip("/")).unlink()
    assert "Conflicting values set for option Signed-By" in clash.stdout + clash.stderr

    rc, doc, t_un = apply(inv, tmp_path, "-e", extra(amd_mirror), "--tags", "uninstall",
                          "--limit", fresh.name)
    assert rc == 0, json.dumps(doc["hosts"], indent=1)
    after = uninstall_state(lab, fresh)
    print(f"\nAMD-instructions host + fresh host apply {took:.1f}s, uninstall {t_un:.1f}s")
    for part in before:
        assert after[part] == before[part], (part, diff_lines(before[part], after[part]))


def uninstall_state(lab: Lab, host: LabHost) -> dict[str, str]:
    """What apply may add: packages, /etc/apt, ROCm's prefixes, linker entries, alternatives,
    rocmprov's state. /opt itself is left out: the base has it empty and owned by no package,
    so dpkg removes it with the last package that shipped a file below it (AMD's too)."""
    return {
        "packages": sh(lab, host, "dpkg-query -W -f '${Package} ${Version} ${Status}\\n'").stdout,
        "files": sh(lab, host, "find /etc/apt /opt /etc/ld.so.conf.d /etc/alternatives /var/lib "
                    "-mindepth 1 -path /var/lib/apt -prune -o -path /var/lib/dpkg -prune -o "
                    "-path /var/lib/systemd -prune -o -printf '%p %y %l %s\\n' | sort",
                    check=False).stdout,
    }


def diff_lines(a: str, b: str) -> dict[str, list[str]]:
    la, lb = set(a.splitlines()), set(b.splitlines())
    return {"gone": sorted(la - lb), "added": sorted(lb - la)}


# ------------------------------------------------------------------ d. check mode


def test_check_mode_shows_sources_key_and_pin_and_changes_nothing(
    lab: Lab, clean_host: LabHost, amd_mirror: Served, tmp_path: Path
) -> None:
    row = legacy_full()  # the layout with the most to show: three sources and a pin
    facts = gather_facts(lab, [clean_host])[clean_host.name]
    plan = releases.resolve(row["version"], facts, amd_mirror.mirrors)
    assert plan["error"] == "", plan["error"]
    before = {**state_of(lab, clean_host), **uninstall_state(lab, clean_host)}
    inv = inventory(lab, tmp_path, [(clean_host, row["version"])])
    rc, doc, took = apply(inv, tmp_path, "--check", "--diff", "-e", extra(amd_mirror))
    print(f"\ncheck mode on a fresh host: {took:.1f}s rc={rc}")
    assert rc == 0 and doc["check"] is True, json.dumps(doc["hosts"], indent=1)
    # what apply shows the admin: each host's changes with their diffs (JSON and table alike)
    shown = "\n".join(c for h in doc["hosts"] for c in h["changes"])
    wanted = [f"+URIs: {plan[f'{n}_url']}" for n in ("rocm", "amdgpu", "graphics")
              if plan[f"{n}_url"]]
    wanted += [f"would fetch {plan['key_url']}", f"+Pin: release o={plan['pin_origin']}"]
    missing = [w for w in wanted if w not in shown]
    assert missing == [], f"not shown by apply --check --diff: {missing}\n{shown[-3000:]}"
    after = {**state_of(lab, clean_host), **uninstall_state(lab, clean_host)}
    assert [k for k in before if before[k] != after[k]] == [], {
        k: diff_lines(before[k], after[k]) for k in before if before[k] != after[k]}

