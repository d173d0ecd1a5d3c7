#!/usr/bin/env python3
"""Drive a real headless Chromium over the Chrome DevTools Protocol (stdlib only).

The browser is Debian's `chromium` package, started with --remote-debugging-pipe:
CDP messages are JSON texts, each ended by a NUL byte, that the browser reads on its
file descriptor 3 and writes on its descriptor 4. No WebSocket client is needed.

    from cdp import Browser
    with Browser() as browser:                      # 390x844, self-signed certs accepted
        page = browser.new_page()
        page.navigate("https://127.0.0.1:8443/")
        page.wait_for("document.querySelector('video')?.currentTime > 1", timeout=10)
        r = page.api("POST", "/api/login", {"pin": "1234"})   # fetch() inside the page
        assert r.status == 200, r
        page.screenshot("/tmp/home.png")
        page.assert_no_errors()                     # console errors, exceptions, CSP

Every wait has a timeout and raises CDPTimeout naming what was waited for and the
last value seen. A missing Chromium raises ChromiumNotFound (install: apt-get install
chromium); it is never a skip.

CLI (for demos):
    python3 Tests/scripts/cdp.py screenshot URL OUT.png [--width 390 --height 844]
        [--wait-js EXPR] [--timeout 20] [--full-page]
    python3 Tests/scripts/cdp.py eval URL EXPR
    python3 Tests/scripts/cdp.py version
"""

import argparse
import atexit
import base64
import fcntl
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import weakref

__all__ = [
    "Browser", "Page", "ApiResponse", "CDPError", "CDPTimeout", "JSError",
    "BrowserCrashed", "ChromiumNotFound", "find_chromium",
]

INSTALL_HINT = "apt-get install chromium"

# Debian's /usr/bin/chromium is a shell wrapper that adds flags of its own
# (--load-extension, --enable-gpu-rasterization, ...) and, on a machine with two
# /dev/shm mounts, prints a shell error. The real binary is started directly.
_CANDIDATES = (
    "/usr/lib/chromium/chromium",
    "chromium",
    "chromium-browser",
    "google-chrome",
    "google-chrome-stable",
)


class CDPError(RuntimeError):
    """A CDP command answered with an error, or the browser could not be driven."""


class CDPTimeout(CDPError, TimeoutError):
    """A wait ran out of time. The message says what was waited for and what was last seen."""


class JSError(CDPError):
    """JavaScript evaluated in the page threw (or its promise rejected)."""

    def __init__(self, message, details=None):
        super().__init__(message)
        self.details = details or {}


class BrowserCrashed(CDPError):
    """The browser process, or a page's renderer, went away."""


class ChromiumNotFound(RuntimeError):
    """No Chromium binary. This is a hard error: install it with `apt-get install chromium`."""


def find_chromium(binary=None):
    """Return the path of the Chromium binary: `binary`, $CHROMIUM, or the usual places."""
    wanted = binary or os.environ.get("CHROMIUM")
    if wanted:
        path = wanted if os.path.sep in wanted else shutil.which(wanted)
        if path and os.access(path, os.X_OK):
            return path
        raise ChromiumNotFound(
            f"Chromium binary {wanted!r} not found or not executable "
            f"(install Debian's browser with: {INSTALL_HINT})")
    for name in _CANDIDATES:
        path = name if os.path.isabs(name) else shutil.which(name)
        if path and os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    raise ChromiumNotFound(
        f"Chromium not found (looked for {', '.join(_CANDIDATES)}); "
        f"install it with: {INSTALL_HINT}")


def _short(value, limit=300):
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + f"... ({len(text)} chars)"


def _remote_object_text(obj):
    """Readable text for a Runtime.RemoteObject (console argument, exception)."""
    if not isinstance(obj, dict):
        return str(obj)
    if "value" in obj:
        value = obj["value"]
        return value if isinstance(value, str) else json.dumps(value)
    if "unserializableValue" in obj:
        return obj["unserializableValue"]
    return obj.get("description") or obj.get("type", "?")


