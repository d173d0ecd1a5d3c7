#!/usr/bin/env python3
"""End-to-end test of the web app in a real browser against a real `kioskcam run`.

    python3 Tests/scripts/web-browser.py .build/debug/kioskcam [--screenshots DIR]

Makes a temporary library and state directory, adds two web users (alice, admin;
bob, viewer), records one short file with `kioskcam record` (so that logged-out
requests for a real media file can be tried), starts the daemon on a free port of
127.0.0.1 (test-pattern camera 640x360, tone microphone) and drives headless Chromium
through Tests/scripts/cdp.py:

  logged out   every page answers 401 and sends the browser to /login?next=PAGE;
               every API route, media file, thumbnail and the live WebSocket are refused
  alice        logs in through the form (cookie HttpOnly, Secure, SameSite=Strict); the
               live video plays at 640x360 (first picture time printed); the page's
               Record button records ~3 s, its Still button takes a photo; both show up
               in the library's day grid; the recording plays to its end in #player;
               no JS error, CSP violation or failed load on any page; logs out
  bob          (viewer) has no Record/Still buttons; recording, deleting, /settings: 403
  login        a wrong password shows an error; repeated wrong ones get a
               "try again in N s" (429), and then even the right password is refused

With --screenshots DIR it saves DIR/web-<page>.png (390x844) for login, live, library,
player, events, status and settings.

Every check prints PASS or FAIL with its detail and the run goes on after a failure;
the last line is "N passed, M failed" and the exit status is 1 if any check failed.
The daemon gets SIGTERM (SIGKILL after 30 s) and the temporary directory is removed,
whatever happens. Needs chromium (apt-get install chromium).
"""

import argparse
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
from daemon_config import base_config
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
WEB_DIR = os.path.join(REPO, "web")
sys.dont_write_bytecode = True          # no __pycache__ in the work tree
sys.path.insert(0, HERE)
import cdp  # noqa: E402

PASSWORD = "correct horse battery"
WIDTH, HEIGHT = 390, 844
CAMERA = (640, 360)
PAGES = ("/live", "/library", "/events", "/status", "/settings")
SHOTS = ("login", "live", "library", "player", "events", "status", "settings")
RUN_DEADLINE = 150                      # the browser's watchdog (seconds)


# ----------------------------------------------------------------------------- checks
class Checks:
    def __init__(self):
        self.passed = 0
        self.failed = 0
        self.failures = []

    def record(self, name, ok, detail=""):
        line = ("PASS" if ok else "FAIL") + ": " + name + (f" — {detail}" if detail else "")
        print(line, flush=True)
        if ok:
            self.passed += 1
        else:
            self.failed += 1
            self.failures.append(name)
        return ok

    def run(self, name, fn, needs=None):
        """Run fn() -> detail text; an exception (AssertionError, CDPError...) is a FAIL.

        needs: (ok, why) of a step this one cannot run without; when not ok the
        check fails with "not run: why".
        """
        if needs is not None and not needs[0]:
            return self.record(name, False, f"not run: {needs[1]}")
        try:
            detail = fn()
        except AssertionError as exc:
            return self.record(name, False, str(exc) or "assertion failed")
        except Exception as exc:                  # noqa: BLE001 - every failure is reported
            text = f"{exc.__class__.__name__}: {exc}"
            if not isinstance(exc, cdp.CDPError):
                text += "\n" + "".join(traceback.format_exc(limit=3))
            return self.record(name, False, text)
        return self.record(name, True, detail or "")


def expect(cond, message):
    if not cond:
        raise AssertionError(message)


# ----------------------------------------------------------------------------- daemon
def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def write_config(tmp, port):
    path = os.path.join(tmp, "kioskcam.toml")
    with open(path, "w") as f:
        f.write(base_config(tmp, f"{CAMERA[0]}x{CAMERA[1]}") + f"""[web]
listen = "127.0.0.1:{port}"
""")
    return path


def run_cli(binary, args, stdin_text=None, timeout=60):
    r = subprocess.run([binary] + args, input=stdin_text, capture_output=True, text=True, timeout=timeout)
    if r.returncode != 0:
        raise RuntimeError(f"kioskcam {' '.join(args)} exited {r.returncode}: {(r.stderr or r.stdout).strip()[-800:]}")
    return r.stdout


