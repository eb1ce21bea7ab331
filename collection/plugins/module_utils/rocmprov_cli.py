# MIT License (see the collection's README.md); part of rocmprov.
"""Run rocmprov's own audit on the managed node and read its JSON document.

The modules do not carry a copy of rocmprov's checks: they run the `rocmprov` command that the
node has (installed by the rocmprov.rocm.rocmprov_node role, or by any other means), so a node
is judged by exactly the code and data tables of the rocmprov release installed there
(docs/awx.md says why). The contract between the two is the command line
`rocmprov audit --local --format json` and its versioned document `rocmprov.audit/1`.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile

SCHEMA = "rocmprov.audit/1"
# rocmprov's exit codes (rocmprov/exitcodes.py): OK 0, WARNING 1, CRITICAL 2, UNKNOWN 3. Any
# other code (64 usage, 130 interrupted) or a document with "error" set is a failed run.
AUDIT_EXIT_CODES = (0, 1, 2, 3)
# Where rocmprov_node installs the command; searched after PATH.
EXTRA_BIN_DIRS = ["/opt/rocmprov/venv/bin", "/usr/local/bin"]
# The quick profile's kernel-log state of this collection (rocmprov/collect/cursor.py: one per
# consumer, so the health gate and the metrics timer keep theirs).
STATE_NAME = "collection"
CURSOR_FILE = "dmesg-cursor." + STATE_NAME

COMMON_ARGUMENT_SPEC = dict(
    executable=dict(type="list", elements="str", default=["rocmprov"]),
    profile=dict(type="str", default="full", choices=["full", "quick"]),
    gpu_user=dict(type="str", default=""),
    python=dict(type="str", default=""),
    rocm_version=dict(type="str", default=""),
    timeout=dict(type="int", default=600),
)


def audit_argv(module):
    """The argv that runs the audit on this host, from the module's parameters."""
    p = module.params
    command = list(p["executable"])
    if not command or not command[0]:
        module.fail_json(msg="executable must name the rocmprov command")
    if "/" not in command[0]:
        found = module.get_bin_path(command[0], required=False, opt_dirs=EXTRA_BIN_DIRS)
        if not found:
            module.fail_json(
                msg=f"{command[0]} not found on this host (PATH, {', '.join(EXTRA_BIN_DIRS)}): "
                "install rocmprov there with the rocmprov.rocm.rocmprov_node role or set executable"
            )
        command[0] = found
    argv = [*command, "audit", "--local", "--format", "json", "--profile", p["profile"]]
    if p["profile"] == "quick":
        argv += ["--state", STATE_NAME]
    for option, name in (
        ("--gpu-user", "gpu_user"),
        ("--python", "python"),
        ("--rocm-version", "rocm_version"),
    ):
        if p[name]:
            argv += [option, p[name]]
    return argv


def _state_dir():
    """rocmprov's state directory on this host (rocmprov/collect/cursor.py: state_dir)."""
    override = os.environ.get("ROCMPROV_STATE_DIR")
    if override:
        return override
    if os.geteuid() == 0:
        return "/var/lib/rocmprov"
    base = os.environ.get("XDG_STATE_HOME") or os.path.expanduser("~/.local/state")
    return os.path.join(base, "rocmprov")


def run_audit(module):
    """Run the audit; return (the rocmprov.audit/1 document, the command's exit code).

    Every run is read-only except the quick profile's kernel-log cursor; in check mode that
    cursor is read from a throwaway copy, so the host keeps its own unchanged."""
    argv = audit_argv(module)
    env = {}
    scratch = None
    if module.check_mode and module.params["profile"] == "quick":
        scratch = tempfile.mkdtemp(prefix="rocmprov-check-")
        cursor = os.path.join(_state_dir(), CURSOR_FILE)
        if os.path.isfile(cursor):
            shutil.copy2(cursor, os.path.join(scratch, CURSOR_FILE))
        env["ROCMPROV_STATE_DIR"] = scratch
    try:
        rc, out, err = run_with_timeout(module, argv, env)
    finally:
        if scratch:
            shutil.rmtree(scratch, ignore_errors=True)
    if rc == 124 and module.params["timeout"] > 0:
        module.fail_json(
            msg=f"rocmprov audit did not finish within timeout={module.params['timeout']} s",
            rc=rc,
            cmd=argv,
        )
    doc = parse_document(out)
    if doc is None:
        module.fail_json(
            msg=f"rocmprov printed no {SCHEMA} document (exit {rc}): {last_line(err or out)}",
            rc=rc,
            cmd=argv,
            stdout=out,
            stderr=err,
        )
    if doc.get("error") or rc not in AUDIT_EXIT_CODES:
        module.fail_json(
            msg=f"rocmprov audit failed (exit {rc}): {last_line(doc.get('error') or err)}",
            rc=rc,
            cmd=argv,
            stderr=err,
            audit=doc,
        )
    return doc, rc


def last_line(text):
    """The last non-blank line of `text` (at most 500 characters): a task's msg is one line;
    the whole output stays in the result's stdout/stderr."""
    lines = [line.strip() for line in str(text or "").splitlines() if line.strip()]
    return lines[-1][-500:] if lines else "(no output)"


def run_with_timeout(module, argv, env):
    """module.run_command with the timeout option applied through coreutils' timeout."""
    timeout = module.params["timeout"]
    if timeout > 0:
        wrapper = module.get_bin_path("timeout", required=False)
        if wrapper:
            argv = [wrapper, "--kill-after=10", str(timeout), *argv]
    return module.run_command(argv, environ_update=env)


def parse_document(text):
    """The JSON document printed on stdout, or None when it is not a rocmprov.audit/1 one."""
    try:
        doc = json.loads(text)
    except ValueError:
        return None
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA:
        return None
    return doc


def this_host(doc):
    """The report of the one host a local audit covers (an empty dict when there is none)."""
    hosts = doc.get("hosts") or []
    return hosts[0] if hosts and isinstance(hosts[0], dict) else {}
