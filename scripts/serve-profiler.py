#!/usr/bin/env python3
# serve-profiler: by hand, the Firefox Profiler built from its source (its dist/) on
# loopback, and one profile, for docs/FIREFOX-PROFILER.md:
#   python3 scripts/serve-profiler.py DIST PROFILE.json PORTFILE
# Unknown paths get index.html
# (the app's routes: /from-url/...), /profile/NAME the profile with CORS.
import http.server, os, sys
DIST, PROFILE, PORTFILE = sys.argv[1:4]
class H(http.server.SimpleHTTPRequestHandler):
    def __init__(self, *a, **k):
        super().__init__(*a, directory=DIST, **k)
    def end_headers(self):
        self.send_header("Access-Control-Allow-Origin", "*")
        super().end_headers()
    def do_GET(self):
        if self.path.startswith("/profile/"):
            data = open(PROFILE, "rb").read()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            return
        p = self.path.split("?")[0]
        if not os.path.exists(os.path.join(DIST, p.lstrip("/"))) or p == "/":
            self.path = "/index.html"
        return super().do_GET()
    def log_message(self, *a):
        pass
s = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
open(PORTFILE, "w").write(str(s.server_address[1]))
s.serve_forever()
