"""ansible-test sanity on the built collection, and ansible-builder create on
execution-environment.yml (issue 17).

Neither tool is a rocmprov dependency: each gets a virtual environment of its own, made once
and kept under ~/.cache/rocmprov-tests (ansible-core of the project's venv plus ansible-test's
own pinned sanity requirements; ansible-builder). No container engine is used: ansible-test runs
with --local, and ansible-builder only writes the build context.

ansible-test makes a virtual environment per sanity test and bootstraps pip in it with a script
it downloads from ci-files.testing.ansible.com, which this machine cannot reach, and it runs pip
with PIP_CONFIG_FILE=/dev/null (so the machine's CA bundle setting is not read). The test gives
ansible-test a HOME of its own holding a stand-in bootstrap script (GET_PIP below); every sanity
test then runs with the requirements ansible-test itself pins.
"""

from __future__ import annotations

import importlib.metadata
import os
import re
import shutil
import sys
from pathlib import Path

import pytest
import yaml

from tests.test_collection import BIN, REPO, ansible_env, build_tree, builder, run

pytestmark = pytest.mark.long  # minutes in CI (a sanity venv from scratch): scheduled first

CACHE = Path(
    os.environ.get("ROCMPROV_TEST_CACHE")
    or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "rocmprov-tests"
)
CORE = importlib.metadata.version("ansible-core")
PYVER = f"{sys.version_info.major}.{sys.version_info.minor}"
GET_PIP = '''"""Stand-in for ansible-test's pip bootstrap script (get-pip-X.py from
ci-files.testing.ansible.com, unreachable here), written by rocmprov's
tests/test_collection_sanity.py: ensurepip gives the new venv a pip, which installs the pip,
setuptools and wheel that ansible-test asks for from the package index, as get-pip.py does.
ansible-test runs pip with PIP_CONFIG_FILE=/dev/null, so the machine's CA bundle setting is not
read: the venv's pip gets the system CA bundle in place of its vendored certifi one."""
import ensurepip
import glob
import os
import shutil
import subprocess
import sys

SYSTEM_CA = "/etc/ssl/certs/ca-certificates.crt"

ensurepip.bootstrap(upgrade=True)
args = [a for a in sys.argv[1:] if a not in ("--no-setuptools", "--no-wheel")]
cert = ["--cert", SYSTEM_CA] if os.path.exists(SYSTEM_CA) else []
subprocess.check_call([sys.executable, "-m", "pip", "install", *cert, *args])
if cert:
    for bundle in glob.glob(os.path.join(sys.prefix, "lib", "python*", "site-packages", "pip",
                                         "_vendor", "certifi", "cacert.pem")):
        shutil.copyfile(SYSTEM_CA, bundle)
'''


def tool_venv(name: str, *pip_args: str) -> Path:
    """A virtual environment under CACHE, made once (a marker file says it is complete)."""
    path = CACHE / name
    if (path / ".complete").is_file():
        return path
    shutil.rmtree(path, ignore_errors=True)
    path.parent.mkdir(parents=True, exist_ok=True)
    made = run([sys.executable, "-m", "venv", str(path)], timeout=300)
    assert made.returncode == 0, made.stderr
    pip = run([str(path / "bin/pip"), "install", "-q", *pip_args], timeout=900)
    assert pip.returncode == 0, f"pip install {pip_args}: {pip.stderr[-2000:]}"
    (path / ".complete").write_text("")
    return path


def sanity_venv() -> Path:
    import ansible_test

    reqs = Path(ansible_test.__file__).parent / "_data/requirements"
    files = sorted(reqs.glob("sanity.*.txt"))
    assert files, reqs
    args = [f"ansible-core=={CORE}"] + [a for f in files for a in ("-r", str(f))]
    return tool_venv(f"ansible-sanity-{CORE}-py{PYVER}", *args)


def ansible_test_home() -> Path:
    """A HOME for ansible-test holding the stand-in for the pip bootstrap script it asks for."""
    from types import SimpleNamespace

    from ansible_test._internal.python_requirements import get_venv_packages

    pip = get_venv_packages(SimpleNamespace(version=PYVER))["pip"]  # it reads .version only
    home = CACHE / "ansible-test-home"
    cache = home / ".ansible/test/cache"
    cache.mkdir(parents=True, exist_ok=True)
    (cache / f"get_pip_{pip.replace('.', '_')}.py").write_text(GET_PIP)
    return home


