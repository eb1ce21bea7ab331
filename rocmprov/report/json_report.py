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
    return json.dumps(audit_document(result), indent=2) + "\n"
