"""Real Prometheus and Alertmanager for faultd's end-to-end tests, on 127.0.0.1 with ports chosen
at run time, plus a stand-in for faultd's Alertmanager webhook (POST /api/v1/alerts with a bearer
token) that records every notification it gets.

Every child process is started through `Service`, which keeps its output in a log file of the
test's work directory and stops it (SIGTERM, then SIGKILL) in `stop()`; the test calls `stop()`
on all of them in a `finally`. The receiver serves from a thread of the test process."""
import json
import os
import signal
import subprocess
import threading
import time
import urllib.parse
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def http_json(url, timeout=5):
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return json.loads(r.read().decode())


def http_ok(url):
    try:
        with urllib.request.urlopen(url, timeout=2) as r:
            return r.status == 200
    except OSError:
        return False


class Receiver:
    """Records each POST (arrival time, path, Authorization header, JSON body) and answers 200,
    or 401 when a POST to `secured_path` lacks the expected bearer token (the notification is
    recorded anyway, so the test can say what came). Other paths need no token."""

    def __init__(self, token, secured_path, forward=None):
        """`forward(body, auth)`, if given, passes an authorised secured POST on (to the real
        faultd webhooks) and returns the HTTP status to answer with."""
        self.token = token
        self.forward = forward
        self.secured_path = secured_path
        self._posts = []
        self._lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                t = time.monotonic()
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw.decode())
                except ValueError:
                    body = None
                auth = self.headers.get("Authorization")
                with receiver._lock:
                    receiver._posts.append({"t": t, "path": self.path, "auth": auth, "body": body})
                ok = auth == "Bearer " + receiver.token or self.path != receiver.secured_path
                status = 200 if ok else 401
                if ok and receiver.forward and self.path == receiver.secured_path and body:
                    status = receiver.forward(body, auth)
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def start(self):
        self._thread.start()

    def stop(self):
        self._server.shutdown()
        self._server.server_close()

    def posts(self, path=None):
        with self._lock:
            return [p for p in self._posts if path is None or p["path"] == path]


class Service:
    """A child process whose output goes to NAME.log in the work directory."""

    def __init__(self, name, argv, workdir):
        self.name = name
        self.argv = argv
        self.log_path = os.path.join(workdir, name + ".log")
        self.proc = None

    def start(self):
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen(self.argv, stdout=log, stderr=subprocess.STDOUT,
                                         stdin=subprocess.DEVNULL, start_new_session=True)
        return self

    def running(self):
        return self.proc is not None and self.proc.poll() is None

    def stop(self):
        if not self.running():
            return
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()

    def tail(self, lines=30):
        try:
            with open(self.log_path, "rb") as f:
                text = f.read().decode("utf-8", "replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])


class Prometheus(Service):
    def __init__(self, binary, workdir, port, config_path):
        self.url = "http://127.0.0.1:%d" % port
        super().__init__("prometheus", [
            binary, "--config.file=" + config_path,
            "--storage.tsdb.path=" + os.path.join(workdir, "prometheus-data"),
            "--web.listen-address=127.0.0.1:%d" % port,
        ], workdir)

    def ready(self):
        return http_ok(self.url + "/-/ready")

    def alerts(self):
        """Alerts Prometheus holds now (pending and firing), as /api/v1/alerts gives them."""
        return http_json(self.url + "/api/v1/alerts")["data"]["alerts"]

    def query(self, expr):
        q = urllib.parse.urlencode({"query": expr})
        return http_json(self.url + "/api/v1/query?" + q)["data"]["result"]


class Alertmanager(Service):
    def __init__(self, binary, workdir, port, config_path):
        self.url = "http://127.0.0.1:%d" % port
        super().__init__("alertmanager", [
            binary, "--config.file=" + config_path,
            "--storage.path=" + os.path.join(workdir, "alertmanager-data"),
            "--web.listen-address=127.0.0.1:%d" % port,
            "--cluster.listen-address=",  # empty: no gossip, a single Alertmanager
        ], workdir)

    def ready(self):
        return http_ok(self.url + "/-/ready")

    def alerts(self):
        """Every alert Alertmanager holds (active, inhibited, silenced), /api/v2/alerts."""
        return http_json(self.url + "/api/v2/alerts")
