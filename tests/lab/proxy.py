"""A small HTTP proxy for the lab hosts' apt: GET/HEAD only, only to allowed host names.

Listens on the lab bridge address; apt in the hosts uses it through Acquire::http::Proxy.
Everything else (other methods, CONNECT, other hosts, other ports, https) is refused.
Stdlib only; run by path: python3 proxy.py --listen ADDR --port P --allow deb.debian.org ...
"""

from __future__ import annotations

import argparse
import http.client
import signal
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

HOP_BY_HOP = {
    "connection", "proxy-connection", "keep-alive", "proxy-authorization", "proxy-authenticate",
    "te", "trailer", "trailers", "transfer-encoding", "upgrade",
}
UPSTREAM_TIMEOUT_S = 30
CHUNK = 64 * 1024


class ProxyHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"  # one request per connection: simple and enough for apt
    allowed: frozenset[str] = frozenset()

    def log_message(self, format: str, *args: object) -> None:
        sys.stdout.write(f"{time.strftime('%H:%M:%S')} {self.client_address[0]} {format % args}\n")
        sys.stdout.flush()

    def do_GET(self) -> None:
        self.forward()

    def do_HEAD(self) -> None:
        self.forward()

    def refuse(self) -> None:
        self.send_error(405, "lab proxy: only GET and HEAD")

    do_POST = do_PUT = do_DELETE = do_PATCH = do_OPTIONS = do_CONNECT = refuse

    def target(self) -> tuple[str, str] | None:
        url = urlsplit(self.path)
        host = (url.hostname or "").lower()
        if url.scheme != "http" or host not in self.allowed or url.port not in (None, 80):
            return None
        path = url.path or "/"
        return host, path + (f"?{url.query}" if url.query else "")

    def forward(self) -> None:
        target = self.target()
        if target is None:
            self.send_error(403, "lab proxy: host not allowed")
            return
        host, path = target
        headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP_BY_HOP}
        headers["Host"] = host
        conn = http.client.HTTPConnection(host, 80, timeout=UPSTREAM_TIMEOUT_S)
        try:
            conn.request(self.command, path, headers=headers)
            resp = conn.getresponse()
            self.send_response_only(resp.status, resp.reason)
            for k, v in resp.getheaders():
                if k.lower() not in HOP_BY_HOP:
                    self.send_header(k, v)
            self.send_header("Connection", "close")
            self.end_headers()
            self.log_request(resp.status)
            if self.command != "HEAD":
                while chunk := resp.read(CHUNK):
                    self.wfile.write(chunk)
        except OSError as exc:
            self.log_message("upstream %s failed: %s", host, exc)
            self.close_connection = True
        finally:
            conn.close()


def serve(listen: str, port: int, allowed: list[str]) -> None:
    handler = type("Handler", (ProxyHandler,), {"allowed": frozenset(h.lower() for h in allowed)})
    server = ThreadingHTTPServer((listen, port), handler)
    server.daemon_threads = True
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    print(f"lab proxy on {listen}:{port} for {', '.join(sorted(allowed))}", flush=True)
    try:
        server.serve_forever()
    finally:
        server.server_close()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--listen", required=True)
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--allow", action="append", required=True, help="allowed host name (repeat)")
    args = p.parse_args(argv)
    serve(args.listen, args.port, args.allow)
    return 0


if __name__ == "__main__":
    sys.exit(main())
