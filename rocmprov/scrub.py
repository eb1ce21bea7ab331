"""Scrubbing: secrets and home-directory names never leave a host in a bundle or a run record.

Pure text -> text; used by the bundle writer and the apply run record."""

from __future__ import annotations

import re

_SECRET_PATTERNS = (
    re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?-----END [A-Z ]*PRIVATE KEY-----", re.DOTALL),
    re.compile(
        r"(?i)\b([\w.-]*(?:password|passwd|secret|token|api[_-]?key|access[_-]?key)[\w.-]*)"
        r"(\s*[=:]\s*)(\"[^\"]*\"|'[^']*'|\S+)"
    ),
    re.compile(r"\b(gh[pousr]_[A-Za-z0-9]{20,}|AKIA[0-9A-Z]{16}|hf_[A-Za-z0-9]{20,})\b"),
)
_HOME = re.compile(r"(/home/|/Users/)([^/\s:'\"]+)")


def scrub(text: str) -> str:
    """Remove private keys, key=value secrets, well-known token shapes and home-dir user names."""
    text = _SECRET_PATTERNS[0].sub("[private key removed]", text)
    text = _SECRET_PATTERNS[1].sub(lambda m: f"{m.group(1)}{m.group(2)}[removed]", text)
    text = _SECRET_PATTERNS[2].sub("[token removed]", text)
    return _HOME.sub(lambda m: f"{m.group(1)}USER", text)
