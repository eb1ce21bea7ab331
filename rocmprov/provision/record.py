"""The run record: one fresh 0700 directory per apply, the environment ansible-playbook gets,
and scrubbing.

What keeps secrets out of the record:
- ansible-playbook gets an allow-listed environment only (child_env), so the caller's
  AWS_SECRET_ACCESS_KEY, GITHUB_TOKEN... never reach artifacts/<run>/command;
- extra vars go through a private file (extravars.private_vars_file), never on the argv that
  artifacts/<run>/command records;
- every event is scrubbed (Scrubber.obj) before ansible-runner writes it to job_events/ and to
  stdout; at the end every file of the run directory is scrubbed again (scrub_run_dir): JSON
  files value by value (secret-named keys redacted at any depth, secret values replaced inside
  any string), other text files by value and then by collect.scrub.scrub, binary files by value.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rocmprov.collect.scrub import scrub
from rocmprov.exitcodes import UsageError
from rocmprov.inventory.secrets import is_secret_name
from rocmprov.provision.extravars import secret_values

REDACTED = "********"
REQUEST_FILE = "rocmprov-apply.json"

# Taken from the caller's environment; everything else is left behind.
ENV_ALLOW = frozenset(
    {"PATH", "HOME", "USER", "LOGNAME", "LANG", "LANGUAGE", "TZ", "TMPDIR", "SSH_AUTH_SOCK"}
)
ENV_ALLOW_PREFIXES = ("LC_",)
# Set by ansible-runner itself for its event callback (kept from its prepared environment).
RUNNER_ENV = frozenset(
    {
        "ANSIBLE_STDOUT_CALLBACK",
        "ANSIBLE_CALLBACK_PLUGINS",
        "ANSIBLE_RETRY_FILES_ENABLED",
        "ANSIBLE_HOST_KEY_CHECKING",
        "ANSIBLE_CACHE_PLUGIN",
        "ANSIBLE_CACHE_PLUGIN_CONNECTION",
        "AWX_ISOLATED_DATA_DIR",
    }
)


# ------------------------------------------------------------------ run directories


def state_root(override: str | None = None) -> Path:
    if override:
        return Path(override)
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "rocmprov" / "runs"


def fresh_run_dir(root: Path) -> Path:
    """A new, never used directory (0700) for this run's private data and artifacts."""
    root.mkdir(parents=True, exist_ok=True, mode=0o700)
    stamp = time.strftime("%Y%m%dT%H%M%S")
    for n in range(1000):
        d = root / (stamp if n == 0 else f"{stamp}-{n}")
        try:
            d.mkdir(mode=0o700)
        except FileExistsError:
            continue
        return d
    raise UsageError(f"cannot make a run directory under {root}")


