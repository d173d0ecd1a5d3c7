#!/usr/bin/env python3
"""scripts/bench-rtsp's measurements (see that script)."""
import hashlib, json, os, re, shutil, signal, socket, statistics, struct, subprocess, sys, tempfile, threading, time

from benchcommon import cpu_seconds, free_port, vmhwm_mib

binary, runs, seconds, clients, stall = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5])
pull_seconds = float(sys.argv[6]) if len(sys.argv) > 6 else 60
USER, PASSWORD = "bench", "measure the clients"


def control(config, *args):
    return subprocess.run([binary, *args, "--config", config], capture_output=True, text=True, timeout=60)


class Client:
    """A minimal RTSP client: Digest (MD5), both tracks interleaved over TCP, reads every packet."""

    def __init__(self, port):
        self.port, self.cseq, self.session, self.auth = port, 0, None, None
        self.sock = socket.create_connection(("127.0.0.1", port))
        self.buffer = b""
        self.url = f"rtsp://127.0.0.1:{port}/live"
        self.bytes = 0
        self.first_keyframe = None   # seconds from PLAY to the end of the first IDR
        self.arrivals = []           # arrival time of each complete picture
        self.play_sent = None

    def read_exact(self, n):
        while len(self.buffer) < n:
            chunk = self.sock.recv(262144)
            if not chunk:
                raise EOFError("the server closed")
            self.buffer += chunk
        data, self.buffer = self.buffer[:n], self.buffer[n:]
        return data

    def response(self):
        while True:
            while b"\r\n\r\n" not in self.buffer and not self.buffer.startswith(b"$"):
                chunk = self.sock.recv(65536)
                if not chunk:
                    raise EOFError("the server closed")
                self.buffer += chunk
            if self.buffer.startswith(b"$"):
                self.frame()
                continue
            head, self.buffer = self.buffer.split(b"\r\n\r\n", 1)
            lines = head.decode().split("\r\n")
            headers = {}
            for line in lines[1:]:
                k, v = line.split(":", 1)
                headers.setdefault(k.strip().lower(), []).append(v.strip())
            body = self.read_exact(int(headers.get("content-length", ["0"])[0]))
            return int(lines[0].split()[1]), headers, body

    def request(self, method, url, extra=""):
        self.cseq += 1
        auth = ""
        if self.auth:
            realm, nonce = self.auth
            ha1 = hashlib.md5(f"{USER}:{realm}:{PASSWORD}".encode()).hexdigest()
            ha2 = hashlib.md5(f"{method}:{url}".encode()).hexdigest()
            response = hashlib.md5(f"{ha1}:{nonce}:{ha2}".encode()).hexdigest()
            auth = (f'Authorization: Digest username="{USER}", realm="{realm}", nonce="{nonce}", uri="{url}", '
                    f'response="{response}"\r\n')
        session = f"Session: {self.session}\r\n" if self.session else ""
        if method == "PLAY":
            self.play_sent = time.monotonic()
        self.sock.sendall(f"{method} {url} RTSP/1.0\r\nCSeq: {self.cseq}\r\n{auth}{session}{extra}\r\n".encode())
        status, headers, body = self.response()
        if status == 401 and not self.auth:
            challenge = next(h for h in headers["www-authenticate"] if "MD5" in h)
            self.auth = (re.search(r'realm="([^"]*)"', challenge).group(1), re.search(r'nonce="([^"]*)"', challenge).group(1))
            return self.request(method, url, extra)
        assert status == 200, f"{method}: {status}"
        if "session" in headers:
            self.session = headers["session"][0].split(";")[0]
        return body

    def start(self):
        self.request("OPTIONS", self.url)
        sdp = self.request("DESCRIBE", self.url, "Accept: application/sdp\r\n").decode()
        self.request("SETUP", self.url + "/trackID=0", "Transport: RTP/AVP/TCP;unicast;interleaved=0-1\r\n")
        if "trackID=1" in sdp:
            self.request("SETUP", self.url + "/trackID=1", "Transport: RTP/AVP/TCP;unicast;interleaved=2-3\r\n")
        self.request("PLAY", self.url, "Range: npt=0.000-\r\n")

    def frame(self):
        header = self.read_exact(4)
        channel, length = header[1], struct.unpack(">H", header[2:])[0]
        packet = self.read_exact(length)
        self.bytes += 4 + length
        if channel != 0 or len(packet) < 13:
            return
        marker = packet[1] & 0x80
        nal = packet[12] & 0x1F
        if nal == 28:
            nal = packet[13] & 0x1F
        if nal in (5, 24):
            self.keyframe_pending = True
        if marker:
            now = time.monotonic()
            self.arrivals.append(now)
            if self.first_keyframe is None and getattr(self, "keyframe_pending", False):
                self.first_keyframe = now - self.play_sent
            self.keyframe_pending = False

    def run(self, stop):
        self.sock.settimeout(1)
        while not stop.is_set():
            try:
                if not self.buffer.startswith(b"$"):
                    while len(self.buffer) < 1:
                        chunk = self.sock.recv(262144)
                        if not chunk:
                            raise EOFError("the server closed")
                        self.buffer += chunk
                    if not self.buffer.startswith(b"$"):
                        self.response()   # a keep-alive's answer
                        continue
                self.frame()
            except socket.timeout:
                continue
            except (EOFError, OSError):
                break
        self.sock.close()

    def largest_gap(self, since=0):
        times = [t for t in self.arrivals if t >= since]
        return max((b - a for a, b in zip(times, times[1:])), default=float("nan"))


