"""How rocmprov's SSH connections use the wire: cipher order and the transport thread's polling."""

from __future__ import annotations

import paramiko

# AES-GCM first: an AEAD cipher (OpenSSH offers it by default) needs no separate MAC, which
# paramiko computes with one HMAC object per packet and compares byte by byte in Python;
# the rest of paramiko's list follows, for servers without it.
AEAD_FIRST = ("aes128-gcm@openssh.com", "aes256-gcm@openssh.com")


class WireTransport(paramiko.Transport):
    # paramiko's transport thread polls its socket every 0.1 s to see whether it was closed:
    # ten wake-ups a second per host while a host's probes run. SSHTransport.close() shuts the
    # socket down, which wakes that thread at once, so it can sleep longer between checks
    # (keepalives and rekeying are checked at the same wake-ups; rocmprov sets neither).
    _active_check_timeout = 1.0


def prefer_aead(t: paramiko.Transport) -> None:
    """Offer AEAD_FIRST ahead of the rest of `t`'s ciphers (only those it already offers)."""
    options = t.get_security_options()
    offered = tuple(options.ciphers)
    first = tuple(c for c in AEAD_FIRST if c in offered)
    options.ciphers = first + tuple(c for c in offered if c not in first)
