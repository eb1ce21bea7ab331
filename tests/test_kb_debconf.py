"""debconf's frontend fallback lines are harmless (apt.debconf-frontend-fallback): every
non-interactive apt run prints them, and their parenthesised reason ("Can't locate
Term/ReadLine.pm") must not read as a ROCm tool's missing Perl module.

The debconf lines are debconf 1.5.82's own output (dpkg-reconfigure without a terminal, the
entry's fixture) and its documented reasons; the roc-obj-ls line is that entry's fixture's."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.kb_helpers import first

FALLBACK = "apt.debconf-frontend-fallback"
READLINE = (
    "debconf: unable to initialize frontend: Readline\n"
    "debconf: (Can't locate Term/ReadLine.pm in @INC (you may need to install the "
    "Term::ReadLine module) (@INC contains: /etc/perl /usr/share/perl5 /usr/share/perl/5.34) "
    "at /usr/share/perl5/Debconf/FrontEnd/Readline.pm line 7.)\n"
    "debconf: falling back to frontend: Teletype\n"
)


def _explain(text: str) -> dict:  # type: ignore[type-arg]
    run = subprocess.run([sys.executable, "-m", "rocmprov", "explain", "--format", "json", "-"],
                         input=text, capture_output=True, text=True, timeout=120, check=False)
    return json.loads(run.stdout)  # type: ignore[no-any-return]


def test_the_readline_reason_is_harmless_and_resembles_no_cause() -> None:
    doc = _explain(READLINE)
    assert [m["id"] for m in doc["matches"]] == [FALLBACK]
    assert doc["similar"] == [] and doc["exit_code"] == 0


def test_a_real_apt_error_beside_it_ranks_first() -> None:
    text = READLINE + "E: Unable to locate package rocm-hip-sdk\n"
    found = first(text)
    assert found is not None and found.id != FALLBACK and not found.harmless


def test_roc_obj_ls_missing_module_is_still_its_own_cause() -> None:
    text = READLINE + (
        "Can't locate File/Which.pm in @INC (you may need to install the File::Which module) "
        "(@INC entries checked: /etc/perl /usr/share/perl5) at /usr/bin/roc-obj-ls line 25.\n"
    )
    found = first(text)
    assert found is not None and found.id == "rocm.roc-obj-ls-perl-modules-missing"
