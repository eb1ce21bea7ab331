"""Per-GPU isolation in Slurm: the text edits of gres.conf and slurm.conf (pure).

Slurm's documented way to change a node's GPU count: "Modification of GRES count associated
with specific files (e.g. GPUs) is not allowed other than to set their count on a node to zero.
In order to change the GRES count to another value, modify your slurm.conf and gres.conf files
and restart daemons." (scontrol(1), `Gres=` of `update NodeName`; SchedMD/slurm
doc/man/man1/scontrol.1, https://slurm.schedmd.com/scontrol.html). The source agrees:
_node_reconfig_test() in src/common/gres.c (22.05) refuses any other count "invalid with File
configuration", and _node_config_validate() drains a node whose slurmd reports fewer GPUs than
slurm.conf configures ("gpu count reported lower than configured"). So a bad GPU leaves both:
its `File=` line in the node's gres.conf is commented out with a marker, the node's `Gres=gpu:N`
in slurm.conf goes to N-1, slurmctld and then slurmd restart (`scontrol reconfigure` is not
enough: 22.05's src/slurmctld/read_config.c carries a node's old gres_list over a reconfigure,
and only a start calls gres_init_node_config() with slurm.conf's count). Put back: the reverse.

Needs one `File=` per line in gres.conf (a range such as renderD[128-131] names several GPUs:
refused) and a NodeName line of the node's own in slurm.conf (a range line: refused).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

MARK = "#rocmprov-isolated "
_FILE = re.compile(r"(?i)(?:^|\s)File=(\S+)")
_NODE = re.compile(r"(?i)(?:^|\s)NodeName=(\S+)")
_GRES = re.compile(r"(?i)(?<=\s)Gres=(\S+)")
BDF = re.compile(r"\b[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]\b")


class GresError(ValueError):
    """The files are not in a form heal can edit safely: one line says why."""


def bdfs(subject: str) -> tuple[str, ...]:
    """The PCI addresses a finding's subject names (`0000:05:00.0, 0000:06:00.0`)."""
    return tuple(dict.fromkeys(m.lower() for m in BDF.findall(subject)))


def _for_node(line: str, node: str) -> bool:
    m = _NODE.search(line)
    return m is None or m.group(1) == node


def isolate_files(text: str, node: str, files: Iterable[str], bdf_of: dict[str, str]) -> str:
    """gres.conf with the `File=` lines of `files` commented out (marked with the GPU's BDF)."""
    want = set(files)
    out, done = [], set()
    for line in text.splitlines():
        m = _FILE.search(line)
        body = line.split("#", 1)[0]
        if m and body.strip() and _for_node(body, node):
            value = m.group(1)
            if any(c in value for c in "[],") and want & _expand_hint(value, want):
                raise GresError(
                    f"gres.conf names several GPUs in one File= ({value}): "
                    "one File= per line is needed to take one out"
                )
            if value in want:
                out.append(f"{MARK}{bdf_of.get(value, '?')} {line}")
                done.add(value)
                continue
        out.append(line)
    missing = want - done
    if missing:
        raise GresError(f"gres.conf has no File= line for {', '.join(sorted(missing))}")
    return "\n".join(out) + "\n"


def _expand_hint(value: str, want: set[str]) -> set[str]:
    """Files of `want` that a range/list File= may name (same directory and prefix)."""
    head = value.split("[", 1)[0].split(",", 1)[0]
    return {f for f in want if f.startswith(head.rstrip("0123456789"))}


def restore_files(text: str, bdfs_back: Iterable[str]) -> str:
    """gres.conf with the lines heal marked for `bdfs_back` in force again."""
    back = {b.lower() for b in bdfs_back}
    out = []
    for line in text.splitlines():
        if line.startswith(MARK):
            bdf, _, original = line[len(MARK) :].partition(" ")
            if bdf.lower() in back:
                out.append(original)
                continue
        out.append(line)
    return "\n".join(out) + "\n"


def change_count(text: str, node: str, delta: int, name: str = "gpu") -> tuple[str, int]:
    """slurm.conf with the node's `Gres=<name>:N` moved by `delta`; (text, new N)."""
    out, new = [], -1
    for line in text.splitlines():
        m = _NODE.search(line.split("#", 1)[0])
        if m and m.group(1) == node and line.lstrip().lower().startswith("nodename="):
            g = _GRES.search(line)
            if g is None:
                raise GresError(f"slurm.conf: NodeName={node} has no Gres=")
            parts = g.group(1).split(",")
            for i, part in enumerate(parts):
                fields = part.split(":")
                if fields[0] == name and fields[-1].isdigit():
                    new = int(fields[-1]) + delta
                    if new < 0:
                        raise GresError(f"slurm.conf: {name} count of {node} would be {new}")
                    parts[i] = ":".join([*fields[:-1], str(new)])
            if new < 0:
                raise GresError(f"slurm.conf: NodeName={node} has no {name}:N in Gres=")
            line = line[: g.start(1)] + ",".join(parts) + line[g.end(1) :]
        out.append(line)
    if new < 0:
        raise GresError(
            f"slurm.conf has no NodeName={node} line of its own (a range line is "
            "shared by several nodes: give the node its own line)"
        )
    return "\n".join(out) + "\n", new


def isolated_list(text: str) -> tuple[str, ...]:
    """The node's isolated-GPUs file (one BDF a line, `#` comments): the BDFs."""
    return tuple(dict.fromkeys(b for line in text.splitlines() for b in bdfs(line.split("#")[0])))
