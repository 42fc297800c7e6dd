"""A report page in headless Chromium, driven over the DevTools protocol:
open it, evaluate an expression, click at a point, as a user would. The
tests of what a click shows use it (the other browser tests read the DOM
Chromium dumps). Standard library only: a WebSocket client of the frames
Chromium sends (text, unfragmented or in pieces, never compressed).

    with Page(chromium_path, tmpdir) as p:
        p.open("file:///tmp/x.html", "document.documentElement.dataset.gpuprofReady === '1'")
        x, y = p.evaluate("[10, 20]")
        p.click(x, y)
"""
import base64
import json
import os
import re
import shutil
import socket
import struct
import subprocess
import tempfile
import threading
import time
import urllib.request

FLAGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--enable-logging=stderr", "--v=0"]


class WebSocket:
    """A client's end of one WebSocket (RFC 6455), text messages only."""

    def __init__(self, url, timeout):
        m = re.match(r"ws://([^:/]+):(\d+)(/.*)$", url)
        if not m:
            raise RuntimeError("not a ws:// address: %r" % url)
        host, port, path = m.group(1), int(m.group(2)), m.group(3)
        self.sock = socket.create_connection((host, port), timeout=timeout)
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall(("GET %s HTTP/1.1\r\nHost: %s:%d\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                           "Sec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n\r\n" % (path, host, port, key)).encode())
        self.buf = b""
        while b"\r\n\r\n" not in self.buf:
            self._more()
        head, self.buf = self.buf.split(b"\r\n\r\n", 1)
        if b" 101 " not in head.split(b"\r\n", 1)[0]:
            raise RuntimeError("the WebSocket was refused: %r" % head[:200])

    def _more(self):
        chunk = self.sock.recv(1 << 16)
        if not chunk:
            raise EOFError("the browser closed the connection")
        self.buf += chunk

    def _take(self, n):
        while len(self.buf) < n:
            self._more()
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def _frame(self, opcode, data):
        # a client masks what it sends
        mask = os.urandom(4)
        n = len(data)
        head = bytes([0x80 | opcode])
        if n < 126:
            head += bytes([0x80 | n])
        elif n < 1 << 16:
            head += bytes([0x80 | 126]) + struct.pack(">H", n)
        else:
            head += bytes([0x80 | 127]) + struct.pack(">Q", n)
        self.sock.sendall(head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(data)))

    def send(self, text):
        self._frame(0x1, text.encode())

    def recv(self):
        msg = b""
        while True:
            b0, b1 = self._take(2)
            n = b1 & 0x7F
            if n == 126:
                n = struct.unpack(">H", self._take(2))[0]
            elif n == 127:
                n = struct.unpack(">Q", self._take(8))[0]
            mask = self._take(4) if b1 & 0x80 else None
            data = self._take(n)
            if mask:
                data = bytes(b ^ mask[i % 4] for i, b in enumerate(data))
            op = b0 & 0x0F
            if op == 0x8:
                raise EOFError("the browser closed the WebSocket")
            if op == 0x9:
                self._frame(0xA, data)  # a ping: pong
                continue
            if op == 0xA:
                continue
            msg += data
            if b0 & 0x80:
                return msg.decode("utf-8", "replace")

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass


class Page:
    """One headless Chromium with one tab. log: what it wrote on stderr
    (the page's console messages among it)."""

    def __init__(self, browser, tmp, size=(1400, 900), timeout=60):
        self.timeout = timeout
        self.profile = tempfile.mkdtemp(prefix="chromium.", dir=tmp)
        self.log = []
        self.ws = None
        self.id = 0
        self.proc = subprocess.Popen([browser] + FLAGS + ["--remote-debugging-port=0", "--user-data-dir=" + self.profile,
                                      "--window-size=%d,%d" % size, "about:blank"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        port = self._port()
        deadline = time.monotonic() + timeout
        while True:
            try:
                with urllib.request.urlopen("http://127.0.0.1:%d/json/list" % port, timeout=timeout) as r:
                    tabs = [t for t in json.load(r) if t.get("type") == "page" and t.get("webSocketDebuggerUrl")]
            except OSError:
                tabs = []
            if tabs:
                break
            if time.monotonic() > deadline:
                self.close()
                raise RuntimeError("Chromium listed no tab to drive")
            time.sleep(0.1)
        self.ws = WebSocket(tabs[0]["webSocketDebuggerUrl"], timeout)

    def _port(self):
        # "DevTools listening on ws://127.0.0.1:PORT/devtools/browser/ID",
        # then its log goes on (read on, lest the pipe fill)
        found = []
        ready = threading.Event()

        def read():
            for raw in self.proc.stderr:
                line = raw.decode("utf-8", "replace")
                self.log.append(line)
                m = re.search(r"DevTools listening on ws://[^:/]+:(\d+)/", line)
                if m and not found:
                    found.append(int(m.group(1)))
                    ready.set()
            ready.set()

        threading.Thread(target=read, daemon=True).start()
        if not ready.wait(self.timeout) or not found:
            self.close()
            raise RuntimeError("Chromium did not say where its DevTools listen: %s" % "".join(self.log)[-500:])
        return found[0]

    def call(self, method, **params):
        self.id += 1
        self.ws.send(json.dumps({"id": self.id, "method": method, "params": params}))
        while True:
            msg = json.loads(self.ws.recv())
            if msg.get("id") == self.id:
                if "error" in msg:
                    raise RuntimeError("%s: %s" % (method, msg["error"]))
                return msg.get("result") or {}

    def evaluate(self, expression):
        """The expression's value (JSON-able), in the page."""
        r = self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in r:
            raise RuntimeError("in the page: %s" % json.dumps(r["exceptionDetails"])[:500])
        return (r.get("result") or {}).get("value")

    def open(self, url, ready):
        """Navigates to url and waits until the expression ready is true."""
        self.call("Page.navigate", url=url)
        deadline = time.monotonic() + self.timeout
        while not self.evaluate(ready):
            if time.monotonic() > deadline:
                raise RuntimeError("the page was not ready within %d s: %s" % (self.timeout, url))
            time.sleep(0.05)

    def click(self, x, y):
        """A left click at (x, y), CSS pixels of the viewport."""
        self.call("Input.dispatchMouseEvent", type="mouseMoved", x=x, y=y)
        for kind in ("mousePressed", "mouseReleased"):
            self.call("Input.dispatchMouseEvent", type=kind, x=x, y=y, button="left", clickCount=1)

    def close(self):
        if self.ws:
            self.ws.close()
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        shutil.rmtree(self.profile, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
