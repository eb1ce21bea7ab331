"""Review B of session 25's table (issue 28): each test is a defect found by a hostile read,
failing on the table before its fix (1488db1)."""

from __future__ import annotations

import time
from pathlib import Path

from rocmprov.kb import match
from rocmprov.kb.matcher import analyse

ROOT = Path(__file__).resolve().parent.parent
MIB = 1024 * 1024


def _known(text: str) -> list:
    return [m for m in match(text) if not m.harmless]


def _first(text: str) -> str | None:
    found = _known(text)
    return found[0].id if found else None


def _ids(text: str) -> list[str]:
    return [m.id for m in match(text)]


def test_rpm_disk_space_patterns_are_linear_on_a_long_line() -> None:
    """Item 1: the rpm patterns began with a bounded repeat `[\\w.+~-]{1,200}` and were looked
    for at "needs ": a 4 MiB line of package-like words took 12-19 s. They now start with the
    literal and are looked for at "B on the /" / "more space on the "."""
    analyse("warm up")
    for unit in ("a" * 190 + " needs 12MB on the /x ", "a" * 190 + " needs 3KB more space on the /y "):
        text = (unit * (4 * MIB // len(unit) + 1))[: 4 * MIB]
        t0 = time.process_time()
        analyse(text)
        assert time.process_time() - t0 < 5.0, unit[-30:]


def test_rpm_transaction_check_is_not_told_dpkg_steps() -> None:
    """Item 2: rpm's check before the transaction (a full /boot on a kernel update, or a
    read-only file system, rpm#2782) installed nothing: no "half installed", no dpkg steps."""
    boot = (
        "Transaction check error:\n"
        "  installing package kernel-core-5.14.0-427.13.1.el9_4.x86_64 needs 32MB more space"
        " on the /boot filesystem\n"
    )
    found = _known(boot)
    assert found[0].id == "apt.dpkg-no-space-left"
    assert "dnf remove --oldinstallonly" in found[0].fix and "dpkg" not in found[0].fix
    assert found[0].condition.startswith("rpm's transaction check")
    opt = "installing package rocm-llvm-17.0.0-1.el9.x86_64 needs 1234MB more space on the /opt filesystem"
    found = _known(opt)
    assert found[0].id == "apt.dpkg-no-space-left" and "dpkg" not in found[0].fix
    assert "read-only" in found[0].condition and "remount" in found[0].fix


def test_multi_line_patterns_accept_crlf_line_ends() -> None:
    """Item 3: four multi-line patterns wanted `\\n` right after text, so a log with Windows
    line ends (\\r\\n) got no answer or another one (tests/test_kb_crlf.py checks every fixture)."""
    texts = {
        "framework.spawn-main-module-unguarded": (
            "RuntimeError:\n        An attempt has been made to start a new process before the\n"
            "        current process has finished its bootstrapping phase.\n"
        ),
        "llm.vllm-model-architecture-unresolved": (
            '  File "/opt/vllm/vllm/config.py", line 120, in _verify\n'
            "    for arch in architectures:\n"
            "TypeError: 'NoneType' object is not iterable\n"
        ),
        "hip.windows-app-control-policy-blocked": (
            "OSError: [WinError 4551] An Application Control policy has\n"
            "blocked this file: 'C:\\\\venv\\\\Lib\\\\site-packages\\\\_rocm_sdk_core\\\\bin\\\\amdhip64_7.dll'\n"
        ),
    }
    for entry, text in texts.items():
        assert _first(text) == entry, (entry, _ids(text))
        assert _first(text.replace("\n", "\r\n")) == entry, (entry, _ids(text.replace("\n", "\r\n")))