def write_private(path: Path, data: str | bytes) -> None:
    """Write a file 0600 from its creation on (no window where it is world-readable)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    with os.fdopen(fd, "wb") as f:
        os.fchmod(f.fileno(), 0o600)
        f.write(data.encode("utf-8") if isinstance(data, str) else data)


# ------------------------------------------------------------------ environment


def child_env(
    ours: Mapping[str, str],
    prepared: Mapping[str, str],
    caller: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """ansible-playbook's whole environment: allow-listed caller variables, then ours, then
    the few ansible-runner sets in `prepared` (its environment seeded from os.environ)."""
    caller = os.environ if caller is None else caller
    env = {k: v for k, v in caller.items() if k in ENV_ALLOW or k.startswith(ENV_ALLOW_PREFIXES)}
    env.update(ours)
    env.update({k: v for k, v in prepared.items() if k in RUNNER_ENV and k not in ours})
    return {str(k): str(v) for k, v in env.items()}


# ------------------------------------------------------------------ scrubbing


def url_passwords(node: Any) -> Iterator[str]:
    """The password part of every URL with credentials in a document (rocmprov_mirrors...)."""
    from urllib.parse import urlsplit

    if isinstance(node, Mapping):
        for k, v in node.items():
            yield from url_passwords(k)
            yield from url_passwords(v)
    elif isinstance(node, list | tuple):
        for v in node:
            yield from url_passwords(v)
    elif isinstance(node, str) and "@" in node and "://" in node:
        for word in node.split():
            try:
                password = urlsplit(word).password
            except ValueError:
                continue
            if password and len(password) >= 3:
                yield password


@dataclass(frozen=True)
class Scrubber:
    """Replaces known secret values anywhere and redacts secret-named keys in documents."""

    values: tuple[str, ...] = ()

    @classmethod
    def for_run(
        cls, extravars: Mapping[str, Any], caller: Mapping[str, str] | None = None
    ) -> Scrubber:
        """Secrets = values of secret-named extra vars (nested too) and of the caller's
        secret-named environment variables (never passed on, but never recorded either)."""
        caller = os.environ if caller is None else caller
        found = set(secret_values(extravars))
        found |= set(secret_values({k: v for k, v in caller.items() if is_secret_name(k)}))
        found |= set(url_passwords(extravars))  # a mirror's https://user:token@host
        variants = set(found)
        for s in found:  # as they appear inside JSON or Python-repr text
            variants.add(json.dumps(s)[1:-1])
            variants.add(repr(s)[1:-1])
        return cls(tuple(sorted(variants, key=lambda s: (-len(s), s))))

    def text(self, text: str) -> str:
        for s in self.values:
            if s in text:
                text = text.replace(s, REDACTED)
        return text

    def data(self, data: bytes) -> bytes:
        for s in self.values:
            b = s.encode("utf-8", "surrogateescape")
            if b in data:
                data = data.replace(b, REDACTED.encode())
        return data

    def obj(self, node: Any, *, free_text: bool = False) -> Any:
        """A copy of a JSON-like document: secret-named keys redacted at any depth, secret
        values replaced inside every string, and (free_text) collect.scrub.scrub on strings."""
        if isinstance(node, Mapping):
            out: dict[Any, Any] = {}
            for k, v in node.items():
                if is_secret_name(k) and v not in (None, "", True, False):
                    out[k] = _redact_leaves(v)
                else:
                    out[k] = self.obj(v, free_text=free_text)
            return out
        if isinstance(node, list | tuple):
            return [self.obj(v, free_text=free_text) for v in node]
        if isinstance(node, str):
            node = self.text(node)
            return scrub(node) if free_text else node
        return node


def _redact_leaves(node: Any) -> Any:
    """Keep the shape (lists, mappings, non-secret keys' names), lose every value."""
    if isinstance(node, Mapping):
        return {k: _redact_leaves(v) for k, v in node.items()}
    if isinstance(node, list | tuple):
        return [_redact_leaves(v) for v in node]
    return REDACTED


def redacted_vars(extravars: Mapping[str, Any], scrubber: Scrubber) -> dict[str, Any]:
    """Extra vars as the record keeps them."""
    return dict(scrubber.obj(extravars))


def scrub_run_dir(
    run_dir: Path, extravars: Mapping[str, Any], scrubber: Scrubber | None = None
) -> int:
    """Remove credentials from every file of the run record; returns how many were rewritten.

    Every file ends 0600, every directory 0700. Symlinks are never followed (a link is
    removed: the record holds none of its own)."""
    for name in ("env/passwords", "env/ssh_key", "env/extravars"):
        (run_dir / name).unlink(missing_ok=True)
    scrubber = scrubber or Scrubber.for_run(extravars)
    rewritten = 0
    for dirpath, dirs, names in os.walk(run_dir):
        with contextlib.suppress(OSError):
            os.chmod(dirpath, 0o700)
        for name in [d for d in dirs if (Path(dirpath) / d).is_symlink()]:
            (Path(dirpath) / name).unlink(missing_ok=True)
        for name in names:
            path = Path(dirpath) / name
            if path.is_symlink():
                path.unlink(missing_ok=True)
                continue
            try:
                if _scrub_file(path, scrubber):
                    rewritten += 1
                path.chmod(0o600)
            except OSError:
                continue
    return rewritten


def _scrub_file(path: Path, scrubber: Scrubber) -> bool:
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        new_raw = scrubber.data(raw)
        if new_raw != raw:
            write_private(path, new_raw)
            return True
        return False
    new = None
    if path.suffix == ".json" or path.name == "command":
        with contextlib.suppress(ValueError, RecursionError):
            doc = json.loads(text)
            clean = scrubber.obj(doc, free_text=True)
            new = text if clean == doc else json.dumps(clean, ensure_ascii=False)
    if new is None:
        new = scrub(scrubber.text(text))
    if new != text:
        write_private(path, new)
        return True
    return False
