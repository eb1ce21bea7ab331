"""rocmprov verify: run the torch smoke tests (actions/smoke.py) on a host and judge them."""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

from rocmprov.model import Severity
from rocmprov.transport.base import Transport

SCHEMA = "rocmprov.verify/1"
TESTS = ("devices", "matmul", "amp", "ddp", "onnx")


@dataclass(frozen=True)
class SmokeResult:
    test: str
    status: str  # pass | fail | skip
    seconds: float = 0.0
    detail: str = ""
    error: str = ""
    causes: tuple[str, ...] = ()  # explain-table ids matched in the error text


@dataclass(frozen=True)
class VerifyReport:
    host: str
    python: str
    torch: str = ""
    backend: str = ""  # "HIP 6.2.41133" | "CUDA 13.0" | "CPU"
    results: tuple[SmokeResult, ...] = ()
    error: str = ""  # torch could not be imported, or the script did not run
    causes: tuple[str, ...] = ()
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def severity(self) -> Severity:
        if self.error:
            return Severity.CRITICAL
        if any(r.status == "fail" for r in self.results):
            return Severity.CRITICAL
        return Severity.OK if self.results else Severity.UNKNOWN

    def to_dict(self) -> dict[str, Any]:
        return {
            "host": self.host,
            "python": self.python,
            "torch": self.torch,
            "backend": self.backend,
            "severity": self.severity.value,
            "error": self.error,
            "causes": list(self.causes),
            "results": [r.__dict__ | {"causes": list(r.causes)} for r in self.results],
        }


def smoke_command(python: str) -> str:
    script = resources.files("rocmprov.actions").joinpath("smoke.py").read_text(encoding="utf-8")
    return shlex.join([python, "-c", script])


def parse_smoke(host: str, python: str, rc: int, stdout: str, stderr: str) -> VerifyReport:
    """Pure: the smoke script's output -> VerifyReport, with explain causes for any error."""
    doc = _last_json(stdout)
    if doc is None:
        text = (stderr or stdout).strip() or f"exit {rc}"
        return VerifyReport(
            host, python, error=text.splitlines()[-1][:500], causes=_causes(stderr + stdout)
        )
    results = tuple(
        SmokeResult(
            str(r.get("test", "")),
            str(r.get("status", "")),
            float(r.get("seconds") or 0.0),
            str(r.get("detail", "")),
            str(r.get("error", "")),
            _causes(str(r.get("error", "")) + " " + str(r.get("detail", ""))),
        )
        for r in doc.get("results", [])
        if isinstance(r, dict)
    )
    hip, cuda = doc.get("hip"), doc.get("cuda")
    backend = f"HIP {hip}" if hip else f"CUDA {cuda}" if cuda else "CPU" if doc.get("torch") else ""
    error = str(doc.get("error") or "")
    return VerifyReport(
        host,
        python,
        str(doc.get("torch") or ""),
        backend,
        results,
        error,
        _causes(error + "\n" + stderr) if error else (),
    )


def run_verify(
    transport: Transport, python: str, *, fallback: str = "", timeout: float = 900
) -> VerifyReport:
    """The smoke tests with `python` (the torch venv apply made), or `fallback` where that
    interpreter is not on the host."""
    if fallback:
        import shlex

        there = transport.run(f"command -v {shlex.quote(python)} >/dev/null 2>&1", timeout=30)
        python = python if there.rc == 0 else fallback
    res = transport.run(smoke_command(python), timeout=timeout)
    return parse_smoke(transport.host, python, res.rc, res.stdout, res.stderr)


def _last_json(text: str) -> dict | None:
    for line in reversed(text.strip().splitlines()):
        try:
            value = json.loads(line)
        except ValueError:
            continue
        if isinstance(value, dict):
            return value
    return None


def _causes(text: str) -> tuple[str, ...]:
    """Known causes from the troubleshooting table (rocmprov explain) for an error text."""
    if not text.strip():
        return ()
    try:
        from rocmprov.kb.matcher import match
    except ImportError:
        return ()
    return tuple(m.id for m in match(text) if not getattr(m, "harmless", False))[:3]
