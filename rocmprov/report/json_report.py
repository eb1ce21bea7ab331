"""`rocmprov.audit/1`: one JSON document on stdout, also on error."""

from __future__ import annotations

import json
from typing import Any

from rocmprov import __version__
from rocmprov.exitcodes import Exit
from rocmprov.model import AuditResult, HostReport

SCHEMA = "rocmprov.audit/1"


def host_dict(h: HostReport) -> dict[str, Any]:
    return {
        "host": h.host,
        "status": h.status,
        "severity": h.severity.value,
        "message": h.message,
        "duration": round(h.duration, 3),
        "facts": h.facts,
        "inventory": h.inventory,
        "findings": [f.to_dict() for f in h.findings],
    }


def audit_document(result: AuditResult) -> dict[str, Any]:
    return {
        "schema": SCHEMA,
        "rocmprov_version": __version__,
        "severity": result.severity.value,
        "exit_code": int(result.exit_code),
        "hosts": [host_dict(h) for h in result.hosts],
        "summary": [
            {
                "check": g.check,
                "severity": g.severity.value,
                "summary": g.summary,
                "count": len(g.hosts),
                "hosts": list(g.hosts),
            }
            for g in result.groups()
        ],
        "error": None,
    }


def error_document(message: str, code: Exit, schema: str = SCHEMA) -> dict[str, Any]:
    return {
        "schema": schema,
        "rocmprov_version": __version__,
        "exit_code": int(code),
        "hosts": [],
        "summary": [],
        "error": message,
    }


def render(result: AuditResult) -> str:
    return layout(audit_document(result))


def layout(doc: dict[str, Any]) -> str:
    """The document with one top-level key per line and each host (each summary group) on a
    line of its own: grep, diff and `head` work per host, and the whole is written by json's
    C encoder (its indenting encoder is pure Python: ~0.5 ms a host, most of a 2,000-host
    report's time)."""
    lines = []
    for key, value in doc.items():
        name = json.dumps(key)
        if isinstance(value, list) and value:
            items = ",\n".join(f"    {json.dumps(item)}" for item in value)
            lines.append(f"  {name}: [\n{items}\n  ]")
        else:
            lines.append(f"  {name}: {json.dumps(value)}")
    return "{\n" + ",\n".join(lines) + "\n}\n"