class Daemon:
    def __init__(self, binary, tmp):
        self.binary = binary
        self.tmp = tmp
        self.proc = None
        self.port = None
        self.config = None
        self.log_path = os.path.join(tmp, "kioskcam.log")

    def log_text(self):
        try:
            with open(self.log_path, errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    def start(self, timeout=40):
        """Start `kioskcam run`; wait for "web app listening on port". A port another
        program took in the meantime means another free port (at most 3 tries)."""
        for attempt in range(3):
            self.port = free_port()
            self.config = write_config(self.tmp, self.port)
            with open(self.log_path, "w") as log:
                self.proc = subprocess.Popen([self.binary, "run", "--config", self.config],
                                             stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                             start_new_session=True)
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline:
                text = self.log_text()
                if f"web app listening on port {self.port}" in text:
                    return
                if "is taken by another program" in text and attempt < 2:
                    self.stop()
                    break
                if self.proc.poll() is not None:
                    raise RuntimeError(f"kioskcam run exited {self.proc.returncode} before the web app listened:\n"
                                       + "\n".join(text.splitlines()[-20:]))
                time.sleep(0.1)
            else:
                raise RuntimeError(f"no \"web app listening on port\" in the log within {timeout} s:\n"
                                   + "\n".join(self.log_text().splitlines()[-20:]))
        raise RuntimeError("three free ports in a row were taken before kioskcam could listen")

    def stop(self):
        """SIGTERM, wait up to 30 s, then SIGKILL. Returns how it ended (text)."""
        if self.proc is None or self.proc.poll() is not None:
            return "not running"
        t0 = time.monotonic()
        self.proc.send_signal(signal.SIGTERM)
        try:
            rc = self.proc.wait(timeout=30)
            return f"stopped on SIGTERM in {time.monotonic() - t0:.1f} s (exit {rc})"
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=10)
            return "did NOT stop within 30 s of SIGTERM: killed"


