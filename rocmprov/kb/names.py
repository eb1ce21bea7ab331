"""Names inside a line that hold a problem word without saying there is a problem: a word
joined to another by a hyphen is part of a name (libgpg-error.so.0 in `ldconfig -p`,
pytest-timeout in `pip list`, errors=remount-ro in a mount line), and so is the key of a
key=value (panic=1 on a kernel command line), and so is a shared library's file name up to its
".so" (libabsl_strerror.so.20220623 in `ldconfig -p`). A status-code name (HSA_STATUS_ERROR_...,
hipErrorNoDevice) is not a name here: underscores and camelCase are left as they are. Pure.

Read by kb/similar.py `informative` (the lines the similarity tier and explain's "does anything
look like an error" read, kb/problems.py)."""

from __future__ import annotations

import re

# a run of letters joined to a letter or digit by a hyphen, either side; each alternative starts
# only where a run starts (lookbehind), so a line is read in linear time
_HYPHENATED = re.compile(r"(?<=[A-Za-z0-9]-)[A-Za-z]+|(?<![A-Za-z])[A-Za-z]+(?=-[A-Za-z0-9])")
_KEY = re.compile(r"(?<!\S)[^\s=]+=")  # the key of key=value, at the start of a word
# a shared library's file name: lib... up to the first ".so" (a name's start only, so linear)
_LIBRARY = re.compile(r"(?<![\w.+-])lib[\w+-]*(?:\.[\w+-]+)*?\.so\b")


def masked(line: str) -> str:
    """`line` with its names blanked (same length, so columns stay where they were)."""
    line = _KEY.sub(lambda m: " " * len(m.group()), line)
    line = _LIBRARY.sub(lambda m: " " * len(m.group()), line)
    return _HYPHENATED.sub(lambda m: " " * len(m.group()), line)
