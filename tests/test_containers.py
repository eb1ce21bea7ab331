"""Container readiness: the parsers on the tools' own outputs (tests/fixtures/containers), the
checks on facts built the way a bundle builds them (probe text -> build_facts -> run_checks)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rocmprov.checks import run_checks
from rocmprov.collect.bundle import Bundle, ProbeOutput
from rocmprov.collect.containers import CONTAINER_PROBE_IDS
from rocmprov.collect.probes import PROBE_IDS
from rocmprov.facts.host import build_facts
from rocmprov.model import Severity
from rocmprov.parse.cdi import parse_spec
from rocmprov.parse.containers import (
    CONTAINER_PROBES,
    parse_daemon_json,
    parse_docker_info,
    parse_node_stats,
    tool_version,
)
from tests.fixtureload import FIXTURES, load

FX = sorted((FIXTURES / "containers").glob("*.txt"))


def fixture(name: str) -> str:
    return load(FIXTURES / "containers" / name).text


@pytest.mark.parametrize("path", FX, ids=[p.name for p in FX])
def test_fixture_headers(path: Path) -> None:
    fx = load(path)
    assert str(fx.header["source"]).startswith("https://")
    assert fx.header.get("what") and fx.text.strip()
    assert "derived" in fx.path.name or "derived" not in fx.header  # a derived one says so


def test_probe_ids_registered() -> None:
    assert set(CONTAINER_PROBE_IDS) <= set(PROBE_IDS)
    assert set(CONTAINER_PROBES) == set(CONTAINER_PROBE_IDS)


@pytest.mark.parametrize(
    "name,expect_valid",
    [
        ("cdi-schema-good-spec-example.txt", True),
        ("cdi-schema-bad-explicit-empty.txt", False),
        ("amd-ctk-cdi-generate-testinterface-derived.txt", True),
    ],
)
def test_cdi_schema_fixtures(name: str, expect_valid: bool) -> None:
    fx = load(FIXTURES / "containers" / name)
    spec = parse_spec("/etc/cdi/x.json", fx.text)
    assert spec.valid is expect_valid, spec.errors
    if expect_valid:
        assert spec.kind == fx.expect["kind"]
        assert [d.name for d in spec.devices] == fx.expect["devices"]
    else:
        assert {"spec: cdiVersion is required", "spec: kind is required",
                "spec: devices is required"} <= set(spec.errors)


def test_amd_spec_nodes() -> None:
    text = fixture("amd-ctk-cdi-generate-testinterface-derived.txt")
    spec = parse_spec("/etc/cdi/amd.json", text)
    all_dev = spec.device("all")
    assert all_dev is not None
    assert [n.path for n in all_dev.nodes] == [
        "/dev/dri/renderD128", "/dev/dri/card1", "/dev/dri/renderD129", "/dev/dri/card2",
        "/dev/kfd"]
    assert spec.qualified()[-1] == "amd.com/gpu=all"


@pytest.mark.parametrize(
    "doc,error",
    [
        ({"cdiVersion": "0.6.0", "kind": "amd.com/gpu", "devices": []}, "devices is empty"),
        ({"cdiVersion": "0.6", "kind": "amd.com/gpu", "devices": [{"name": "0",
          "containerEdits": {}}]}, "not a semantic version"),
        ({"cdiVersion": "0.6.0", "kind": "amd", "devices": [{"name": "0",
          "containerEdits": {}}]}, "not vendor.tld/class"),
        ({"cdiVersion": "0.6.0", "kind": "amd.com/gpu", "devices": [{"name": "-x",
          "containerEdits": {}}]}, "must start and end"),
        ({"cdiVersion": "0.6.0", "kind": "amd.com/gpu", "devices": [{"name": "0"}]},
         "containerEdits is required"),
        ({"cdiVersion": "0.6.0", "kind": "amd.com/gpu", "devices": [{"name": "0",
          "containerEdits": {"deviceNodes": [{"major": 226}]}}]}, "path is required"),
        ({"cdiVersion": "0.6.0", "kind": "amd.com/gpu", "devices": [{"name": "0",
          "containerEdits": {}}, {"name": "0", "containerEdits": {}}]}, "more than once"),
    ],
)
def test_cdi_schema_rules(doc: dict, error: str) -> None:
    spec = parse_spec("/etc/cdi/amd.json", json.dumps(doc))
    assert any(error in e for e in spec.errors), spec.errors


@pytest.mark.parametrize("text", ["", "{", "[1, 2]", "\x00\x01", "a: [", "null"])
def test_cdi_garbage(text: str) -> None:
    for path in ("/etc/cdi/a.json", "/etc/cdi/a.yaml"):
        assert not parse_spec(path, text).valid


def test_cdi_yaml() -> None:
    text = ("cdiVersion: 0.5.0\nkind: vendor.com/device\ndevices:\n- name: dev0\n"
            "  containerEdits:\n    deviceNodes:\n    - path: /dev/x\n")
    spec = parse_spec("/var/run/cdi/v.yaml", text)
    assert spec.valid and spec.devices[0].nodes[0].path == "/dev/x"


def test_docker_info_fixtures() -> None:
    info = parse_docker_info(fixture("docker-info-with-devices-json.txt"))
    assert info.server_version == "17.06.1-ce"
    assert info.cdi_spec_dirs == ("/etc/cdi", "/var/run/cdi")
    assert info.runtimes == ("runc",) and info.default_runtime == "runc"
    assert info.discovered == ("com.example.device1", "nvidia.com/gpu=gpu0")
    bad = parse_docker_info(fixture("docker-info-errors-json.txt"))
    assert bad.errors == ("a server error occurred",)
    down = parse_docker_info("Cannot connect to the Docker daemon at unix:///var/run/docker.sock."
                             " Is the docker daemon running?\n")
    assert "daemon running" in down.errors[0]


def test_docker_info_survives_the_bundle_scrubber() -> None:
    """A bundle stores docker-info scrubbed: docker's "Plugins": {"Authorization": null} once
    lost its comma there (the HTTP Authorization pattern), leaving JSON no parser reads."""
    from rocmprov.collect.scrub import scrub

    text = fixture("docker-info-with-devices-json.txt")
    assert scrub(text) == text
    assert parse_docker_info(scrub(text)).server_version == "17.06.1-ce"


@pytest.mark.parametrize(
    "name,text,version",
    [
        ("docker", "Docker version 28.3.0, build 265f709\n", "28.3.0"),
        ("podman", "podman version 4.3.1\n", "4.3.1"),
        ("containerd", "containerd github.com/containerd/containerd 1.6.20~ds1 1.6.20~ds1-1+b1",
         "1.6.20"),
        ("containerd", "containerd containerd.io 1.7.27 05044ec0a9a75232cad458027ca83437aed3a4f6",
         "1.7.27"),
        ("amd-ctk", "Version: 1.2.0\nBuild Date: 2025-09-01\nGitCommit: abc\n", "1.2.0"),
        ("amd-ctk", "Version: dev\nBuild Date: unknown\nGitCommit: none\n", "dev"),
        ("crun", "crun version 1.8.1", "1.8.1"),
        ("docker", "", ""),
    ],
)
def test_tool_version(name: str, text: str, version: str) -> None:
    assert tool_version(name, text) == version


def test_daemon_json() -> None:
    d = parse_daemon_json('{"runtimes": {"amd": {"path": "amd-container-runtime", "args": []}},'
                          ' "features": {"cdi": true, "containerd-snapshotter": true}}')
    assert d.runtimes == {"amd": "amd-container-runtime"} and d.features["cdi"] is True
    assert parse_daemon_json("{,").error.startswith("not JSON")
    assert parse_daemon_json("[]").error == "not a JSON object"
    assert parse_daemon_json('{"runtimes": []}').runtimes == {}


def test_node_stats() -> None:
    nodes = parse_node_stats(
        "/dev/kfd|character special file|ee|0|660|root|render|992|\n"
        "/dev/dri/by-path|directory|0|0|755|root|root|0|\n"
        "/dev/dri/card0|character special file|e2|0|660|root|video|44|ast\n"
        "garbage\n/dev/x|character special file|zz|0|660|root|root|0|\n")
    assert (nodes["/dev/kfd"].major, nodes["/dev/kfd"].minor) == (238, 0)
    assert nodes["/dev/dri/by-path"].kind == "d" and nodes["/dev/dri/card0"].driver == "ast"
    assert "/dev/x" not in nodes


# ---------------------------------------------------------------- checks through build_facts

KFD = "/dev/kfd|character special file|ee|0|660|root|render|992|amdgpu"
R128 = "/dev/dri/renderD128|character special file|e2|80|660|root|render|992|amdgpu"
R129 = "/dev/dri/renderD129|character special file|e2|81|660|root|render|992|amdgpu"
CARD0_AST = "/dev/dri/card0|character special file|e2|0|660|root|video|44|ast"


def amd_spec(*render: int, version: str = "0.6.0") -> str:
    def node(path: str, major: int, minor: int) -> dict:
        n = {"path": path, "type": "c", "major": major, "minor": minor, "fileMode": 432,
             "permissions": "rwm", "uid": 0, "gid": 992}
        if not minor:
            del n["minor"]  # as Go's omitempty writes it
        return n

    kfd = node("/dev/kfd", 238, 0)
    gpus = [[node(f"/dev/dri/renderD{r}", 226, r)] for r in render]
    devices = [{"name": str(i), "containerEdits": {"deviceNodes": [*g, kfd]}}
               for i, g in enumerate(gpus)]
    devices.append({"name": "all", "containerEdits": {"deviceNodes": [
        *(n for g in gpus for n in g), kfd]}})
    return json.dumps({"cdiVersion": version, "kind": "amd.com/gpu", "devices": devices,
                       "containerEdits": {}}, indent=2)


def bundle(tools: str = "", config: str = "", specs: dict[str, str] | None = None,
           nodes: tuple[str, ...] = (), docker_info: str | None = None,
           groups: str = "--- user alice\nuid=1000(alice) gid=1000(alice) "
           "groups=1000(alice),44(video),992(render)\n--- getent\nrender:x:992:\nvideo:x:44:\n",
           ) -> Bundle:
    cdi = "".join(f"== spec {p} {len(t.encode())}\n{t}\n" for p, t in (specs or {}).items())
    cdi += "== nodes\n" + "".join(n + "\n" for n in nodes)
    outs = {
        "containers": ProbeOutput("containers", "", 0, tools),
        "container-config": ProbeOutput("container-config", "", 0, config),
        "cdi-specs": ProbeOutput("cdi-specs", "", 0, cdi),
        "groups": ProbeOutput("groups", "", 0, groups),
    }
    outs["docker-info"] = (ProbeOutput("docker-info", "", 0, docker_info) if docker_info
                           is not None else ProbeOutput("docker-info", "", 127, "", "no docker"))
    return Bundle("h1", outs)


def findings(b: Bundle) -> dict[str, list]:
    out: dict[str, list] = {}
    for f in run_checks(build_facts(b)):
        if f.check.startswith("container."):
            out.setdefault(f.check, []).append(f)
    return out


def sev(fs: dict[str, list], check: str) -> Severity:
    return max((f.severity for f in fs.get(check, [])), key=lambda s: s.rank)


PODMAN = "== tool podman /usr/bin/podman\npodman version 4.9.3\n\n== tool crun /usr/bin/crun\n" \
         "crun version 1.14.1\n"
CTK = "== tool amd-ctk /usr/local/bin/amd-ctk\nVersion: 1.2.0\nBuild Date: x\nGitCommit: y\n" \
      "== tool amd-container-runtime /usr/local/bin/amd-container-runtime\n"
IDS = "== ids /etc/subuid\nalice:100000:65536\n== ids /etc/subgid\nalice:100000:65536\n"


def test_no_runtime_is_not_applicable() -> None:
    fs = findings(bundle())
    assert fs and all(f.severity is Severity.SKIPPED for v in fs.values() for f in v)
    assert "no container runtime" in fs["container.runtime"][0].summary


def test_real_gpu_server_without_containers() -> None:
    """The probes' real output on the NVIDIA H200 VM (Ubuntu 24.04.3) this project borrows,
    2026-12-04: no engine, no /etc/cdi, no /dev/kfd or /dev/dri; subordinate ids for `ubuntu`.
    Every container check is not applicable, none is a problem."""
    ids = "== ids /etc/subuid\nubuntu:100000:65536\n== ids /etc/subgid\nubuntu:100000:65536\n"
    fs = findings(bundle("", ids))
    assert {f.severity for v in fs.values() for f in v} == {Severity.SKIPPED}
    assert len(fs) == 7


def test_old_bundle_without_container_probes() -> None:
    b = Bundle("h1", {"groups": ProbeOutput("groups", "", 0, "")})
    fs = findings(b)
    assert all(f.severity is Severity.SKIPPED for v in fs.values() for f in v)


def test_ready_podman_host() -> None:
    fs = findings(bundle(PODMAN + CTK, IDS, {"/etc/cdi/amd.json": amd_spec(128)}, (KFD, R128)))
    bad = [f for v in fs.values() for f in v if f.severity.rank > 0]
    assert not bad, bad
    assert sev(fs, "container.cdi.spec") is Severity.OK
    assert sev(fs, "container.cdi.stale") is Severity.OK


def test_stale_spec_after_gpu_change() -> None:
    fs = findings(bundle(PODMAN + CTK, IDS, {"/etc/cdi/amd.json": amd_spec(128)},
                         (KFD, R129, CARD0_AST)))
    stale = fs["container.cdi.stale"]
    assert stale[0].severity is Severity.CRITICAL
    assert "/dev/dri/renderD128" in stale[0].summary and "amd-ctk cdi generate" in stale[0].fix
    assert any("renderD129" in f.summary and f.severity is Severity.WARNING for f in stale)
    assert not any("card0" in f.summary for f in stale)  # the BMC's ast card is not AMD's


def test_renumbered_node_is_stale() -> None:
    moved = "/dev/dri/renderD128|character special file|e2|81|660|root|render|992|amdgpu"
    fs = findings(bundle(PODMAN + CTK, IDS, {"/etc/cdi/amd.json": amd_spec(128)}, (KFD, moved)))
    assert "226:129, the spec says 226:128" in fs["container.cdi.stale"][0].summary


def test_old_podman_cannot_read_amd_spec() -> None:
    old = PODMAN.replace("4.9.3", "4.3.1")
    fs = findings(bundle(old + CTK, IDS, {"/etc/cdi/amd.json": amd_spec(128)}, (KFD, R128)))
    assert sev(fs, "container.cdi.spec") is Severity.CRITICAL
    assert "4.7.0" in fs["container.cdi.spec"][0].expected
    ok = findings(bundle(old + CTK, IDS, {"/etc/cdi/amd.json": amd_spec(128, version="0.5.0")},
                         (KFD, R128)))
    assert sev(ok, "container.cdi.spec") is Severity.OK


def test_broken_and_missing_specs() -> None:
    fs = findings(bundle(PODMAN + CTK, IDS, {"/etc/cdi/amd.json": "{\"kind\": "}, (KFD, R128)))
    assert sev(fs, "container.cdi.spec") is Severity.CRITICAL
    fs = findings(bundle(PODMAN + CTK, IDS, {}, (KFD, R128)))
    assert sev(fs, "container.cdi.spec") is Severity.WARNING
    fs = findings(bundle(PODMAN, IDS, {}, ()))  # no toolkit, no GPU: device flags, not a problem
    assert sev(fs, "container.cdi.spec") is Severity.SKIPPED
    foreign = {"/etc/cdi/other.yaml": "kind: [", "/etc/cdi/amd.json": amd_spec(128)}
    fs = findings(bundle(PODMAN + CTK, IDS, foreign, (KFD, R128)))
    assert {f.severity for f in fs["container.cdi.spec"]} == {Severity.WARNING, Severity.OK}


def test_conflicting_specs() -> None:
    same = {"/etc/cdi/amd.json": amd_spec(128), "/etc/cdi/amd-old.json": amd_spec(128)}
    fs = findings(bundle(PODMAN + CTK, IDS, same, (KFD, R128)))
    assert sev(fs, "container.cdi.conflict") is Severity.CRITICAL
    across = {"/etc/cdi/amd.json": amd_spec(128), "/var/run/cdi/amd.json": amd_spec(128)}
    fs = findings(bundle(PODMAN + CTK, IDS, across, (KFD, R128)))
    f = fs["container.cdi.conflict"][0]
    assert f.severity is Severity.WARNING and "/var/run/cdi/amd.json wins" in f.summary


def test_missing_group_and_subids() -> None:
    groups = ("--- user alice\nuid=1000(alice) gid=1000(alice) groups=1000(alice),44(video)\n"
              "--- getent\nrender:x:992:\nvideo:x:44:\n")
    fs = findings(bundle(PODMAN + CTK, "== ids /etc/subuid\n== ids /etc/subgid\n",
                         {"/etc/cdi/amd.json": amd_spec(128)}, (KFD, R128), groups=groups))
    user = fs["container.user"][0]
    assert user.severity is Severity.WARNING and user.subject == "alice"
    assert "not in render" in user.summary and "subuid" in user.summary


def test_runc_loses_groups() -> None:
    tools = "== tool podman /usr/bin/podman\npodman version 4.9.3\n== tool runc /usr/bin/runc\n" \
            "runc version 1.1.12\n"
    fs = findings(bundle(tools, IDS))
    assert sev(fs, "container.podman.groups") is Severity.WARNING
    conf = IDS + '== conf /etc/containers/containers.conf.d/50-rocmprov-gpu.conf\n[containers]\n' \
                 'annotations = ["run.oci.keep_original_groups=1"]\n'
    fs = findings(bundle(PODMAN, conf))
    assert "50-rocmprov-gpu.conf" in fs["container.podman.groups"][0].summary


DOCKER = "== tool docker /usr/bin/docker\nDocker version {v}, build 1\n"


def test_docker_config() -> None:
    spec = {"/etc/cdi/amd.json": amd_spec(128)}
    old = DOCKER.format(v="26.1.5") + CTK
    fs = findings(bundle(old, '== file /etc/docker/daemon.json\n{"log-driver": "local"}\n', spec,
                         (KFD, R128)))
    assert sev(fs, "container.docker.config") is Severity.WARNING
    assert "features.cdi" in fs["container.docker.config"][0].summary
    on = '== file /etc/docker/daemon.json\n{"features": {"cdi": true}, "runtimes": {"amd": ' \
         '{"path": "amd-container-runtime"}}, "default-runtime": "amd"}\n'
    fs = findings(bundle(old, on, spec, (KFD, R128)))
    assert sev(fs, "container.docker.config") is Severity.OK
    fs = findings(bundle(DOCKER.format(v="28.3.0"), on, spec, (KFD, R128)))
    assert sev(fs, "container.docker.config") is Severity.CRITICAL  # default amd, no runtime
    fs = findings(bundle(DOCKER.format(v="28.3.0"), "== file /etc/docker/daemon.json\n{,\n"))
    assert sev(fs, "container.docker.config") is Severity.CRITICAL
    fs = findings(bundle(DOCKER.format(v="20.10.24") + CTK, "", spec, (KFD, R128)))
    assert sev(fs, "container.runtime") is Severity.WARNING  # no CDI before Docker 25


def test_docker_user_and_daemon_down() -> None:
    info = "Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker " \
           "daemon running?\n"
    fs = findings(bundle(DOCKER.format(v="28.3.0"), "", docker_info=info))
    assert sev(fs, "container.runtime") is Severity.WARNING
    assert "docker group" in fs["container.user"][0].summary
    denied = "permission denied while trying to connect to the Docker daemon socket at " \
             "unix:///var/run/docker.sock: Get ...: dial unix /var/run/docker.sock: connect: " \
             "permission denied\n"
    fs = findings(bundle(DOCKER.format(v="28.3.0"), "", docker_info=denied))
    assert sev(fs, "container.runtime") is Severity.OK