# ----------------------------------------------------------------------------- page helpers
class Session:
    """One browser tab and what the test learnt on the way."""

    def __init__(self, checks, page, base, shots):
        self.checks = checks
        self.page = page
        self.base = base
        self.shots = shots
        self.expected = []            # (status, url) of failed loads the test caused on purpose
        self.expected_ws = False      # a refused /api/live WebSocket the test caused on purpose
        self.favicon_checked = False  # /favicon.ico has a check of its own
        self.mark = 0

    def url(self, path):
        return self.base + path

    def expect_failure(self, status, path):
        self.expected.append((status, self.url(path)))

    def begin(self):
        """Start of a stretch whose errors are checked with errors_since()."""
        self.mark = len(self.page.errors)
        self.expected = []
        self.expected_ws = False

    def errors_since(self):
        out = []
        for err in self.page.errors[self.mark:]:
            if any(f"status of {status} " in err and err.endswith(f"({url})") for status, url in self.expected):
                continue
            if self.expected_ws and self.ws_refusal(err) is not None:
                continue
            if self.favicon_checked and "status of 404 " in err and err.endswith(f"({self.url('/favicon.ico')})"):
                continue                  # counted once, by its own check (the browser asks only sometimes)
            out.append(err)
        return out

    def ws_refusal(self, err):
        """The HTTP status of a refused /api/live handshake that `err` reports, else None."""
        live = self.url("/api/live").replace("https://", "wss://")
        m = re.search(r"WebSocket connection to '([^']+)' failed: .*Unexpected response code: (\d+)", err)
        return int(m.group(2)) if m and m.group(1) == live else None

    def check_errors(self, checks, where):
        def fn():
            errs = self.errors_since()
            expect(not errs, f"{len(errs)} error(s) on {where}:\n    " + "\n    ".join(errs))
            ignored = len(self.page.errors) - self.mark
            return f"none ({ignored} expected refusal(s) the test caused)" if ignored else "none"
        checks.run(f"no JS errors, CSP violations or failed loads: {where}", fn)

    def shot(self, name, ready=None):
        """Save DIR/web-NAME.png (with --screenshots); a failure is a failed check, not the end."""
        if not self.shots:
            return None
        path = os.path.join(self.shots, f"web-{name}.png")
        try:
            if ready:
                self.wait(ready, timeout=5, message=f"the page to be ready for web-{name}.png")
            self.page.screenshot(path)
        except cdp.CDPError as exc:
            self.checks.record(f"screenshot web-{name}.png", False, f"{exc.__class__.__name__}: {exc}")
            return None
        return path

    def js(self, expr, **kw):
        return self.page.evaluate(expr, **kw)

    def wait(self, expr, timeout=10, message=None):
        """page.wait_for, going on through a navigation (a 401 page's meta refresh, the
        login's location.replace): cdp.py's wait_for lets the CDP error "Inspected target
        navigated or closed" of a poll that meets a navigation escape."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                return self.page.wait_for(expr, timeout=max(0.5, deadline - time.monotonic()), message=message)
            except cdp.CDPTimeout:
                raise
            except cdp.CDPError as exc:
                if "navigated or closed" not in str(exc) or time.monotonic() >= deadline:
                    raise
                time.sleep(0.1)

    def visible(self, selector):
        return self.js("(() => { const e = document.querySelector(%s); return !!e && e.getClientRects().length > 0"
                       " && getComputedStyle(e).visibility !== 'hidden'; })()" % json.dumps(selector))

    def login_form(self, user, password):
        """Fill the login form and click its button (the page is on /login)."""
        p = self.page
        self.wait("document.readyState === 'complete' && !!document.getElementById('login-form')")
        for sel, text in (("#user", user), ("#password", password)):
            self.js("document.querySelector(%s).select()" % json.dumps(sel))
            p.type_text(sel, text)
            got = self.js("document.querySelector(%s).value" % json.dumps(sel))
            expect(got == text, f"typing into {sel} left {got!r}")
        p.click("#login-submit")

    def settle_on_login(self, what):
        """Wait for the login page after a Log out click. The live page's status poll may
        meet the ended session and send the tab on to /login?next=/live a moment later:
        wait until the tab stays put."""
        cond = "location.pathname === '/login' && document.readyState === 'complete' && !!document.getElementById('login-form')"
        self.wait(cond, timeout=10, message=what)
        time.sleep(1.2)                   # one poll period of the live page
        self.wait(cond, timeout=10, message=what)

    def on_login_page(self):
        return self.js("location.pathname") == "/login"


def load_js_state(s):
    return s.js("(() => { const v = document.getElementById('live'); return v && {w: v.videoWidth, h: v.videoHeight,"
                " t: v.currentTime, paused: v.paused, state: document.body.dataset.liveState || '',"
                " frames: v.getVideoPlaybackQuality ? v.getVideoPlaybackQuality().totalVideoFrames : null,"
                " msg: (document.getElementById('live-msg') || {}).textContent}; })()")


# ----------------------------------------------------------------------------- the test
def _interrupted(signum, frame):
    raise KeyboardInterrupt("SIGTERM")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("binary", help="the kioskcam binary, e.g. .build/debug/kioskcam")
    ap.add_argument("--screenshots", metavar="DIR", help="save web-<page>.png screenshots here")
    args = ap.parse_args(argv)
    binary = os.path.abspath(args.binary)
    shots = os.path.abspath(args.screenshots) if args.screenshots else None
    checks = Checks()
    started = time.monotonic()
    # SIGTERM (a CI timeout) ends the run like Ctrl-C: the daemon is stopped, the summary printed.
    signal.signal(signal.SIGTERM, _interrupted)
    tmp = tempfile.mkdtemp(prefix="kioskcam-web-browser-")
    daemon = Daemon(binary, tmp)
    try:
        body(checks, daemon, binary, tmp, shots)
    except KeyboardInterrupt as exc:
        checks.record("the run itself", False, f"interrupted ({exc or 'Ctrl-C'})")
    except Exception as exc:                      # noqa: BLE001 - setup or harness failure
        checks.record("the run itself", False, f"{exc.__class__.__name__}: {exc}\n"
                      + "".join(traceback.format_exc(limit=4)))
    finally:
        how = daemon.stop()
        if checks.failed and daemon.proc is not None:
            tail = [ln for ln in daemon.log_text().splitlines() if " error " in ln or "[KioskWeb]" in ln][-12:]
            if tail:
                print("daemon log (errors and web lines, last 12):\n  " + "\n  ".join(tail))
        if daemon.proc is not None:
            checks.record("daemon stops on SIGTERM within 30 s", how.startswith("stopped"), how)
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"(run took {time.monotonic() - started:.1f} s)")
    print(f"{checks.passed} passed, {checks.failed} failed")
    return 1 if checks.failed else 0


def body(checks, daemon, binary, tmp, shots):
    if not os.access(binary, os.X_OK):
        raise RuntimeError(f"{binary} is not an executable")
    if shots:
        os.makedirs(shots, exist_ok=True)
        for name in SHOTS:                        # no stale picture from an earlier run
            path = os.path.join(shots, f"web-{name}.png")
            if os.path.isfile(path):
                os.unlink(path)
    daemon.config = write_config(tmp, 1)          # for the CLI steps; start() writes the real port
    for user, role in (("alice", "admin"), ("bob", "viewer")):
        run_cli(binary, ["web-user", "set", user, "--role", role, "--config", daemon.config], stdin_text=PASSWORD + "\n")
    # One real recording from before the daemon, for the logged-out and viewer checks.
    run_cli(binary, ["record", "--config", daemon.config, "--duration", "1s"])
    video_dir = os.path.join(tmp, "media", "video")
    days = sorted(os.listdir(video_dir)) if os.path.isdir(video_dir) else []
    expect(days, "kioskcam record made no file under media/video")
    today = days[-1]
    first = sorted(n for n in os.listdir(os.path.join(video_dir, today)) if n.endswith(".mp4"))[0]
    old_media = f"/media/video/{today}/{first}"
    old_thumb = f"/thumbs/video/{today}/{first}"
    daemon.start()
    base = f"https://127.0.0.1:{daemon.port}"
    print(f"kioskcam {binary} listening at {base}/ (library day {today}, temp dir {tmp})", flush=True)

    with cdp.Browser(width=WIDTH, height=HEIGHT, kill_after=RUN_DEADLINE) as browser:
        print(f"browser: {browser.version}", flush=True)
        s = Session(checks, browser.new_page(), base, shots)
        logged_out(checks, s, today, old_media, old_thumb)
        ok = login_alice(checks, s)
        alice(checks, s, today, ok)
        ok_bob = viewer(checks, s, old_media, ok)
        wrong_passwords(checks, s, ok_bob)
    if shots:
        missing = [f"web-{n}.png" for n in SHOTS if not os.path.isfile(os.path.join(shots, f"web-{n}.png"))]
        checks.record(f"screenshots saved in {shots}", not missing,
                      f"missing: {', '.join(missing)}" if missing else ", ".join(f"web-{n}.png" for n in SHOTS))


# ----------------------------------------------------------------------------- logged out
def logged_out(checks, s, today, old_media, old_thumb):
    p = s.page
    s.begin()
    p.navigate(s.url("/login"), timeout=20)

    def headers():
        r = p.api("GET", "/live")
        want = {"content-security-policy": "script-src 'self'", "x-frame-options": "DENY",
                "x-content-type-options": "nosniff", "referrer-policy": "same-origin"}
        bad = [f"{k}: {r.headers.get(k)!r}" for k, v in want.items() if v not in (r.headers.get(k) or "")]
        expect(not bad, "missing or wrong security headers: " + ", ".join(bad))
        return "CSP, X-Frame-Options, nosniff, Referrer-Policy present"
    s.expect_failure(401, "/live")
    checks.run("security headers on answers", headers)

    # Pages: 401 with a redirect to /login?next=PAGE, and the browser ends on the login page.
    # /live last so that the tab stays on /login?next=%2Flive for the login below.
    for path in ("/",) + tuple(reversed(PAGES)):
        want_next = "/live" if path == "/" else path

        def page_check(path=path, want_next=want_next):
            r = p.api("GET", path)
            expect(r.status == 401, f"GET {path} answered {r.status}, not 401")
            target = "/login?next=" + want_next.replace("/", "%2F")
            expect(target in r.text, f"the 401 page does not send to {target}: {r.text[:200]!r}")
            p.navigate(s.url(path))
            where = s.wait("location.pathname === '/login' && !!document.getElementById('login-form') && location.search",
                           timeout=10, message=f"{path} to end on the login page")
            nxt = s.js("new URLSearchParams(location.search).get('next')")
            expect(nxt == want_next, f"ended on /login{where} (next={nxt!r}, wanted {want_next!r})")
            return f"401, browser ended on /login{where}"
        s.expect_failure(401, path)
        checks.run(f"logged out: {path} goes to the login page", page_check)

    def icon():
        r = p.api("GET", "/live")
        named = re.search(r"<link[^>]+rel=\"?(shortcut )?icon", r.text or "")
        s.expect_failure(404, "/favicon.ico")
        fav = p.api("GET", "/favicon.ico")
        s.favicon_checked = True
        expect(named or fav.status == 200,
               f"the 401 page names no icon and GET /favicon.ico answers {fav.status}: a browser showing the 401 page "
               "asks for /favicon.ico and logs a 404")
        return "the 401 page names an icon" if named else "/favicon.ico answers 200"
    checks.run("logged out: the 401 page's icon loads (no /favicon.ico 404)", icon)

    s.shot("login", ready="document.readyState === 'complete' && !!document.getElementById('login-form')")

    routes = [("GET", "/api/status"), ("GET", "/api/library"), ("GET", f"/api/library?date={today}"),
              ("GET", "/api/events"), ("GET", f"/api/events?date={today}"), ("GET", "/api/snapshot.jpg"),
              ("GET", "/api/me"), ("GET", "/api/live"), ("GET", old_media), ("GET", old_thumb), ("GET", "/api/settings"),
              ("POST", "/api/recording"), ("POST", "/api/snapshot"), ("DELETE", old_media)]

    def api_refused():
        bad, seen = [], []
        for method, path in routes:
            s.expect_failure(401, path)
            body = {"action": "start", "kind": "video"} if path == "/api/recording" else None
            r = p.api(method, path, body)
            seen.append(f"{method} {path} {r.status}")
            if r.status != 401:
                bad.append(f"{method} {path} answered {r.status}: {r.text[:120]!r}")
            elif not (r.json and r.json.get("error", {}).get("code")):
                bad.append(f"{method} {path}: 401 without an error JSON: {r.text[:120]!r}")
        expect(not bad, "; ".join(bad))
        return f"{len(routes)} routes answered 401"
    checks.run("logged out: every API route, media file and thumbnail answers 401", api_refused)

    def ws_refused():
        s.expected_ws = True
        mark = len(p.errors)
        got = s.js("""new Promise((resolve) => {
            const ws = new WebSocket('wss://' + location.host + '/api/live');
            ws.binaryType = 'arraybuffer';
            let opened = false, messages = 0;
            ws.onopen = () => { opened = true; };
            ws.onmessage = () => { messages++; };
            ws.onclose = (e) => resolve({opened, messages, code: e.code});
            setTimeout(() => { try { ws.close(); } catch (e) {} resolve({opened, messages, timeout: true}); }, 5000);
        })""", timeout=10)
        expect(not got.get("opened") and not got.get("messages"), f"the live WebSocket opened without a session: {got}")
        codes = [c for c in (s.ws_refusal(e) for e in p.errors[mark:]) if c is not None]
        return f"not opened (close code {got.get('code')}; handshake answered HTTP {codes[0] if codes else '?'})"
    checks.run("logged out: the live WebSocket is refused", ws_refused)

    def served_pages():
        stale = []
        names = sorted(n for n in os.listdir(WEB_DIR) if n.rsplit(".", 1)[-1] in ("html", "css", "js", "svg"))
        for name in names:
            with open(os.path.join(WEB_DIR, name), encoding="utf-8") as f:
                text = f.read()
            r = p.api("GET", f"/static/{name}")
            if r.status != 200:
                stale.append(f"{name}: {r.status}")
            elif r.text.rstrip("\n") != text.rstrip("\n"):
                stale.append(name)
        expect(not stale, "the binary serves other pages than web/ has (run scripts/embed-web and rebuild): "
               + ", ".join(stale))
        return f"{len(names)} files identical"
    checks.run("the pages served are web/'s (embedded copy up to date)", served_pages)

    s.check_errors(checks, "logged-out pages (401 redirects, /login)")


# ----------------------------------------------------------------------------- alice
def login_alice(checks, s):
    p = s.page
    s.begin()

    def fn():
        expect(s.on_login_page(), f"not on the login page: {s.js('location.href')}")
        s.login_form("alice", PASSWORD)
        s.wait("location.pathname === '/live'", timeout=15, message="the login to land on /live")
        cookie = [c for c in p.cookies() if c["name"] == "kioskcam_session"]
        expect(cookie, f"no kioskcam_session cookie: {[c['name'] for c in p.cookies()]}")
        c = cookie[0]
        flags = f"httpOnly={c.get('httpOnly')} secure={c.get('secure')} sameSite={c.get('sameSite')}"
        expect(c.get("httpOnly") is True and c.get("secure") is True and c.get("sameSite") == "Strict",
               f"cookie flags wrong: {flags}")
        return f"landed on /live; kioskcam_session {flags}"
    return checks.run("log in as alice through the form", fn)


def alice(checks, s, today, logged_in):
    p = s.page
    need = (logged_in, "alice could not log in")
    state = {}

    # --- live ---
    s.begin()

    def live():
        t0 = time.monotonic()
        p.navigate(s.url("/live"))
        s.wait("document.getElementById('live').videoWidth > 0", timeout=10, message="the first live picture")
        first = time.monotonic() - t0
        state["first_picture"] = first
        st = load_js_state(s)
        expect((st["w"], st["h"]) == CAMERA, f"live video is {st['w']}x{st['h']}, not {CAMERA[0]}x{CAMERA[1]}")
        t1 = time.monotonic()
        start_t = st["t"]
        s.wait(f"document.getElementById('live').currentTime >= {start_t} + 1", timeout=10,
               message="currentTime to advance by 1 s")
        st2 = load_js_state(s)
        expect(st2["state"] == "playing", f"body data-live-state is {st2['state']!r}, not 'playing' ({st2['msg']!r})")
        target = "on target (<= 1.5 s)" if first <= 1.5 else "OVER the 1.5 s target"
        print(f"  first picture {first:.2f} s after navigation ({target})", flush=True)
        expect(first <= 5.0, f"first picture took {first:.2f} s (> 5 s)")
        return (f"{st2['w']}x{st2['h']}, first picture {first:.2f} s, currentTime {start_t:.2f} -> {st2['t']:.2f} "
                f"(+1 s in {time.monotonic() - t1:.1f} s), {st2['frames']} frames decoded")
    live_ok = checks.run("live: #live plays 640x360, advances, first picture fast", live, needs=need)
    if live_ok:
        s.shot("live", ready="document.body.dataset.role === 'admin' && document.body.dataset.liveState === 'playing'")

    # --- record with the page's button ---
    def record():
        s.wait("document.body.dataset.role === 'admin' && !document.getElementById('btn-record').disabled",
               timeout=10, message="the Record button to be ready")
        expect(s.js("document.getElementById('btn-record').dataset.action") == "start", "Record is not in 'start' state")
        p.click("#btn-record")
        s.wait("document.getElementById('btn-record').dataset.action === 'stop'", timeout=10,
               message="the Record button to turn into Stop")
        s.wait("!document.getElementById('rec-badge').hidden", timeout=5, message="the REC badge")
        st = p.api("GET", "/api/status").json or {}
        expect(st.get("state") == "recording" and st.get("kind") == "video", f"status while recording: {st.get('state')}")
        current = st.get("current_file") or ""
        state["recording"] = os.path.basename(current)
        state["day"] = os.path.basename(os.path.dirname(current))
        time.sleep(3)
        label = s.js("document.querySelector('#btn-record .ctl-label').textContent")
        s.wait("!document.getElementById('btn-record').disabled", timeout=5)
        p.click("#btn-record")
        s.wait("document.getElementById('btn-record').dataset.action === 'start' && "
               "!document.getElementById('btn-record').disabled && document.getElementById('rec-badge').hidden",
               timeout=15, message="the recording to stop (button back to Record, no REC badge)")
        st = p.api("GET", "/api/status").json or {}
        expect(st.get("state") == "idle", f"state after Stop is {st.get('state')!r}")
        expect(state["recording"].endswith(".mp4"), f"status named no .mp4 while recording: {current!r}")
        return f"recorded {state['recording']} (stop button read {label!r}), state idle again"
    rec_ok = checks.run("live: Record button starts a recording, Stop ends it", record, needs=(live_ok, "live page failed"))

    # --- still with the page's button ---
    def still():
        before = {r["url"] for r in (p.api("GET", f"/api/library?date={today}").json or {}).get("recordings", [])}
        s.wait("!document.getElementById('btn-still').disabled", timeout=10, message="the Still button to be ready")
        p.click("#btn-still")
        href = s.wait("(() => { const a = document.querySelector('#toast.show a'); return a && a.getAttribute('href'); })()",
                      timeout=10, message="the 'Photo saved' toast with its link")
        expect(re.fullmatch(r"/media/photo/\d{8}/[^/]+\.jpg", href or ""), f"toast link {href!r}")
        expect(href not in before, f"{href} was in the library before the click")
        state["photo"] = href
        return f"toast links {href}"
    still_ok = checks.run("live: Still button takes a photo", still, needs=(live_ok, "live page failed"))
    s.check_errors(checks, "/live (playing, recording, still)")

    # --- library: the day's grid, the new recording and photo, the player ---
    s.begin()

    def library():
        day = state.get("day") or today     # the recording's day (a run may cross midnight)
        listed = (p.api("GET", f"/api/library?date={day}").json or {}).get("recordings", [])
        p.navigate(s.url("/library"))
        s.wait(f"!!document.querySelector('.day[data-date=\"{day}\"]')", timeout=10, message=f"day {day} in the list")
        p.click(f'.day[data-date="{day}"]')
        s.wait("document.querySelectorAll('.item[data-url]').length > 0", timeout=10, message="the day's grid")
        s.wait("location.search === '?date=%s'" % day, timeout=5, message="the day in the address")
        s.wait("document.querySelectorAll('.item[data-url]').length >= %d" % len(listed), timeout=10,
               message=f"the {len(listed)} files /api/library lists in the grid")
        s.wait("[...document.querySelectorAll('.item img')].every((i) => i.complete)", timeout=15,
               message="the thumbnails to load")
        broken = s.js("[...document.querySelectorAll('.item')].filter((i) => { const m = i.querySelector('img');"
                      " return !m || !m.naturalWidth; }).map((i) => i.dataset.url)")
        expect(not broken, f"thumbnails missing: {broken}")
        items = s.js("[...document.querySelectorAll('.item[data-url]')].map((i) => i.dataset.url)")
        state["grid"] = items
        missing = sorted({r["url"] for r in listed} - set(items))
        expect(not missing, f"the grid lacks files /api/library lists: {missing}")
        s.shot("library")
        return f"{len(items)} items on {day}, every thumbnail loaded: {', '.join(os.path.basename(u) for u in items)}"
    lib_ok = checks.run("library: today's grid opens from the day list, with thumbnails", library, needs=need)

    def in_grid(url):
        def fn():
            expect(url in state.get("grid", []), f"{url} is not among {state.get('grid')}")
            label = s.js("document.querySelector('.item[data-url=\"%s\"]').getAttribute('aria-label')" % url)
            return f"{url} ({label!r})"
        return fn
    rec_url = f"/media/video/{state.get('day') or today}/{state.get('recording')}"
    in_ok = checks.run("library: the new recording is in the grid", in_grid(rec_url),
                       needs=(lib_ok and rec_ok, "no grid or no recording"))
    checks.run("library: the new photo is in the grid", in_grid(state.get("photo")),
               needs=(lib_ok and still_ok, "no grid or no photo"))

    def player():
        p.click('.item[data-url="%s"]' % rec_url)
        s.wait("(() => { const v = document.getElementById('player'); return !!v && v.readyState >= 1"
               " && document.getElementById('viewer').open; })()", timeout=10, message="#player in the open viewer")
        s.js("(() => { const v = document.getElementById('player'); window.__ended = false;"
             " v.addEventListener('ended', () => { window.__ended = true; }); })()")
        p.click("#player")                    # the video's own click-to-play
        s.wait("document.getElementById('player').currentTime > 0.3", timeout=10, message="#player to start playing")
        s.shot("player")
        end = s.wait("(() => { const v = document.getElementById('player');"
                     " return (window.__ended || (v.duration && v.currentTime >= v.duration - 0.3))"
                     " && {t: v.currentTime, d: v.duration, ended: window.__ended, w: v.videoWidth, h: v.videoHeight,"
                     " err: v.error && v.error.message}; })()", timeout=20, message="#player to play to its end")
        if not end.get("ended"):
            try:
                end["ended"] = s.wait("window.__ended", timeout=2)
            except cdp.CDPTimeout:
                pass
        expect(not end.get("err"), f"player error {end['err']}")
        expect((end["w"], end["h"]) == CAMERA, f"recording plays at {end['w']}x{end['h']}")
        expect(end["d"] >= 2.0, f"the ~3 s recording lasts {end['d']:.2f} s")
        return f"played to {end['t']:.2f} of {end['d']:.2f} s (ended event: {end['ended']}), {end['w']}x{end['h']}"
    checks.run("library: the new recording plays to its end in #player", player,
               needs=(in_ok, "the recording is not in the grid"))
    s.check_errors(checks, "/library (days, grid, player)")

    # --- events, status, settings ---
    for path, ready, what in (
            ("/events", "document.getElementById('ev-msg').textContent !== 'Loading…' || "
                        "!document.getElementById('events').hidden", "the events list"),
            ("/status", "document.getElementById('status-rows').children.length > 0 && "
                        "document.getElementById('v-state').textContent !== '–'", "the status table"),
            ("/settings", "!document.getElementById('settings-form').hidden || "
                          "document.getElementById('set-msg').textContent !== 'Loading…'", "the settings page")):
        s.begin()

        def visit(path=path, ready=ready, what=what):
            p.navigate(s.url(path))
            s.wait(ready, timeout=10, message=what)
            time.sleep(0.3)
            s.shot(path.strip("/"))
            if path == "/status":
                rows = s.js("document.getElementById('status-rows').children.length")
                st = s.js("document.getElementById('v-state').textContent")
                return f"{rows} rows, state card {st!r}"
            if path == "/events":
                return s.js("document.getElementById('ev-msg').textContent || "
                            "document.getElementById('days').children.length + ' days listed'")
            form = not s.js("document.getElementById('settings-form').hidden")
            msg = s.js("document.getElementById('set-msg').textContent")
            expect(form, f"no settings form; the page says {msg!r}")
            return "a form with %s fields" % s.js("document.querySelectorAll('#fields [data-key]').length")
        checks.run(f"{path} renders for alice", visit, needs=need)
        s.check_errors(checks, path)

    # --- settings: a change saved from the page is in effect ---
    s.begin()

    def save_setting():
        p.navigate(s.url("/settings"))
        s.wait("!document.getElementById('settings-form').hidden", timeout=10, message="the settings form")
        field = "#f-storage-retention-days"
        expect(s.js(f"!!document.querySelector('{field}')"), "no retention days field on the settings page")
        s.js(f"(() => {{ const i = document.querySelector('{field}'); i.value = '21'; "
             "i.dispatchEvent(new Event('input', {bubbles: true})); })()")
        p.click("#save")
        s.wait("document.getElementById('form-status').textContent.startsWith('Saved')", timeout=15,
               message="the page saying Saved")
        said = s.js("document.getElementById('form-status').textContent")
        r = p.api("GET", "/api/settings")
        expect(r.status == 200, f"GET /api/settings answered {r.status}")
        days = (r.json or {}).get("settings", {}).get("storage.retention_days")
        expect(days == 21, f"storage.retention_days is {days} after saving 21")
        return f"the page said {said!r}; GET /api/settings: retention_days {days}"
    checks.run("/settings: alice saves retention days 21 and it is in effect", save_setting, needs=need)

    def save_overlay():
        p.navigate(s.url("/settings"))
        s.wait("!document.getElementById('settings-form').hidden", timeout=10, message="the settings form")
        text, masks = "%Y-%m-%d %H:%M:%S  {device_name}", "[[0.6, 0, 0.4, 0.3]]"
        for field, value in (("#f-overlay-text", text), ("#f-privacy-masks", masks)):
            expect(s.js(f"!!document.querySelector('{field}')"), f"no {field} field on the settings page")
            s.js(f"(() => {{ const i = document.querySelector('{field}'); i.value = {json.dumps(value)}; "
                 "i.dispatchEvent(new Event('input', {bubbles: true})); })()")
        s.js("(() => { const i = document.querySelector('#f-overlay-position'); i.value = 'bottom-right'; "
             "i.dispatchEvent(new Event('change', {bubbles: true})); })()")
        p.click("#save")
        s.wait("document.getElementById('form-status').textContent.startsWith('Saved')", timeout=15,
               message="the page saying Saved")
        said = s.js("document.getElementById('form-status').textContent")
        expect("[overlay]" in said and "[privacy]" in said, f"the page does not say [overlay] and [privacy] need a restart: {said!r}")
        got = (p.api("GET", "/api/settings").json or {}).get("settings", {})
        expect(got.get("overlay.text") == text and got.get("overlay.position") == "bottom-right"
               and got.get("privacy.masks") == [[0.6, 0, 0.4, 0.3]], f"GET /api/settings after saving: {got}")
        return f"the page said {said!r}"
    checks.run("/settings: alice sets the time on the picture and a privacy mask; both saved for the restart", save_overlay, needs=need)
    s.check_errors(checks, "/settings save")

    # --- log out ---
    s.begin()

    def logout():
        p.navigate(s.url("/live"))
        s.wait("document.body.dataset.role === 'admin'", timeout=10)
        # Polls racing the logout may get a 401: the test caused them.
        for path in ("/api/status", "/api/me", "/api/logout"):
            s.expect_failure(401, path)
        s.expected_ws = True          # the live page may reconnect once after the session ended
        p.click("#logout")
        s.settle_on_login("the login page after Log out")
        r = p.api("GET", "/api/status")
        expect(r.status == 401, f"/api/status after logout answered {r.status}")
        left = [c for c in p.cookies() if c["name"] == "kioskcam_session" and c.get("value")]
        expect(not left, "the session cookie is still set after logout")
        return f"on {s.js('location.pathname + location.search')}; /api/status 401; cookie cleared"
    checks.run("log out with the button", logout, needs=need)
    s.check_errors(checks, "logout")


# ----------------------------------------------------------------------------- bob
def viewer(checks, s, old_media, alice_ok):
    p = s.page
    s.begin()

    def login():
        p.navigate(s.url("/login"))
        s.login_form("bob", PASSWORD)
        s.wait("location.pathname === '/live'", timeout=15, message="bob's login to land on /live")
        s.wait("document.body.dataset.role === 'viewer'", timeout=10, message="body[data-role=viewer]")
        return "landed on /live as viewer"
    ok = checks.run("log in as bob (viewer) through the form", login)
    need = (ok, "bob could not log in")

    def no_buttons():
        shown = [sel for sel in ("#btn-record", "#btn-still", "#btn-sound", "#btn-event") if s.visible(sel)]
        expect(not shown, f"a viewer sees {shown}")
        s.wait("document.getElementById('live').videoWidth > 0", timeout=10, message="the live picture for bob")
        return "no Record/Still/Sound/Event buttons; the live picture shows"
    checks.run("viewer: the live page has no record/still buttons", no_buttons, needs=need)

    def forbidden():
        out = []
        s.expect_failure(403, "/api/recording")
        r = p.api("POST", "/api/recording", {"action": "start", "kind": "video"})
        expect(r.status == 403, f"POST /api/recording answered {r.status}: {r.text[:150]!r}")
        out.append("POST /api/recording 403")
        s.expect_failure(403, old_media)
        r = p.api("DELETE", old_media)
        expect(r.status == 403, f"DELETE {old_media} answered {r.status}: {r.text[:150]!r}")
        r2 = p.api("GET", old_media, headers={"Range": "bytes=0-15"})
        expect(r2.status in (200, 206), f"{old_media} is gone after the refused DELETE ({r2.status})")
        out.append(f"DELETE {old_media} 403 (file still there)")
        s.expect_failure(403, "/settings")
        r = p.api("GET", "/settings")
        expect(r.status == 403 or "/login" in r.url, f"GET /settings answered {r.status} at {r.url}")
        out.append(f"/settings {r.status}")
        st = p.api("GET", "/api/status").json or {}
        expect(st.get("state") == "idle", f"the refused start still changed the state: {st.get('state')}")
        return "; ".join(out)
    checks.run("viewer: recording, deleting and /settings are refused (403)", forbidden, needs=need)

    def logout():
        for path in ("/api/status", "/api/me"):
            s.expect_failure(401, path)
        s.expected_ws = True          # the live page may reconnect once after the session ended
        p.click("#logout")
        s.settle_on_login("the login page after bob's Log out")
        return "back on the login page"
    out_ok = checks.run("viewer: log out with the button", logout, needs=need)
    s.check_errors(checks, "bob's pages")
    return out_ok


# ----------------------------------------------------------------------------- wrong passwords
def wrong_passwords(checks, s, ready):
    p = s.page
    s.begin()
    responses = []

    def submit_wrong(i):
        since = p._event_index()
        s.login_form("alice", f"wrong password {i}")
        resp = p.wait_event("Network.responseReceived", since=since, timeout=10,
                            predicate=lambda e: e.get("response", {}).get("url", "").endswith("/api/login")
                            and e.get("type") == "Fetch")
        status = resp["response"]["status"]
        responses.append(status)
        s.expect_failure(status, "/api/login")
        return status

    def one_wrong():
        p.navigate(s.url("/login"))
        p.send("Network.enable")
        status = submit_wrong(1)
        expect(status == 401, f"a wrong password answered {status}")
        text = s.wait("(() => { const e = document.getElementById('login-error'); return !e.hidden && e.textContent; })()",
                      timeout=5, message="an error message on the login page")
        expect(s.js("location.pathname") == "/login", "left the login page")
        return f"401, the page says {text!r}"
    ok = checks.run("login: a wrong password shows an error", one_wrong)

    def throttled():
        i = 1
        while responses[-1] != 429 and i < 6:
            i += 1
            s.wait("!document.getElementById('login-submit').disabled", timeout=5, message="the Log in button")
            submit_wrong(i)
        expect(responses[-1] == 429, f"{i} wrong passwords in a row: answers {responses}, no 429")
        text = s.wait("(() => { const e = document.getElementById('login-error');"
                      " return !e.hidden && /try again in \\d+ s/i.test(e.textContent) && e.textContent; })()",
                      timeout=5, message="a 'try again in N s' message")
        disabled = s.js("document.getElementById('login-submit').disabled")
        s.expect_failure(429, "/api/login")
        r = p.api("POST", "/api/login", {"user": "alice", "password": PASSWORD})
        expect(r.status == 429 and r.headers.get("retry-after"),
               f"the right password during the wait answered {r.status} (Retry-After {r.headers.get('retry-after')})")
        return (f"answers {responses} ({i} wrong in a row); the page says {text!r}, button disabled: {disabled}; "
                f"the right password then gets 429, Retry-After {r.headers.get('retry-after')}")
    checks.run("login: repeated wrong passwords lead to 'try again in N s' (429)", throttled,
               needs=(ok, "the first wrong password failed"))
    try:
        p.send("Network.disable")
    except cdp.CDPError:
        pass
    s.check_errors(checks, "/login with wrong passwords")


if __name__ == "__main__":
    sys.exit(main())
