"""Scrubbing: secrets and home-directory names never leave a host in a bundle or a run record.

Pure text -> text; used by the bundle writer and the apply run record. Key names stay, values
go (`DB_PASSWORD=[removed]`, `"token": "[removed]"`, `https://user:[removed]@host`), so the
output stays readable; bare token shapes become `[token removed]`, private keys
`[private key removed]`, `/home/alice` becomes `/home/USER`.

Linear time, also on hostile input (`a.a.a...`, many BEGIN lines without END): two passes over
the text, and no pattern can backtrack without bound. Every repeat is either bounded or
possessive (`*+`, `++`: it never gives back what it took); patterns that open with a name run
only start where the run starts (a look-behind), so each run is walked once; BEGIN and END
markers of private keys are found in one scan and paired, never searched for again.
tests/test_scrub.py checks the patterns' shape; benchmarks/scrub_bench.py measures it.

Limits (documented in docs/security.md): a key name is recognised when its secret word
(password, token, ...) has at most 64 characters before and after it in the name; quoted values
up to 4,096 characters are removed whole, longer quoted values up to the next blank; a private
key without its END line is removed up to the first line that is not key material.
"""

from __future__ import annotations

import re

REMOVED = "[removed]"
TOKEN_REMOVED = "[token removed]"
KEY_REMOVED = "[private key removed]"

# ------------------------------------------------------------------ private keys

_KEY_MARK = re.compile(r"-----(BEGIN|END) (?:[A-Z0-9]{1,20} ){0,4}PRIVATE KEY(?: BLOCK)?-----")
# After a BEGIN with no END: whole lines of key material (base64, PEM/PGP armour headers,
# blank lines), newline-separated or JSON-escaped ("\n" as two characters).
_EOL = r"(?:\r?\n|\\r\\n|\\n)"
_KEY_BODY = re.compile(
    rf"(?:{_EOL}[ \t]{{0,64}}+"
    r"(?:[A-Za-z0-9+/=]{1,65536}+|(?:Proc-Type|DEK-Info|Comment|Version|Hash|Charset): "
    r"[^\r\n\\]{0,1024}+)?"
    rf"[ \t]{{0,64}}+(?={_EOL}|[\"',]|\Z))*+"
)


def _private_keys(text: str) -> str:
    """BEGIN..END blocks, and a BEGIN without END with the key lines after it, removed."""
    if "PRIVATE KEY" not in text:
        return text
    out: list[str] = []
    done = 0  # text[:done] is in out
    begin: re.Match[str] | None = None

    def cut(start: int, end: int) -> None:
        nonlocal done
        out.append(text[done:start])
        out.append(KEY_REMOVED)
        done = end

    for mark in _KEY_MARK.finditer(text):
        if mark.group(1) == "END":
            if begin is not None:
                cut(begin.start(), mark.end())
                begin = None
            continue
        if begin is not None:  # an earlier BEGIN never ended
            cut(begin.start(), _body_end(text, begin.end()))
        begin = mark
    if begin is not None:
        cut(begin.start(), _body_end(text, begin.end()))
    out.append(text[done:])
    return "".join(out)


def _body_end(text: str, start: int) -> int:
    body = _KEY_BODY.match(text, start)
    return body.end() if body else start


# ------------------------------------------------------------------ everything else, one pass