def daemon_up(folder, substream=""):
    port, udp = free_port(), free_port(socket.SOCK_DGRAM) // 2 * 2
    config = os.path.join(folder, "kioskcam.toml")
    open(config, "w").write(f"""[storage]
media_root = "{folder}/media"
[camera]
source = "test"
size = "1280x720"
fps = 30
[microphone]
source = "tone"
[screen]
framebuffer = "memory"
[control]
state_directory = "{folder}/state"
socket = "{folder}/control.sock"
socket_group = ""
[web]
enabled = false
[rtsp]
enabled = true
listen = "127.0.0.1:{port}"
udp_port = {udp}
max_clients = {clients + 10}
substream = "{substream}"
""")
    subprocess.run([binary, "web-user", "set", USER, "--role", "viewer", "--config", config],
                   input=(PASSWORD + "\n").encode(), check=True, capture_output=True)
    log = open(os.path.join(folder, "daemon.log"), "wb")
    daemon = subprocess.Popen([binary, "run", "--config", config], stdout=log, stderr=subprocess.STDOUT)
    deadline = time.time() + 30
    while b"rtsp: listening" not in open(log.name, "rb").read() and time.time() < deadline:
        time.sleep(0.1)
    assert control(config, "start").returncode == 0, "kioskcam start"
    time.sleep(3)
    return daemon, config, port


def stop_daemon(daemon, folder):
    daemon.send_signal(signal.SIGTERM)
    try:
        daemon.wait(30)
    except subprocess.TimeoutExpired:
        daemon.kill()
    shutil.rmtree(folder, ignore_errors=True)


def one_run(count):
    folder = tempfile.mkdtemp(prefix="kioskcam-bench-rtsp-")
    daemon, config, port = daemon_up(folder)
    try:
        stop, threads, started = threading.Event(), [], []
        for _ in range(count):
            client = Client(port)
            client.start()
            thread = threading.Thread(target=client.run, args=(stop,))
            thread.start()
            threads.append(thread)
            started.append(client)
        time.sleep(2 if count else 0)
        before = json.loads(control(config, "status", "--json").stdout or "{}")
        start_cpu, start = cpu_seconds(daemon.pid), time.time()
        time.sleep(seconds)
        cpu = (cpu_seconds(daemon.pid) - start_cpu) / (time.time() - start)
        status = json.loads(control(config, "status", "--json").stdout or "{}")
        stop.set()
        for thread in threads:
            thread.join()
        return {"cpu": cpu, "hwm": vmhwm_mib(daemon.pid),
                "dropped": status.get("dropped_frames", -1) - before.get("dropped_frames", 0),
                "first": [c.first_keyframe for c in started if c.first_keyframe is not None],
                "gops": sum(c.get("dropped_gops", 0) for c in status.get("rtsp_clients", [])),
                "bytes": [c.bytes for c in started]}
    finally:
        stop_daemon(daemon, folder)


