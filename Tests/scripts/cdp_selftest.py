#!/usr/bin/env python3
"""Self-test of Tests/scripts/cdp.py against a real headless Chromium.

Starts a local HTTPS server (self-signed certificate made with openssl in a temp dir)
on 127.0.0.1 that serves a page playing a fragmented H.264+AAC MP4 (made with ffmpeg)
through Media Source Extensions, fetched with fetch(). Checks that playback really
advances at 1280x720, plus the harness's own API: cookies through api(), error and CSP
collection, timeouts with clear messages, screenshots, the CLI, cleanup.

Needs: chromium, ffmpeg, openssl (apt-get install chromium ffmpeg openssl).
Prints "N passed, M failed" and exits non-zero if anything failed.
"""

import http.server
import json
import os
import shutil
import socket
import ssl
import struct
import subprocess
import sys
import tempfile
import threading
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True          # no __pycache__ in the work tree
sys.path.insert(0, HERE)
import cdp  # noqa: E402

PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><link rel="icon" href="data:,">
<title>MSE self-test</title></head>
<body style="margin:0;background:#123">
<video id="v" muted playsinline style="width:100%"></video>
<p id="status">loading</p>
<script src="/mse.js"></script>
</body></html>
"""

# Plays /media/test.mp4 through MSE: one fetch(), one appendBuffer, endOfStream, play().
MSE_JS = """
window.mse = {state: 'start'};
(async () => {
  const codecs = new URLSearchParams(location.search).get('codecs');
  const v = document.getElementById('v');
  const ms = new MediaSource();
  v.src = URL.createObjectURL(ms);
  await new Promise(r => ms.addEventListener('sourceopen', r, {once: true}));
  const sb = ms.addSourceBuffer(`video/mp4; codecs="${codecs}"`);
  const data = await (await fetch('/media/test.mp4')).arrayBuffer();
  mse.bytes = data.byteLength;
  await new Promise((ok, fail) => {
    sb.addEventListener('updateend', ok, {once: true});
    sb.addEventListener('error', () => fail(new Error('SourceBuffer error')), {once: true});
    sb.appendBuffer(data);
  });
  mse.buffered = [sb.buffered.start(0), sb.buffered.end(0)];
  ms.endOfStream();
  await v.play();
  mse.state = 'playing';
  document.getElementById('status').textContent = 'playing';
})().catch(e => { mse.state = 'error: ' + e; console.error('mse failed', String(e)); });
"""

CSP_PAGE = """<!doctype html><html><head><link rel="icon" href="data:,"></head><body>
<script>window.inlineRan = true;</script>
<script src="/bad.js"></script>
</body></html>
"""
BAD_JS = "console.error('deliberate console error'); setTimeout(() => { throw new Error('deliberate uncaught'); });"


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    root = None        # the temp dir, set before the server starts
    seen = []          # (method, path, headers) of each request

    def log_message(self, *args):
        pass

    def _send(self, code, body, ctype="text/plain", headers=()):
        data = body if isinstance(body, bytes) else body.encode()
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        for k, v in headers:
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        Handler.seen.append(("GET", self.path, dict(self.headers)))
        path = self.path.split("?")[0]
        if path == "/":
            return self._send(200, PAGE, "text/html; charset=utf-8")
        if path == "/mse.js":
            return self._send(200, MSE_JS, "text/javascript")
        if path == "/media/test.mp4":
            with open(os.path.join(self.root, "test.mp4"), "rb") as f:
                return self._send(200, f.read(), "video/mp4")
        if path == "/csp":
            return self._send(200, CSP_PAGE, "text/html",
                              [("Content-Security-Policy", "default-src 'self'")])
        if path == "/bad.js":
            return self._send(200, BAD_JS, "text/javascript")
        if path == "/api/whoami":
            return self._send(200, json.dumps({"cookie": self.headers.get("Cookie")}),
                              "application/json")
        if path == "/slow":
            time.sleep(1)
            return self._send(200, "slow")
        return self._send(404, "not found")

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        Handler.seen.append(("POST", self.path, dict(self.headers)))
        if self.path == "/api/login":
            req = json.loads(body or b"{}")
            if req.get("pin") != "1234":
                return self._send(401, json.dumps({"error": "bad pin"}), "application/json")
            return self._send(200, json.dumps({"ok": True, "origin": self.headers.get("Origin")}),
                              "application/json",
                              [("Set-Cookie", "session=abc123; Path=/; Secure; HttpOnly; SameSite=Strict")])
        return self._send(404, "not found")


def make_fixtures(tmp):
    """Self-signed cert for 127.0.0.1 and a 4 s fragmented MP4 (H.264 High + AAC, 1280x720)."""
    for tool in ("openssl", "ffmpeg"):
        if not shutil.which(tool):
            raise SystemExit(f"cdp_selftest: {tool} missing (apt-get install {tool})")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                    "-keyout", f"{tmp}/key.pem", "-out", f"{tmp}/cert.pem",
                    "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"],
                   check=True, capture_output=True)
    subprocess.run(["ffmpeg", "-v", "error", "-y",
                    "-f", "lavfi", "-i", "testsrc2=size=1280x720:rate=30",
                    "-f", "lavfi", "-i", "sine", "-t", "4",
                    "-c:v", "libx264", "-preset", "veryfast", "-g", "30", "-c:a", "aac",
                    "-movflags", "frag_keyframe+empty_moov+default_base_moof",
                    f"{tmp}/test.mp4"], check=True, capture_output=True)


def codecs_of(mp4_path):
    """The RFC 6381 codecs string of an H.264+AAC MP4, read from its avcC box."""
    with open(mp4_path, "rb") as f:
        head = f.read(1 << 16)
    i = head.index(b"avcC") + 4
    profile, compat, level = head[i + 1], head[i + 2], head[i + 3]
    return f"avc1.{profile:02x}{compat:02x}{level:02x}, mp4a.40.2"


def png_size(path):
    with open(path, "rb") as f:
        head = f.read(24)
    assert head[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    return struct.unpack(">II", head[16:24])


class Runner:
    def __init__(self):
        self.passed = 0
        self.failed = 0

    def check(self, name, fn):
        t0 = time.monotonic()
        try:
            fn()
        except Exception:
            self.failed += 1
            print(f"FAIL {name} ({time.monotonic() - t0:.1f}s)")
            traceback.print_exc(file=sys.stdout)
        else:
            self.passed += 1
            print(f"ok   {name} ({time.monotonic() - t0:.1f}s)")
        sys.stdout.flush()


def main():
    started = time.monotonic()
    tmp = tempfile.mkdtemp(prefix="cdp-selftest-")
    server = None
    r = Runner()
    try:
        make_fixtures(tmp)
        codecs = codecs_of(f"{tmp}/test.mp4")
        Handler.root = tmp
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        server.daemon_threads = True
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(f"{tmp}/cert.pem", f"{tmp}/key.pem")
        server.socket = ctx.wrap_socket(server.socket, server_side=True)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        base = f"https://127.0.0.1:{server.server_address[1]}"
        print(f"fixtures ready in {time.monotonic() - started:.1f}s; server {base}; codecs {codecs}")

        # A missing browser is a hard error that names the package.
        def missing_chromium():
            try:
                cdp.Browser(binary="/nonexistent/chromium")
            except cdp.ChromiumNotFound as exc:
                assert "apt-get install chromium" in str(exc), exc
            else:
                raise AssertionError("no ChromiumNotFound")
        r.check("missing chromium raises ChromiumNotFound naming apt-get install chromium",
                missing_chromium)

        with cdp.Browser(kill_after=120) as browser:
            profile, proc = browser.profile_dir, browser.proc
            page = browser.new_page()

            def version():
                assert browser.version.startswith(("Chrome/", "HeadlessChrome/")), browser.version
                print(f"     browser: {browser.version} at {browser.binary}")
            r.check("browser starts over the DevTools pipe", version)

            def codecs_supported():
                for c in ("avc1.64001f, mp4a.40.2", "avc1.42E01E, mp4a.40.2", codecs):
                    assert page.evaluate(f"MediaSource.isTypeSupported('video/mp4; codecs=\"{c}\"')"), c
            r.check("MSE supports H.264 + AAC", codecs_supported)

            def mse_playback():
                page.navigate(f"{base}/?codecs={codecs}", timeout=15)
                assert page.evaluate("isSecureContext") is True
                page.wait_for("mse.state !== 'start' && mse.state", timeout=10,
                              message="MSE setup to finish")
                state = page.evaluate("mse.state")
                assert state == "playing", f"MSE state {state!r}, errors {page.errors}"
                t1 = page.evaluate("document.getElementById('v').currentTime")
                # A deadline, not a speed: a loaded machine decodes 720p slower than real time.
                page.wait_for(f"document.getElementById('v').currentTime > {t1} + 1.0", timeout=20,
                              message="currentTime to advance by 1 s")
                got = page.evaluate("(() => { const v = document.getElementById('v'); return "
                                    "{w: v.videoWidth, h: v.videoHeight, t: v.currentTime, "
                                    "paused: v.paused, buffered: mse.buffered, bytes: mse.bytes}; })()")
                assert got["w"] == 1280 and got["h"] == 720, got
                assert not got["paused"], got
                print(f"     {got}")
            r.check("fMP4 via MSE plays: currentTime advances, videoWidth == 1280", mse_playback)

            def screenshot():
                out = os.path.join(tmp, "mse.png")
                page.screenshot(out)
                assert png_size(out) == (390, 844), png_size(out)
                if os.environ.get("CDP_SELFTEST_KEEP_PNG"):
                    shutil.copy(out, os.environ["CDP_SELFTEST_KEEP_PNG"])
            r.check("screenshot writes a 390x844 PNG", screenshot)

            r.check("page playing video has no errors", page.assert_no_errors)

            def api_cookies():
                bad = page.api("POST", "/api/login", {"pin": "0000"})
                assert bad.status == 401 and bad.json == {"error": "bad pin"}, bad
                page.wait_for("true")   # let the log entry for the 401 arrive
                assert any("status of 401" in e for e in page.errors), page.errors
                page.clear_errors()     # Chromium logs the deliberate 401 as a network error
                ok = page.api("POST", "/api/login", {"pin": "1234"})
                assert ok.status == 200, ok
                assert ok.json["origin"] == base, f"Origin {ok.json['origin']!r}, want {base}"
                assert page.evaluate("document.cookie") == "", "HttpOnly cookie visible to JS"
                who = page.api("GET", "/api/whoami")
                assert who.json["cookie"] == "session=abc123", who
                c = {c["name"]: c for c in page.cookies()}["session"]
                assert c["secure"] and c["httpOnly"] and c["sameSite"] == "Strict", c
            r.check("api(): Secure HttpOnly SameSite=Strict cookie set and sent, real Origin",
                    api_cookies)

            def errors_collected():
                p2 = browser.new_page()
                p2.navigate(f"{base}/csp")
                p2.wait_for("document.readyState === 'complete'")
                deadline = time.monotonic() + 5
                while len(p2.errors) < 3 and time.monotonic() < deadline:
                    time.sleep(0.05)
                errs = "\n".join(p2.errors)
                if os.environ.get("CDP_SELFTEST_VERBOSE"):
                    print("     " + errs.replace("\n", "\n     "))
                assert p2.evaluate("window.inlineRan === undefined"), "CSP did not block inline script"
                assert "Content Security Policy" in errs, errs
                assert "deliberate console error" in errs, errs
                assert "deliberate uncaught" in errs, errs
                try:
                    p2.assert_no_errors()
                except AssertionError as exc:
                    assert "Content Security Policy" in str(exc)
                else:
                    raise AssertionError("assert_no_errors did not raise")
                p2.assert_no_errors(ignore=["Content Security Policy", "deliberate"])
                p2.close()
            r.check("console errors, uncaught exceptions and CSP violations are collected",
                    errors_collected)

            def wait_timeout():
                t0 = time.monotonic()
                try:
                    page.wait_for("document.title.length * 0 + 41", timeout=0.5)
                except cdp.CDPTimeout:
                    raise AssertionError("41 is truthy; wait_for should have returned")
                try:
                    page.wait_for("document.getElementById('status').textContent === 'never'",
                                  timeout=0.6)
                except cdp.CDPTimeout as exc:
                    msg = str(exc)
                    assert "textContent === 'never'" in msg and "last value: False" in msg, msg
                else:
                    raise AssertionError("no CDPTimeout")
                try:
                    page.wait_for("nosuchvar.x", timeout=0.3)
                except cdp.CDPTimeout as exc:
                    assert "ReferenceError" in str(exc), exc
                assert time.monotonic() - t0 < 4
            r.check("wait_for times out with what it waited for and the last value", wait_timeout)

            def eval_errors():
                try:
                    page.evaluate("Promise.reject(new Error('nope'))")
                except cdp.JSError as exc:
                    assert "nope" in str(exc), exc
                else:
                    raise AssertionError("no JSError")
                try:
                    page.evaluate("new Promise(() => {})", timeout=0.5)
                except cdp.CDPTimeout as exc:
                    assert "never settles" in str(exc), exc
                else:
                    raise AssertionError("no CDPTimeout")
                assert page.evaluate("1 + 1") == 2
                assert page.api("GET", "/slow", timeout=5).text == "slow"
            r.check("evaluate raises JSError / CDPTimeout, page still usable", eval_errors)

            def navigate_errors():
                p3 = browser.new_page()
                with socket.socket() as s:          # a port that nothing listens on
                    s.bind(("127.0.0.1", 0))
                    port = s.getsockname()[1]
                try:
                    p3.navigate(f"https://127.0.0.1:{port}/", timeout=10)
                except cdp.CDPError as exc:
                    assert "ERR_CONNECTION_REFUSED" in str(exc), exc
                else:
                    raise AssertionError("no CDPError")
                p3.close()
            r.check("navigate to a closed port raises CDPError", navigate_errors)

        def cleaned_up():
            assert proc.poll() is not None, "chromium still running"
            assert not os.path.exists(profile), f"profile dir {profile} left behind"
            left = browser.group_members()
            assert not left, f"processes left in chromium's process group: {left}"
        r.check("close() ends chromium and its helpers and removes the profile", cleaned_up)

        def cli():
            out = os.path.join(tmp, "cli.png")
            res = subprocess.run(
                [sys.executable, os.path.join(HERE, "cdp.py"), "screenshot",
                 f"{base}/?codecs={codecs}", out, "--width", "640", "--height", "480",
                 "--wait-js", "document.getElementById('v').currentTime > 0.5"],
                capture_output=True, text=True, timeout=60)
            assert res.returncode == 0, res.stderr
            assert png_size(out) == (640, 480), png_size(out)
        r.check("CLI screenshot with --wait-js", cli)
    except Exception:
        r.failed += 1
        print("FAIL setup")
        traceback.print_exc(file=sys.stdout)
    finally:
        if server:
            server.shutdown()
            server.server_close()
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"cdp self-test took {time.monotonic() - started:.1f}s")
    print(f"{r.passed} passed, {r.failed} failed")
    return 1 if r.failed else 0


if __name__ == "__main__":
    sys.exit(main())