class _Waiter:
    __slots__ = ("event", "message", "session_id", "reason")

    def __init__(self, session_id=None):
        self.event = threading.Event()
        self.message = None
        self.session_id = session_id
        self.reason = None


_live_browsers = weakref.WeakSet()


@atexit.register
def _kill_leftovers():
    for browser in list(_live_browsers):
        try:
            browser.close(timeout=2)
        except Exception:
            pass


class Browser:
    """A headless Chromium driven over --remote-debugging-pipe.

    Use as a context manager (or call start()/close()). Each Browser has its own
    temporary profile directory, removed on close, so cookies never leak between runs.

    width, height: window and viewport size of new pages (CSS px, scale 1).
    ignore_certificate_errors: accept the self-signed certificate of a test server.
    extra_args: more Chromium flags.  binary: the browser (default $CHROMIUM, then
    /usr/lib/chromium/chromium, then `chromium` on PATH).
    command_timeout: default seconds to wait for the answer to one CDP command.
    kill_after: seconds after which a watchdog SIGKILLs the browser whatever happens.
    Chromium's own output goes to stderr_path (kept after close if $CDP_KEEP_LOG is set);
    error messages quote its tail.
    """

    DEFAULT_FLAGS = (
        "--headless=new",
        "--no-sandbox",                      # the machine runs as root
        "--remote-debugging-pipe",
        "--autoplay-policy=no-user-gesture-required",
        "--no-first-run",
        "--no-default-browser-check",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-default-apps",
        "--disable-extensions",
        "--disable-sync",
        "--disable-features=Translate,MediaRouter,OptimizationHints",
        "--password-store=basic",
        "--mute-audio",
        "--hide-scrollbars",
    )

    def __init__(self, width=390, height=844, ignore_certificate_errors=True,
                 extra_args=(), binary=None, start_timeout=20, command_timeout=15,
                 kill_after=None, env=None):
        self.width = int(width)
        self.height = int(height)
        self.ignore_certificate_errors = ignore_certificate_errors
        self.extra_args = list(extra_args)
        self.binary = find_chromium(binary)
        self.start_timeout = start_timeout
        self.command_timeout = command_timeout
        self.kill_after = kill_after
        self.env = env
        self.proc = None
        self.profile_dir = None
        self.stderr_path = None
        self.version = None
        self._write_fd = None
        self._read_fd = None
        self._write_lock = threading.Lock()
        self._lock = threading.Lock()
        self._next_id = 0
        self._pending = {}
        self._sessions = {}
        self._reader = None
        self._closed = False
        self._dead_reason = None
        self._watchdog = None

    # ----------------------------------------------------------------- lifecycle
    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def args(self):
        flags = list(self.DEFAULT_FLAGS)
        if self.ignore_certificate_errors:
            flags.append("--ignore-certificate-errors")
        flags.append(f"--window-size={self.width},{self.height}")
        flags.append(f"--user-data-dir={self.profile_dir}")
        flags.extend(self.extra_args)
        return [self.binary] + flags + ["about:blank"]

    def start(self):
        if self.proc is not None:
            raise CDPError("Browser already started")
        self.profile_dir = tempfile.mkdtemp(prefix="kioskcam-chromium-")
        stderr_fd, self.stderr_path = tempfile.mkstemp(prefix="kioskcam-chromium-", suffix=".log")
        to_browser_r, to_browser_w = os.pipe()
        from_browser_r, from_browser_w = os.pipe()
        # The child's ends go to fds >= 10 so that neither the dup2 onto 3 and 4 in the
        # child nor subprocess's own dup2 onto 0-2 can clobber them. All seven fds stay
        # open until Popen returns, so 3 and 4 are surely open here (pass_fds needs that)
        # and subprocess's error pipe lands above them.
        child_r = fcntl.fcntl(to_browser_r, fcntl.F_DUPFD_CLOEXEC, 10)
        child_w = fcntl.fcntl(from_browser_w, fcntl.F_DUPFD_CLOEXEC, 10)

        def _child_fds():                 # runs in the child between fork and exec
            os.dup2(child_r, 3)           # dup2 clears close-on-exec on 3 and 4
            os.dup2(child_w, 4)

        env = dict(os.environ if self.env is None else self.env)
        env.setdefault("HOME", self.profile_dir)
        try:
            # close_fds runs after preexec_fn and keeps pass_fds: the browser gets 0-4 only.
            self.proc = subprocess.Popen(
                self.args(), stdin=subprocess.DEVNULL, stdout=stderr_fd, stderr=stderr_fd,
                preexec_fn=_child_fds, close_fds=True, pass_fds=(3, 4),
                start_new_session=True, env=env)
        except Exception:
            for fd in (to_browser_r, to_browser_w, from_browser_r, from_browser_w,
                       child_r, child_w, stderr_fd):
                os.close(fd)
            shutil.rmtree(self.profile_dir, ignore_errors=True)
            raise
        for fd in (to_browser_r, from_browser_w, child_r, child_w, stderr_fd):
            os.close(fd)
        self._write_fd = to_browser_w
        self._read_fd = from_browser_r
        _live_browsers.add(self)
        self._reader = threading.Thread(target=self._read_loop, name="cdp-reader", daemon=True)
        self._reader.start()
        if self.kill_after:
            self._watchdog = threading.Timer(self.kill_after, self._watchdog_fire)
            self._watchdog.daemon = True
            self._watchdog.start()
        try:
            info = self.send("Browser.getVersion", timeout=self.start_timeout)
        except CDPError as exc:
            tail = self.stderr_tail()
            self.close()
            first = str(exc).split("\nchromium output:")[0]
            raise BrowserCrashed(f"Chromium did not start (no answer on the DevTools pipe): "
                                 f"{first}{self._tail_note(tail)}") from None
        self.version = info.get("product")
        return self

    def _watchdog_fire(self):
        self._dead_reason = f"killed by the watchdog after {self.kill_after}s (kill_after)"
        self._kill()

    def close(self, timeout=5):
        """Close the browser: Browser.close, then SIGTERM, then SIGKILL. Removes the profile."""
        if self._closed:
            return
        self._closed = True
        if self._watchdog:
            self._watchdog.cancel()
        if self.proc is not None:
            polite = False
            if self.proc.poll() is None and self._dead_reason is None:
                try:
                    self.send("Browser.close", timeout=min(timeout, 3))
                    polite = True
                except BrowserCrashed:
                    polite = True             # it closed the pipe while quitting
                except CDPError:
                    pass                      # no answer: it hangs, go on to signals
            try:
                self.proc.wait(timeout=timeout if polite else 0.1)
            except subprocess.TimeoutExpired:
                self._signal(signal.SIGTERM)
                try:
                    self.proc.wait(timeout=1)
                except subprocess.TimeoutExpired:
                    self._kill()
            # The browser's helpers (zygote, GPU, renderers) are in its own session and
            # process group; end any that outlived it, and wait until they are gone.
            deadline = time.monotonic() + 3
            while self.group_members() and time.monotonic() < deadline:
                self._signal(signal.SIGKILL)
                time.sleep(0.05)
        # The browser is gone, so the reader has seen EOF: join it before closing its fd.
        if self._reader is not None:
            self._reader.join(timeout=2)
        write_fd, read_fd = self._write_fd, self._read_fd
        self._write_fd = None
        with self._write_lock:
            if write_fd is not None:
                os.close(write_fd)
        if read_fd is not None and not (self._reader and self._reader.is_alive()):
            os.close(read_fd)
        self._read_fd = None
        _live_browsers.discard(self)
        if self.profile_dir:
            for _ in range(5):
                shutil.rmtree(self.profile_dir, ignore_errors=True)
                if not os.path.exists(self.profile_dir):
                    break
                time.sleep(0.2)
        if self.stderr_path and os.environ.get("CDP_KEEP_LOG") is None:
            try:
                os.unlink(self.stderr_path)
            except OSError:
                pass

    def group_members(self):
        """Pids of live (non-zombie) processes in the browser's process group."""
        if self.proc is None:
            return []
        pids = []
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                with open(f"/proc/{entry}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[2]) == self.proc.pid and fields[0] != "Z":
                pids.append(int(entry))
        return pids

    def _signal(self, sig):
        if self.proc is None:
            return
        try:
            os.killpg(self.proc.pid, sig)   # the group start_new_session made for it
        except (ProcessLookupError, PermissionError):
            pass

    def _kill(self):
        self._signal(signal.SIGKILL)
        if self.proc is not None:
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass

    @staticmethod
    def _tail_note(tail):
        return f"\nchromium output:\n{tail}" if tail.strip() else ""

    def stderr_tail(self, lines=30):
        """The last lines Chromium wrote to stdout/stderr (for error messages)."""
        try:
            with open(self.stderr_path, "rb") as f:
                data = f.read()[-20000:]
        except (OSError, TypeError):
            return ""
        text = data.decode("utf-8", "replace").splitlines()
        # Without a D-Bus daemon (containers, CI) Chromium logs dozens of harmless lines.
        text = [t for t in text if "dbus/" not in t and "Failed to connect to the bus" not in t]
        return "\n".join(text[-lines:])

    # ------------------------------------------------------------------ protocol
    def _read_loop(self):
        buf = bytearray()
        fd = self._read_fd
        while True:
            try:
                chunk = os.read(fd, 1 << 20)
            except OSError:
                chunk = b""
            if not chunk:
                break
            buf += chunk
            while True:
                end = buf.find(b"\0")
                if end < 0:
                    break
                raw = bytes(buf[:end])
                del buf[:end + 1]
                try:
                    msg = json.loads(raw)
                except ValueError:
                    continue
                self._dispatch(msg)
        # EOF: the browser is gone. Fail everyone waiting.
        if self._dead_reason is None:
            try:
                rc = self.proc.wait(timeout=1) if self.proc else None
            except subprocess.TimeoutExpired:
                rc = None
            self._dead_reason = f"Chromium closed the DevTools pipe (exit code {rc})"
        with self._lock:
            pending = list(self._pending.values())
            self._pending.clear()
            sessions = list(self._sessions.values())
        for waiter in pending:
            waiter.event.set()
        for page in sessions:
            page._on_dead(self._dead_reason)

    def _dispatch(self, msg):
        if "id" in msg:
            with self._lock:
                waiter = self._pending.pop(msg["id"], None)
            if waiter:
                waiter.message = msg
                waiter.event.set()
            return
        method = msg.get("method", "")
        session_id = msg.get("sessionId")
        params = msg.get("params", {})
        if method == "Target.detachedFromTarget":
            with self._lock:
                page = self._sessions.get(params.get("sessionId"))
            if page:
                page._on_dead("the page's target was detached (closed or crashed)")
            return
        if session_id:
            with self._lock:
                page = self._sessions.get(session_id)
            if page:
                page._on_event(method, params)

    def _fail_session(self, session_id, reason):
        """Fail at once the commands still waiting for an answer from a dead page."""
        with self._lock:
            ids = [i for i, w in self._pending.items() if w.session_id == session_id]
            waiters = [self._pending.pop(i) for i in ids]
        for waiter in waiters:
            waiter.reason = reason
            waiter.event.set()

    def send(self, method, params=None, session_id=None, timeout=None):
        """Send one CDP command and return its result; raise CDPError on an error answer."""
        timeout = self.command_timeout if timeout is None else timeout
        if self._dead_reason:
            raise BrowserCrashed(f"{method}: {self._dead_reason}")
        if self._write_fd is None:
            raise CDPError(f"{method}: the browser is not running")
        with self._lock:
            self._next_id += 1
            msg_id = self._next_id
            waiter = _Waiter(session_id)
            self._pending[msg_id] = waiter
        msg = {"id": msg_id, "method": method, "params": params or {}}
        if session_id:
            msg["sessionId"] = session_id
        data = json.dumps(msg).encode() + b"\0"
        try:
            with self._write_lock:
                view = memoryview(data)
                while view:
                    n = os.write(self._write_fd, view)
                    view = view[n:]
        except OSError as exc:
            with self._lock:
                self._pending.pop(msg_id, None)
            raise BrowserCrashed(f"{method}: cannot write to the DevTools pipe: {exc}") from None
        if not waiter.event.wait(timeout):
            with self._lock:
                self._pending.pop(msg_id, None)
            raise CDPTimeout(f"CDP command {method} got no answer within {timeout}s "
                             f"(params {_short(params)})")
        if waiter.message is None:
            if waiter.reason:             # its page died
                raise BrowserCrashed(f"{method}: {waiter.reason}")
            raise BrowserCrashed(f"{method}: {self._dead_reason}"
                                 f"{self._tail_note(self.stderr_tail(10))}")
        if "error" in waiter.message:
            err = waiter.message["error"]
            raise CDPError(f"CDP {method} failed: {err.get('message')} "
                           f"{err.get('data', '')} (params {_short(params)})".rstrip())
        return waiter.message.get("result", {})

    # --------------------------------------------------------------------- pages
    def new_page(self, url="about:blank", width=None, height=None, timeout=None):
        """Open a new tab, attach to it (flattened session) and return a Page."""
        params = {"url": "about:blank", "newWindow": True,
                  "width": int(width or self.width), "height": int(height or self.height)}
        target_id = self.send("Target.createTarget", params, timeout=timeout)["targetId"]
        session_id = self.send("Target.attachToTarget",
                               {"targetId": target_id, "flatten": True},
                               timeout=timeout)["sessionId"]
        page = Page(self, target_id, session_id)
        with self._lock:
            self._sessions[session_id] = page
        page._enable(width or self.width, height or self.height)
        if url and url != "about:blank":
            page.navigate(url, timeout=timeout or 20)
        return page

    def cookies(self):
        """Every cookie of the profile (Storage.getCookies): CDP Network.Cookie dicts."""
        return self.send("Storage.getCookies")["cookies"]


class ApiResponse:
    """What Page.api() returns: status, ok, headers (lower-case names), text, json."""

    def __init__(self, data):
        self.status = data["status"]
        self.ok = data["ok"]
        self.headers = data["headers"]
        self.text = data["text"]
        self.url = data["url"]
        self.redirected = data["redirected"]
        try:
            self.json = json.loads(self.text) if self.text else None
        except ValueError:
            self.json = None

    def __repr__(self):
        return f"<ApiResponse {self.status} {self.url} {_short(self.text, 200)}>"


class Page:
    """One tab, attached over a flattened CDP session."""

    def __init__(self, browser, target_id, session_id):
        self.browser = browser
        self.target_id = target_id
        self.session_id = session_id
        self._cond = threading.Condition()
        self._events = []                 # (method, params), the events received
        self._base = 0                    # index of _events[0] among all events ever
        self._dead = None
        self.console = []                 # every console message: dicts type/text/url
        self.errors = []                  # console errors, exceptions, CSP, failed loads

    # ------------------------------------------------------------------ plumbing
    def send(self, method, params=None, timeout=None):
        if self._dead:
            raise BrowserCrashed(f"{method}: {self._dead}")
        return self.browser.send(method, params, session_id=self.session_id, timeout=timeout)

    def _enable(self, width, height):
        for method in ("Inspector.enable", "Page.enable", "Runtime.enable", "Log.enable"):
            self.send(method)
        self.send("Page.setLifecycleEventsEnabled", {"enabled": True})
        self.send("Emulation.setDeviceMetricsOverride",
                  {"width": int(width), "height": int(height), "deviceScaleFactor": 1,
                   "mobile": False})

    def _on_dead(self, reason):
        with self._cond:
            if not self._dead:
                self._dead = reason
            self._cond.notify_all()
        self.browser._fail_session(self.session_id, self._dead)

    def _on_event(self, method, params):
        if method == "Runtime.consoleAPICalled":
            text = " ".join(_remote_object_text(a) for a in params.get("args", []))
            frame = (params.get("stackTrace") or {}).get("callFrames") or [{}]
            entry = {"type": params.get("type"), "text": text, "url": frame[0].get("url", "")}
            self.console.append(entry)
            if params.get("type") in ("error", "assert"):
                self.errors.append(f"console.{params.get('type')}: {text}")
        elif method == "Runtime.exceptionThrown":
            d = params.get("exceptionDetails", {})
            exc = d.get("exception") or {}
            desc = exc.get("description") or d.get("text", "exception")
            self.errors.append(f"uncaught exception: {desc} "
                               f"({d.get('url', '')}:{d.get('lineNumber', 0) + 1})")
        elif method == "Log.entryAdded":
            e = params.get("entry", {})
            self.console.append({"type": f"log.{e.get('level')}", "text": e.get("text", ""),
                                 "url": e.get("url", ""), "source": e.get("source")})
            if e.get("level") == "error":
                where = f" ({e['url']})" if e.get("url") else ""
                self.errors.append(f"{e.get('source', 'log')}: {e.get('text', '')}{where}")
        elif method == "Inspector.targetCrashed":
            self.errors.append("the page's renderer crashed")
            self._on_dead("the page's renderer crashed")
        with self._cond:
            self._events.append((method, params))
            if len(self._events) > 5000:
                del self._events[:1000]
                self._base += 1000
            self._cond.notify_all()

    def _event_index(self):
        with self._cond:
            return self._base + len(self._events)

    def wait_event(self, method, since=0, predicate=None, timeout=10):
        """Wait for a CDP event `method` (received at or after index `since`); return its params."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                base = self._base
                for i in range(max(since - base, 0), len(self._events)):
                    m, p = self._events[i]
                    if m == method and (predicate is None or predicate(p)):
                        return p
                since = base + len(self._events)
                if self._dead:
                    raise BrowserCrashed(f"while waiting for {method}: {self._dead}")
                left = deadline - time.monotonic()
                if left <= 0:
                    raise CDPTimeout(f"timed out after {timeout}s waiting for event {method}")
                self._cond.wait(left)

    # --------------------------------------------------------------------- API
    def navigate(self, url, timeout=20):
        """Load `url` and wait for its load event; raise CDPError if the load failed."""
        since = self._event_index()
        res = self.send("Page.navigate", {"url": url}, timeout=timeout)
        if res.get("errorText"):
            raise CDPError(f"navigate to {url} failed: {res['errorText']}")
        loader = res.get("loaderId")
        if not loader:
            return res                    # same-document (fragment) navigation: no load event
        try:
            self.wait_event("Page.lifecycleEvent", since=since, timeout=timeout,
                            predicate=lambda p: p.get("name") == "load"
                            and p.get("frameId") == res.get("frameId")
                            and p.get("loaderId") == loader)
        except CDPTimeout:
            state = self._safe_eval("document.readyState + ' ' + location.href")
            raise CDPTimeout(f"timed out after {timeout}s waiting for the load event of "
                             f"{url} (last seen: {state})") from None
        return res

    def reload(self, timeout=20):
        return self.navigate(self.evaluate("location.href"), timeout=timeout)

    def _safe_eval(self, expr):
        try:
            return self.evaluate(expr, timeout=2)
        except Exception as exc:
            return f"<{exc.__class__.__name__}: {exc}>"

    def evaluate(self, expr, await_promise=True, timeout=10, user_gesture=True):
        """Evaluate a JS expression in the page and return its value (JSON-able)."""
        params = {"expression": expr, "returnByValue": True, "awaitPromise": await_promise,
                  "userGesture": user_gesture}
        try:
            res = self.send("Runtime.evaluate", params, timeout=timeout)
        except CDPTimeout:
            raise CDPTimeout(f"timed out after {timeout}s evaluating JS {_short(expr)} "
                             f"(a promise that never settles?)") from None
        if "exceptionDetails" in res:
            d = res["exceptionDetails"]
            exc = d.get("exception") or {}
            desc = exc.get("description") or _remote_object_text(exc) or d.get("text")
            raise JSError(f"JS {_short(expr)} threw: {desc}", d)
        obj = res.get("result", {})
        if "value" in obj:
            return obj["value"]
        if "unserializableValue" in obj:
            v = obj["unserializableValue"]
            return {"NaN": float("nan"), "Infinity": float("inf"),
                    "-Infinity": float("-inf"), "-0": -0.0}.get(v, v)
        return None                       # undefined, or a non-serialisable object

    def wait_for(self, expr, timeout=10, interval=0.1, message=None):
        """Poll `expr` until it is truthy; return its value. Raise CDPTimeout with the last value."""
        deadline = time.monotonic() + timeout
        last, last_error = None, None
        while True:
            try:
                left = deadline - time.monotonic()
                last = self.evaluate(expr, timeout=max(0.5, min(5, left)))
                last_error = None
                if last:
                    return last
            except (JSError, CDPTimeout) as exc:   # not BrowserCrashed: that ends the wait
                last_error = str(exc)
            if time.monotonic() >= deadline:
                what = message or f"JS {expr!r} to be truthy"
                seen = f"last error: {last_error}" if last_error else f"last value: {_short(last)}"
                raise CDPTimeout(f"timed out after {timeout}s waiting for {what}; {seen}")
            time.sleep(interval)

    def screenshot(self, path, full_page=False, timeout=20):
        """Save a PNG of the viewport (or the whole page) to `path`; return the path."""
        params = {"format": "png"}
        if full_page:
            m = self.send("Page.getLayoutMetrics")
            size = m.get("cssContentSize") or m["contentSize"]
            params["clip"] = {"x": 0, "y": 0, "width": size["width"],
                              "height": size["height"], "scale": 1}
            params["captureBeyondViewport"] = True
        data = self.send("Page.captureScreenshot", params, timeout=timeout)["data"]
        with open(path, "wb") as f:
            f.write(base64.b64decode(data))
        return path

    def api(self, method, path, body=None, headers=None, timeout=15):
        """fetch() `path` from inside the page (same origin: real cookies and Origin).

        A dict/list body is sent as JSON; a str as is. Returns an ApiResponse.
        """
        opts = {"method": method.upper(), "headers": dict(headers or {}),
                "credentials": "same-origin", "redirect": "follow"}
        if body is not None:
            if isinstance(body, (dict, list)):
                opts["body"] = json.dumps(body)
                opts["headers"].setdefault("Content-Type", "application/json")
            else:
                opts["body"] = body
        js = ("(async () => { const r = await fetch(%s, %s); const h = {};"
              " r.headers.forEach((v, k) => { h[k] = v; });"
              " return {status: r.status, ok: r.ok, url: r.url, redirected: r.redirected,"
              " headers: h, text: await r.text()}; })()") % (json.dumps(path), json.dumps(opts))
        try:
            return ApiResponse(self.evaluate(js, timeout=timeout))
        except JSError as exc:
            raise CDPError(f"fetch {method.upper()} {path} failed in the page: {exc}") from None
        except CDPTimeout:
            raise CDPTimeout(f"timed out after {timeout}s on fetch {method.upper()} {path}") from None

    def click(self, selector, timeout=10):
        """A real mouse click (Input.dispatchMouseEvent) at the centre of `selector`."""
        box = self.wait_for(
            "(() => { const e = document.querySelector(%s); if (!e) return null;"
            " e.scrollIntoView({block: 'center'}); const r = e.getBoundingClientRect();"
            " return r.width && r.height ? {x: r.x + r.width / 2, y: r.y + r.height / 2} : null; })()"
            % json.dumps(selector), timeout=timeout, message=f"a visible element {selector!r}")
        for kind in ("mouseMoved", "mousePressed", "mouseReleased"):
            self.send("Input.dispatchMouseEvent",
                      {"type": kind, "x": box["x"], "y": box["y"], "button": "left",
                       "clickCount": 1})

    def type_text(self, selector, text, timeout=10):
        """Focus `selector` and type `text` into it (Input.insertText)."""
        self.wait_for("(() => { const e = document.querySelector(%s); if (e) e.focus();"
                      " return !!e && document.activeElement === e; })()" % json.dumps(selector),
                      timeout=timeout, message=f"focusable element {selector!r}")
        self.send("Input.insertText", {"text": text})

    def cookies(self):
        """The cookies this page's URL would send (Network.getCookies), incl. HttpOnly ones."""
        return self.send("Network.getCookies")["cookies"]

    def clear_errors(self):
        self.errors.clear()
        self.console.clear()

    def assert_no_errors(self, ignore=()):
        """Raise AssertionError listing console errors, exceptions and CSP violations seen.

        `ignore`: substrings; an error containing one of them is not counted.
        """
        errs = [e for e in self.errors if not any(s in e for s in ignore)]
        if errs:
            raise AssertionError("the page reported %d error(s):\n  %s"
                                 % (len(errs), "\n  ".join(errs)))

    def close(self):
        try:
            self.browser.send("Target.closeTarget", {"targetId": self.target_id}, timeout=5)
        except CDPError:
            pass


# ----------------------------------------------------------------------- CLI
def _main(argv=None):
    ap = argparse.ArgumentParser(prog="cdp.py", description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    sp = sub.add_parser("screenshot", help="load URL and save a PNG")
    sp.add_argument("url")
    sp.add_argument("out")
    sp.add_argument("--width", type=int, default=390)
    sp.add_argument("--height", type=int, default=844)
    sp.add_argument("--wait-js", help="JS expression to wait for (truthy) before the shot")
    sp.add_argument("--timeout", type=float, default=20)
    sp.add_argument("--full-page", action="store_true")
    ep = sub.add_parser("eval", help="load URL, print the JSON value of a JS expression")
    ep.add_argument("url")
    ep.add_argument("expr")
    ep.add_argument("--timeout", type=float, default=20)
    sub.add_parser("version", help="print the browser's version")
    a = ap.parse_args(argv)
    try:
        if a.cmd == "version":
            with Browser() as b:
                print(b.version, "(%s)" % b.binary)
            return 0
        width, height = (a.width, a.height) if a.cmd == "screenshot" else (390, 844)
        with Browser(width=width, height=height, kill_after=a.timeout + 30) as b:
            page = b.new_page()
            page.navigate(a.url, timeout=a.timeout)
            if a.cmd == "eval":
                print(json.dumps(page.evaluate(a.expr, timeout=a.timeout), indent=2))
                return 0
            if a.wait_js:
                page.wait_for(a.wait_js, timeout=a.timeout)
            page.screenshot(a.out, full_page=a.full_page)
            for e in page.errors:
                print("page error:", e, file=sys.stderr)
            print(a.out)
        return 0
    except (CDPError, ChromiumNotFound) as exc:
        print(f"cdp.py: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(_main())