# Words that make a key name secret (case-insensitive), anywhere in the name.
_SECRET_WORD = (
    r"pass(?:word|wd|phrase)|secret|token|api[_-]?key|access[_-]?(?:key|signature)"
    r"|account[_-]?key|private[_-]?key|credentials?"
)
_NAME = r"[\w.-]"
_NOT_AFTER_NAME = r"(?<![\w.-])"
# a secret word inside a name (<= 64 characters either side), or a name ending in _pw, _pwd,
# _pass, or a name that is exactly "auth" (docker's config.json)
_SECRET_KEY = (
    rf"{_NOT_AFTER_NAME}(?:{_NAME}{{0,64}}?(?i:{_SECRET_WORD}){_NAME}{{0,64}}+"
    rf"|{_NAME}{{0,64}}?[_.-](?i:pw|pwd|pass)(?!{_NAME})|(?i:auth)(?!{_NAME}))"
)
# what follows a value's opening quote, up to the closing one
_DQ = r"(?:[^\"\\\r\n]|\\.){1,4096}+"
_SQ = r"[^'\r\n]{1,4096}+"
_BARE = r"[^\s\"'\\&<>;]++"
_TOKEN_SHAPES = (
    r"gh[pousr]_[A-Za-z0-9]{20,255}+",
    r"github_pat_[A-Za-z0-9_]{20,255}+",
    r"gl(?:pat|dt|rt|ptt|ft|soat|cbt|imt)-[A-Za-z0-9_-]{20,255}+",
    r"(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z0-9]{16}(?![A-Za-z0-9])",
    r"xox[abposre]-[A-Za-z0-9-]{10,255}+",
    r"xapp-[0-9]-[A-Za-z0-9-]{10,255}+",
    r"AIza[A-Za-z0-9_-]{35}(?![A-Za-z0-9_-])",
    r"eyJ[A-Za-z0-9_-]{8,8192}+\.eyJ[A-Za-z0-9_-]{8,8192}+\.[A-Za-z0-9_-]{0,8192}+",
    r"npm_[A-Za-z0-9]{36}(?![A-Za-z0-9])",
    r"pypi-AgE[A-Za-z0-9_-]{50,4096}+",
    r"sk-(?:proj-|svcacct-|admin-|ant-[a-z0-9]{2,8}-)?[A-Za-z0-9_-]{20,255}+",
    r"(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{20,255}+",
    r"hf_[A-Za-z0-9]{30,255}+",
    r"[A-Za-z0-9_~.]{3}[0-9]Q~[A-Za-z0-9_~.-]{31,34}(?![A-Za-z0-9_~.-])",  # Azure AD secret
)
_ONE_PASS = re.compile(
    r"(?a)"  # ASCII classes and case folding: what the trigger scan below sees is what matches
    # scheme://user:password@host (apt sources, git remotes, database URLs)
    r"(?<![\w+.-])(?P<url>[A-Za-z][\w+.-]{0,31}+://[^\s/@:\"'<>]{1,256}+:)"
    r"(?P<url_pw>[^\s/\"'<>]{1,1024})@"
    # scheme://TOKEN@host (a long user name is a token: x-access-token, oauth2 ...)
    r"|(?<![\w+.-])(?P<url_tok>[A-Za-z][\w+.-]{0,31}+://)(?P<url_user>[A-Za-z0-9_-]{20,256}+)@"
    # Authorization: Bearer|Basic|token X (HTTP headers, curl -H)
    r"|(?<![\w-])(?P<authz>(?i:(?:proxy-)?authorization)\\?[\"']?[ \t]{0,64}+[:=][ \t]{0,64}+"
    r"\\?[\"']?(?:(?i:bearer|basic|token|bot|apikey)[ \t]{1,64}+)?)"
    # not a JSON literal or structure (docker info's "Plugins": {"Authorization": null, ...})
    r"(?P<authz_v>(?!(?:null|true|false)(?![\w-])|[\[{])[^\s\"'\\<>,]++)"
    r"|(?<![\w-])(?P<bearer>(?i:bearer)[ \t]{1,64}+)(?P<bearer_v>[A-Za-z0-9._~+/=-]{8,8192}+)"
    # .netrc: machine H login U password P
    r"|(?<![\w.-])(?P<netrc>login[ \t]{1,64}+\S{1,256}+[ \t]{1,64}+password[ \t]{1,64}+)"
    r"(?P<netrc_v>\S++)"
    # .netrc over several lines: a line that is only "password P"
    r"|(?<![^\n])(?P<netrc_line>[ \t]{0,64}+password[ \t]{1,64}+)(?P<netrc_line_v>\S++)"
    r"(?=[ \t]{0,64}+(?:\r?\n|\Z))"
    # URL query signatures (Azure SAS, S3/GCS presigned, ?key=)
    r"|(?<=[?&;])(?P<query>(?i:sig|signature|x-amz-signature|x-goog-signature|key)=)"
    r"(?P<query_v>[^\s&#\"'<>]++)"
    # Slack webhooks
    r"|(?P<slack>hooks\.slack\.com/services/)(?P<slack_v>[A-Za-z0-9/_-]{1,256}+)"
    # well-known token shapes, wherever they are
    rf"|(?<![A-Za-z0-9_-])(?P<shape>{'|'.join(_TOKEN_SHAPES)})"
    # --password X (a flag, then blanks, then a value that is not a flag)
    rf"|(?P<flag>{_NOT_AFTER_NAME}--?[\w-]{{0,64}}?(?i:{_SECRET_WORD})[\w-]{{0,64}}+[ \t]{{1,64}}+)"
    rf"(?P<flag_v>(?!-)[^\s\"'\\&<>]++)"
    # KEY=VALUE, KEY: VALUE, "key": "value", key='value', \"key\": \"value\"
    rf"|(?P<key>{_SECRET_KEY})"
    r"(?P<sep>(?:\\?[\"'])?[ \t]{0,64}+[=:][ \t]{0,64}+)"
    rf"(?:(?P<dq>\"){_DQ}\"|(?P<sq>'){_SQ}'|(?P<q>(?:\\?[\"'])?){_BARE})"
    # home directories
    r"|(?P<home>/home/|/Users/)[^/\s:'\"]++"
)
# a key that names where a secret is, not the secret: ansible_ssh_private_key_file, token_url
_WHERE = re.compile(r"(?ai)[_.-](?:file|path|dir|url|uri)s?$")
# a source location in a program's error ("../crypto/passphrase.c:184", "unable to get
# passphrase: ../providers/decode_epki2pki.c:96"): where the message was raised, not a secret
_SOURCE_EXT = frozenset(("c", "cc", "cpp", "cxx", "h", "hpp", "py", "rs", "go"))


def _source_file(text: str) -> bool:
    return (
        "." in text
        and not any(c.isspace() for c in text)
        and (text.rpartition(".")[2] in _SOURCE_EXT)
    )