def substream_run(with_client):
    """The sub-stream's cost: 640x360 configured, one client on /sub or none."""
    folder = tempfile.mkdtemp(prefix="kioskcam-bench-rtsp-sub-")
    daemon, config, port = daemon_up(folder, substream="640x360")
    try:
        stop = threading.Event()
        if with_client:
            client = Client(port)
            client.url = f"rtsp://127.0.0.1:{port}/sub"
            client.start()
            threading.Thread(target=client.run, args=(stop,)).start()
            time.sleep(2)
        start_cpu, start = cpu_seconds(daemon.pid), time.time()
        time.sleep(seconds)
        cpu = (cpu_seconds(daemon.pid) - start_cpu) / (time.time() - start)
        stop.set()
        return cpu
    finally:
        stop_daemon(daemon, folder)


def gaps(path):
    """Pictures and the largest gap between them in a recorded file (ffprobe)."""
    out = subprocess.run(["ffprobe", "-v", "error", "-select_streams", "v", "-show_entries", "packet=pts_time", "-of", "csv=p=0", path],
                         capture_output=True, text=True).stdout
    times = sorted(float(t.strip(",")) for t in out.split() if t.strip(",") not in ("", "N/A"))
    return len(times), max((b - a for a, b in zip(times, times[1:])), default=float("nan"))


def pull_run(pull_seconds):
    """ffmpeg and GStreamer, over TCP and UDP, on /live and /sub, all at once for pull_seconds."""
    folder = tempfile.mkdtemp(prefix="kioskcam-bench-rtsp-pull-")
    daemon, config, port = daemon_up(folder, substream="640x360")
    try:
        quoted = PASSWORD.replace(" ", "%20")
        jobs = []
        for path in ("live", "sub"):
            for transport in ("tcp", "udp"):
                out = os.path.join(folder, f"ffmpeg-{path}-{transport}.mp4")
                jobs.append((f"ffmpeg {transport} /{path}", out, subprocess.Popen(
                    ["ffmpeg", "-nostdin", "-loglevel", "error", "-rtsp_transport", transport, "-i",
                     f"rtsp://{USER}:{quoted}@127.0.0.1:{port}/{path}", "-t", str(pull_seconds), "-c", "copy", "-y", out],
                    stderr=subprocess.PIPE, text=True)))
                out = os.path.join(folder, f"gst-{path}-{transport}.mp4")
                jobs.append((f"gstreamer {transport} /{path}", out, subprocess.Popen(
                    ["timeout", "-s", "INT", str(pull_seconds + 2), "gst-launch-1.0", "-q", "-e", "rtspsrc",
                     f"location=rtsp://127.0.0.1:{port}/{path}", f"user-id={USER}", f"user-pw={PASSWORD}", f"protocols={transport}",
                     "latency=200", "buffer-mode=none", "!", "rtph264depay", "!", "h264parse", "!", "mp4mux", "!", "filesink",
                     f"location={out}"], stderr=subprocess.PIPE, text=True)))
        results = []
        for name, out, process in jobs:
            _, errors = process.communicate(timeout=pull_seconds + 60)
            count, gap = gaps(out) if os.path.exists(out) else (0, float("nan"))
            results.append((name, count, gap, (errors or "").strip().splitlines()[:1]))
        status = json.loads(control(config, "status", "--json").stdout or "{}")
        return results, status.get("dropped_frames", -1)
    finally:
        stop_daemon(daemon, folder)


