"""Serve a directory over HTTPS (the lab's stand-in for a site mirror over https).

    python -m tests.lab.tlsserve --bind ADDR --port N --directory DIR --cert CERT --key KEY

The standard library's http.server with the socket wrapped in TLS (the certificate is the
lab's own, made by Lab.tls_files and trusted on hosts by Lab.trust_lab_ca).
"""

from __future__ import annotations

import argparse
import functools
import http.server
import ssl


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--bind", required=True)
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--directory", required=True)
    ap.add_argument("--cert", required=True)
    ap.add_argument("--key", required=True)
    a = ap.parse_args()
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=a.directory)
    server = http.server.ThreadingHTTPServer((a.bind, a.port), handler)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(a.cert, a.key)
    server.socket = ctx.wrap_socket(server.socket, server_side=True)
    server.serve_forever()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