def _source_location(text: str) -> bool:
    path, colon, line = text.rpartition(":")
    return bool(colon) and line.isdigit() and _source_file(path)


# nsswitch.conf: "passwd: files systemd" names a database, not a password
_NSS_SERVICES = frozenset(
    ("files", "systemd", "sss", "ldap", "nis", "nisplus", "compat", "db", "winbind", "dns",
     "mymachines", "resolve", "myhostname", "altfiles", "cache", "hesiod", "extrausers")
)  # fmt: skip


# a count or an id named "token" in model and server logs (llama.cpp's "EOS token = 151643",
# vLLM's "--max-num-batched-tokens 8K"): a short number is not a secret under that name
_TOKEN_NAME = re.compile(r"(?ai)token")
_OTHER_SECRET = re.compile(r"(?ai)pass|secret|api|access|account|private|credential|auth|bearer")
_COUNT = re.compile(r"(?a)\d{1,12}[KkMmGg]?")


def _token_count(name: str, value: str) -> bool:
    return bool(
        _TOKEN_NAME.search(name) and not _OTHER_SECRET.search(name) and _COUNT.fullmatch(value)
    )


def _replace(m: re.Match[str]) -> str:
    g = m.groupdict()
    if g["key"] is not None:
        key, sep, value = g["key"], g["sep"], m.group(0)[m.end("sep") - m.start() :]
        if (
            _WHERE.search(key)
            or _token_count(key, value)
            or (key.lower() == "passwd" and ":" in sep and value.split()[0] in _NSS_SERVICES)
            or (":" in sep and _source_file(key) and value.isdigit())
            or (":" in sep and _source_location(value))
        ):
            return m.group(0)
        quote = g["dq"] or g["sq"] or g["q"] or ""
        close = quote[-1:] if g["dq"] or g["sq"] else ""
        return f"{key}{sep}{quote}{REMOVED}{close}"
    if g["flag"] is not None and (
        _WHERE.search(g["flag"].rstrip()) or _token_count(g["flag"], g["flag_v"])
    ):
        return m.group(0)
    for prefix in ("url", "authz", "bearer", "netrc", "netrc_line", "query", "slack", "flag"):
        if g[prefix] is not None:
            tail = "@" if prefix == "url" else ""
            return f"{g[prefix]}{REMOVED}{tail}"
    if g["url_tok"] is not None:
        return f"{g['url_tok']}{REMOVED}@"
    if g["shape"] is not None:
        return TOKEN_REMOVED
    return f"{g['home']}USER"


# Every match of _ONE_PASS lies on one line and contains one of these (lower case) strings:
# lines without any are skipped before the regex runs (most probe output has none).
# tests/test_scrub.py proves the result the same as running the regex everywhere.
_TRIGGERS = (
    "://", "authorization", "bearer", "pass", "sig=", "signature=", "key=", "hooks.slack.com",
    "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "glpat-", "gldt-", "glrt-", "glptt-",
    "glft-", "glsoat-", "glcbt-", "glimt-", "akia", "asia", "abia", "acca", "a3t", "xox",
    "xapp-", "aiza", "eyj", "npm_", "pypi-", "sk-", "sk_", "rk_", "hf_", "q~", "secret", "token",
    "api_key", "api-key", "apikey", "access_key", "access-key", "accesskey", "access_signature",
    "access-signature", "accesssignature", "account_key", "account-key", "accountkey",
    "private_key", "private-key", "privatekey", "credential", "_pw", "-pw", ".pw", "auth",
    "/home/", "/users/",
)  # fmt: skip


def _candidate_lines(text: str) -> list[tuple[int, int]]:
    """Sorted, disjoint (start, end) spans of whole lines that contain a trigger.
    Each trigger walks the text once: after a hit the search goes on from the line's end."""
    low = text.lower()
    if len(low) != len(text):  # a non-ASCII letter whose lower case is longer: no offsets
        return [(0, len(text))]
    ends: dict[int, int] = {}
    for trigger in _TRIGGERS:
        at = low.find(trigger)
        while at >= 0:
            start = low.rfind("\n", 0, at) + 1
            end = low.find("\n", at)
            end = len(low) if end < 0 else end
            ends[start] = max(ends.get(start, end), end)
            at = low.find(trigger, end)
    spans: list[tuple[int, int]] = []
    for start in sorted(ends):
        if spans and start <= spans[-1][1] + 1:  # the next line, or the same one
            spans[-1] = (spans[-1][0], max(spans[-1][1], ends[start]))
        else:
            spans.append((start, ends[start]))
    return spans


def scrub(text: str) -> str:
    """Remove private keys, secret values (key names kept), well-known token shapes,
    credentials in URLs and headers, and home-directory user names. Linear in len(text)."""
    text = _private_keys(text)
    out: list[str] = []
    done = 0
    for start, end in _candidate_lines(text):
        out.append(text[done:start])
        out.append(_ONE_PASS.sub(_replace, text[start:end]))
        done = end
    out.append(text[done:])
    return "".join(out)


def _scrub_everywhere(text: str) -> str:
    """scrub() without the trigger scan (for the test that proves the scan changes nothing)."""
    return _ONE_PASS.sub(_replace, _private_keys(text))
