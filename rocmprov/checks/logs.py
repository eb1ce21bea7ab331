"""The troubleshooting table (rocmprov explain) over each host's logs and tool outputs.

Every known, non-harmless cause the table finds in dmesg, rocminfo, dkms or the torch probe
becomes a `log.cause` finding that names the table entry (kb). A line that a specific dmesg
check already reported is not reported twice: that finding gets the table entry's id instead.
"""

from __future__ import annotations

from dataclasses import replace

from rocmprov.checks.base import CRITICAL, OK, WARNING
from rocmprov.checks.policy import Policy
from rocmprov.facts.host import HostFacts
from rocmprov.model import Finding


def check_logs(facts: HostFacts, policy: Policy) -> list[Finding]:
    from rocmprov.kb import match

    if not facts.logs:
        return []
    gpus = facts.rocminfo.gpus if facts.rocminfo else ()
    context = {"gfx": gpus[0].name.split(":")[0]} if gpus else {}
    out: list[Finding] = []
    seen: set[str] = set()
    for source, text in facts.logs.items():
        for m in match(text, context=context):
            if m.harmless or m.id in seen:
                continue
            seen.add(m.id)
            out.append(
                Finding(
                    "log.cause",
                    CRITICAL if m.kind == "root-cause" else WARNING,
                    f"{m.title} ({source})",
                    actual=(m.evidence[0] if m.evidence else "")[:200],
                    fix=m.fix,
                    ref=m.sources[0] if m.sources else "",
                    kb=m.id,
                    subject=m.id,
                )
            )
    if not out:
        out.append(
            Finding(
                "log.cause",
                OK,
                "no known problem in the logs",
                actual=", ".join(sorted(facts.logs)),
            )
        )
    return out


def _same_line(a: str, b: str) -> bool:
    a, b = a.strip(), b.strip()
    return bool(a and b) and (a in b or b in a)


def merge_dmesg(findings: list[Finding]) -> list[Finding]:
    """Pure: a table cause on the line a dmesg.* finding reported becomes that finding's kb."""
    result = list(findings)
    dmesg = [i for i, f in enumerate(findings) if f.check.startswith("dmesg.") and f.actual]
    drop: set[int] = set()
    for i, f in enumerate(findings):
        if f.check != "log.cause" or not f.kb:
            continue
        j = next((j for j in dmesg if _same_line(findings[j].actual, f.actual)), None)
        if j is not None:
            if not result[j].kb:
                result[j] = replace(result[j], kb=f.kb)
            drop.add(i)
    return [f for i, f in enumerate(result) if i not in drop]
