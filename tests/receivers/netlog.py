#!/usr/bin/env python3
"""netlog: an HTTP server that writes down every request that reaches it, for the
transport tests (tests/e2e_netattack.sh): a stand-in for a receiver, a proxy, or a host
the key must never reach. Python's standard library only.

    netlog.py --log FILE --port-file FILE [--bind ADDR] [--mode ok|short|proxy]
              [--tls-cert CERT --tls-key KEY]

Each request is logged before it is answered, one JSON line: the address it came in
on ("dst": which of the machine's addresses the client connected to), the method, the
request target, the headers ([name, value] pairs, as sent) and the body's length.

  ok     answers 200 with a short body, then closes the connection
  short  answers 200 with Content-Length: 1000, sends 5 bytes of it and closes: an
         answer cut short after its status line
  proxy  an HTTP proxy: a request in absolute form (POST http://HOST:PORT/path) is
         sent on to HOST:PORT and its answer relayed; a CONNECT is answered 502 (no
         tunnel is made: the test looks only at what the proxy was told)

--bind: the address to listen on (default 127.0.0.1; 0.0.0.0 takes every address of
the machine, and "dst" tells them apart). The port is chosen by the system and written
to --port-file once the server listens. --tls-cert and --tls-key: HTTPS with that
certificate (a client that refuses it sends nothing, and nothing is logged). Stops on
SIGTERM.
"""
import argparse
import json
import os
import socket
import socketserver
import ssl
import threading
import urllib.parse

LOCK = threading.Lock()


def read_head(f):
    """The request line and the headers, or None at the end of the stream."""
    line = f.readline(65536)
    if not line:
        return None
    method, _, rest = line.decode("latin-1").rstrip("\r\n").partition(" ")
    target = rest.rsplit(" ", 1)[0]
    headers = []
    while True:
        h = f.readline(65536)
        if h in (b"\r\n", b"\n", b""):
            break
        name, _, value = h.decode("latin-1").partition(":")
        headers.append([name.strip(), value.strip()])
    return method, target, headers


def header(headers, name):
    for k, v in headers:
        if k.lower() == name.lower():
            return v
    return None


def read_body(f, headers):
    if (header(headers, "Transfer-Encoding") or "").lower() == "chunked":
        body = b""
        while True:
            size = int(f.readline().split(b";")[0].strip() or b"0", 16)
            if size == 0:
                while f.readline() not in (b"\r\n", b"\n", b""):
                    pass
                return body
            body += f.read(size)
            f.readline()
    n = int(header(headers, "Content-Length") or 0)
    return f.read(n) if n else b""


def forward(target, method, headers, body):
    """The answer of the request's own host, whole (the proxy's job)."""
    u = urllib.parse.urlsplit(target)
    path = (u.path or "/") + ("?" + u.query if u.query else "")
    out = [f"{method} {path} HTTP/1.1"]
    out += [f"{k}: {v}" for k, v in headers
            if k.lower() not in ("proxy-connection", "connection", "keep-alive")]
    out.append("Connection: close")
    with socket.create_connection((u.hostname, u.port or 80), timeout=20) as s:
        s.sendall(("\r\n".join(out) + "\r\n\r\n").encode("latin-1") + body)
        answer = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                return answer
            answer += chunk


class Handler(socketserver.StreamRequestHandler):
    def handle(self):
        head = read_head(self.rfile)
        if head is None:
            return
        method, target, headers = head
        body = b"" if method == "CONNECT" else read_body(self.rfile, headers)
        rec = {"dst": self.request.getsockname()[0], "method": method, "target": target,
               "headers": headers, "body_len": len(body)}
        with LOCK, open(self.server.log, "a", encoding="utf-8") as log:
            log.write(json.dumps(rec) + "\n")
        mode = self.server.mode
        if mode == "short":
            self.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n"
                             b"Content-Length: 1000\r\n\r\nhello")
        elif mode == "proxy" and method == "CONNECT":
            self.wfile.write(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n"
                             b"Connection: close\r\n\r\n")
        elif mode == "proxy":
            try:
                self.wfile.write(forward(target, method, headers, body))
            except OSError as e:
                msg = f"proxy: {e}".encode()
                self.wfile.write(b"HTTP/1.1 502 Bad Gateway\r\nConnection: close\r\n"
                                 b"Content-Length: %d\r\n\r\n%s" % (len(msg), msg))
        else:
            self.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n"
                             b"Content-Length: 3\r\nConnection: close\r\n\r\nok\n")
        self.wfile.flush()


class Server(socketserver.ThreadingTCPServer):
    allow_reuse_address = True
    daemon_threads = True


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--log", required=True)
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--bind", default="127.0.0.1")
    ap.add_argument("--mode", choices=("ok", "short", "proxy"), default="ok")
    ap.add_argument("--tls-cert")
    ap.add_argument("--tls-key")
    a = ap.parse_args()
    srv = Server((a.bind, 0), Handler)
    if a.tls_cert:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(a.tls_cert, a.tls_key)
        srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    srv.log, srv.mode = a.log, a.mode
    open(a.log, "a").close()
    with open(a.port_file + ".tmp", "w") as f:
        f.write(str(srv.server_address[1]))
    os.rename(a.port_file + ".tmp", a.port_file)
    srv.serve_forever()


if __name__ == "__main__":
    main()
