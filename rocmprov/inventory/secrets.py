"""Which inventory and -e variable names hold secrets: their values are never cached, logged,
put on a command line or written in a run record (inventory/cache.py, provision/extravars.py)."""

from __future__ import annotations

import re

# Variable names whose values are secrets: *pass* (password, passwd, *_pass, passphrase),
# *secret*, *token*, *credential*, *vault*, *private*, api_key/apikey, *_pw and *_key.
_SECRET_NAME = re.compile(
    r"pass|secret|token|credential|vault|private|api_?key|(?:^|_)pw$|(?:^|_)key$", re.I
)


def is_secret_name(name: object) -> bool:
    return isinstance(name, str) and bool(_SECRET_NAME.search(name))