def test_ansible_test_sanity_passes(tmp_path: Path) -> None:
    venv = sanity_venv()
    tree = build_tree(tmp_path)
    env = {"HOME": str(ansible_test_home()), "PATH": f"{venv / 'bin'}:{os.environ['PATH']}"}
    listed = run([str(venv / "bin/ansible-test"), "sanity", "--list-tests"], env=env, cwd=tree)
    assert listed.returncode == 0, listed.stderr
    expected = {
        ln.strip() for ln in listed.stdout.splitlines() if re.fullmatch(r"[a-z0-9-]+", ln.strip())
    }
    assert {
        "validate-modules",
        "ansible-doc",
        "pylint",
        "import",
        "compile",
        "yamllint",
    } <= expected
    cp = run(
        [str(venv / "bin/ansible-test"), "sanity", "--local", "--python", PYVER, "--color", "no"],
        env=env,
        cwd=tree,
        timeout=1800,
    )
    out = cp.stdout + cp.stderr
    ran = set(re.findall(r'Running sanity test "([a-z0-9-]+)"', out))
    errors = [ln for ln in out.splitlines() if ln.startswith(("ERROR", "FATAL"))]
    assert cp.returncode == 0, "\n".join(errors[-40:]) or out[-3000:]
    assert ran == expected, f"not run: {expected - ran}"
    assert "skipped" not in out.lower(), [ln for ln in out.splitlines() if "skip" in ln.lower()]
    # the one ignore entry is the license header (rocmprov is MIT): nothing else is waived
    ignores = (tree / f"tests/sanity/ignore-{'.'.join(CORE.split('.')[:2])}.txt").read_text()
    assert {ln.split()[1] for ln in ignores.splitlines() if ln.strip()} == {
        "validate-modules:missing-gplv3-license"
    }


def test_sanity_catches_a_broken_module(tmp_path: Path) -> None:
    """The same run fails on a module whose documentation disagrees with its argument spec."""
    venv = sanity_venv()
    tree = build_tree(tmp_path)
    module = tree / "plugins/modules/audit.py"
    module.write_text(module.read_text().replace("    default: 600\n", "    default: 60\n", 1))
    env = {"HOME": str(ansible_test_home()), "PATH": f"{venv / 'bin'}:{os.environ['PATH']}"}
    cp = run(
        [str(venv / "bin/ansible-test"), "sanity", "--local", "--python", PYVER, "--color", "no",
         "--test", "validate-modules"],
        env=env,
        cwd=tree,
        timeout=900,
    )  # fmt: skip
    assert cp.returncode != 0
    assert "doc-default-does-not-match-spec" in cp.stdout + cp.stderr


def test_ansible_builder_create_writes_a_context_that_installs_the_collection(
    tmp_path: Path,
) -> None:
    venv = tool_venv("ansible-builder", "ansible-builder")
    work = tmp_path / "ee"
    (work / "build/collection").mkdir(parents=True)
    shutil.copy2(REPO / "execution-environment.yml", work)
    tree = build_tree(tmp_path / "tree")
    tarball = builder.galaxy_build(tree, work / "build/collection")
    cp = run(
        [str(venv / "bin/ansible-builder"), "create", "-f", "execution-environment.yml",
         "-c", "context", "--output-filename", "Containerfile"],
        cwd=work,
    )  # fmt: skip
    assert cp.returncode == 0, cp.stdout + cp.stderr
    ctx = work / "context"
    containerfile = (ctx / "Containerfile").read_text()
    definition = yaml.safe_load((REPO / "execution-environment.yml").read_text())
    assert definition["version"] == 3
    assert 'ARG PYCMD="/usr/bin/python3.11"' in containerfile
    assert "ansible-galaxy collection install" in containerfile
    assert "COPY _build/rocmprov-collection/ /tmp/rocmprov-collection/" in containerfile
    assert (ctx / "_build/rocmprov-collection" / tarball.name).read_bytes() == tarball.read_bytes()
    reqs = yaml.safe_load((ctx / "_build/requirements.yml").read_text())
    assert reqs == {
        "collections": [{"name": "/tmp/rocmprov-collection/rocmprov-rocm.tar.gz", "type": "file"}]
    }
    # What the image's galaxy stage does, here: the renamed tarball installs from that file.
    staged = tmp_path / "staged/rocmprov-rocm.tar.gz"
    staged.parent.mkdir()
    shutil.copy2(ctx / "_build/rocmprov-collection" / tarball.name, staged)
    reqs["collections"][0]["name"] = str(staged)
    (tmp_path / "requirements.yml").write_text(yaml.safe_dump(reqs))
    dest = tmp_path / "image-collections"
    inst = run([str(BIN / "ansible-galaxy"), "collection", "install", "-r",
                str(tmp_path / "requirements.yml"), "-p", str(dest)])  # fmt: skip
    assert inst.returncode == 0, inst.stdout + inst.stderr
    doc = run([str(BIN / "ansible-doc"), "rocmprov.rocm.audit"], env=ansible_env(dest))
    assert doc.returncode == 0 and "fail_on_critical" in doc.stdout, doc.stderr
    # ansible-builder's own check that the collection declares no unmet Python/system needs
    intro = run([str(venv / "bin/ansible-builder"), "introspect", str(dest)], timeout=120)
    assert intro.returncode == 0, intro.stderr
    assert yaml.safe_load(intro.stdout) == {"python": [], "system": []}