def stall_run():
    """One ffmpeg copying to segments, SIGSTOPped; two Python clients watched meanwhile."""
    folder = tempfile.mkdtemp(prefix="kioskcam-bench-rtsp-stall-")
    daemon, config, port = daemon_up(folder)
    try:
        quoted = PASSWORD.replace(" ", "%20")
        ffmpeg = subprocess.Popen(["ffmpeg", "-nostdin", "-loglevel", "error", "-rtsp_transport", "tcp", "-i",
                                   f"rtsp://{USER}:{quoted}@127.0.0.1:{port}/live", "-c", "copy", "-f", "segment",
                                   "-segment_time", "10", "-reset_timestamps", "1", os.path.join(folder, "seg%03d.mp4")],
                                  stderr=subprocess.DEVNULL)
        stop, threads, watchers = threading.Event(), [], []
        for _ in range(2):
            client = Client(port)
            client.start()
            threading.Thread(target=client.run, args=(stop,)).start()
            watchers.append(client)
        time.sleep(5)
        before = json.loads(control(config, "status", "--json").stdout or "{}")
        stalled_at = time.monotonic()
        ffmpeg.send_signal(signal.SIGSTOP)
        time.sleep(stall)
        during = json.loads(control(config, "status", "--json").stdout or "{}")
        ffmpeg.send_signal(signal.SIGCONT)
        time.sleep(5)
        stop.set()
        ffmpeg.send_signal(signal.SIGINT)
        try:
            ffmpeg.wait(15)
        except subprocess.TimeoutExpired:
            ffmpeg.kill()
        segments = sorted(f for f in os.listdir(folder) if f.startswith("seg"))
        stalled_gops = max((c.get("dropped_gops", 0) for c in during.get("rtsp_clients", [])), default=0)
        return {"gap": max(c.largest_gap(stalled_at) for c in watchers),
                "dropped": during.get("dropped_frames", -1) - before.get("dropped_frames", 0),
                "stalled_gops": stalled_gops, "segments": len(segments)}
    finally:
        stop_daemon(daemon, folder)


results = {0: [], clients: []}
for run in range(runs):
    for count in (0, clients):
        r = one_run(count)
        results[count].append(r)
        extra = ""
        if r["first"]:
            extra = (f", PLAY → first keyframe {min(r['first']) * 1000:.0f}–{max(r['first']) * 1000:.0f} ms, "
                     f"each client got {min(r['bytes']) / 1e6:.1f}–{max(r['bytes']) / 1e6:.1f} MB, GOPs dropped {r['gops']}")
        print(f"run {run + 1} {count:>2} clients: CPU {r['cpu']:.3f} s/s, peak RSS {r['hwm']:.1f} MiB, "
              f"camera frames dropped {r['dropped']}{extra}", flush=True)

median = {k: {f: statistics.median(r[f] for r in rs) for f in ("cpu", "hwm")} for k, rs in results.items()}
firsts = sorted(t for r in results[clients] for t in r["first"])
print(f"medians of {runs} alternated runs, {seconds:g} s each, recording 1280x720p30 + AAC:")
print(f"  extra CPU per RTSP client: {(median[clients]['cpu'] - median[0]['cpu']) / clients * 100:.2f} % of one core (target <= 1 %)")
print(f"  peak RSS with {clients} clients - none: {median[clients]['hwm'] - median[0]['hwm']:.1f} MiB")
print(f"  PLAY → first complete keyframe: median {statistics.median(firsts) * 1000:.0f} ms, worst {firsts[-1] * 1000:.0f} ms "
      f"of {len(firsts)} clients (target <= 1000 ms)")
print(f"  camera frames dropped: {sum(r['dropped'] for rs in results.values() for r in rs)} (target 0)")
if stall > 0:
    s = stall_run()
    print(f"  one ffmpeg client stopped (SIGSTOP) {stall:g} s: it lost {s['stalled_gops']} GOPs; the others' largest gap "
          f"between pictures {s['gap'] * 1000:.0f} ms (target <= 100 ms), camera frames dropped {s['dropped']}, "
          f"its segments afterwards {s['segments']}")

sub = {False: [], True: []}
for run in range(runs):
    for with_client in (False, True):
        sub[with_client].append(substream_run(with_client))
extra = (statistics.median(sub[True]) - statistics.median(sub[False])) * 100
print(f"  sub-stream 640x360 (camera 1280x720p30) with one client: {extra:.1f} % of one core more than configured and idle "
      f"(medians {statistics.median(sub[False]):.3f} → {statistics.median(sub[True]):.3f} s/s)")
if pull_seconds > 0:
    results, dropped = pull_run(pull_seconds)
    print(f"  {len(results)} real clients at once for {pull_seconds:g} s (target: no errors, no gap over 100 ms), camera frames dropped {dropped}:")
    for name, count, gap, errors in results:
        print(f"    {name:<22} {count:5d} pictures, largest gap {gap * 1000:.0f} ms{'  ' + errors[0] if errors else ''}")
