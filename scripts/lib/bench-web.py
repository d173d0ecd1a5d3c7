#!/usr/bin/env python3
"""scripts/bench-web's measurements (see that script)."""
import base64, http.client, json, os, shutil, signal, socket, ssl, statistics, struct, subprocess, sys, tempfile, threading, time

from benchcommon import cpu_seconds, free_port, vmhwm_mib

binary, runs, seconds, viewers = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])
TLS = ssl.create_default_context()
TLS.check_hostname = False
TLS.verify_mode = ssl.CERT_NONE


def control(binary, config, *args):
    return subprocess.run([binary, *args, "--config", config], capture_output=True, text=True, timeout=60)


def viewer(port, cookie, stop, counts, index):
    s = TLS.wrap_socket(socket.create_connection(("127.0.0.1", port)), server_hostname="127.0.0.1")
    key = base64.b64encode(os.urandom(16)).decode()
    s.sendall((f"GET /api/live HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
               f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\nOrigin: https://127.0.0.1:{port}\r\n"
               f"Cookie: {cookie}\r\n\r\n").encode())
    buffer = b""
    while b"\r\n\r\n" not in buffer:
        buffer += s.recv(4096)
    buffer = buffer.split(b"\r\n\r\n", 1)[1]
    s.settimeout(1)
    total = len(buffer)
    while not stop.is_set():
        try:
            data = s.recv(262144)
        except socket.timeout:
            continue
        if not data:
            break
        total += len(data)
    counts[index] = total
    s.close()


def one_run(mode):
    folder = tempfile.mkdtemp(prefix="kioskcam-bench-web-")
    port = free_port()
    config = os.path.join(folder, "kioskcam.toml")
    web = f'[web]\nlisten = "127.0.0.1:{port}"\n' if mode != "off" else "[web]\nenabled = false\n"
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
{web}""")
    if mode != "off":
        subprocess.run([binary, "web-user", "set", "bench", "--role", "viewer", "--config", config],
                       input=b"measure the viewers\n", check=True, capture_output=True)
    log = open(os.path.join(folder, "daemon.log"), "wb")
    daemon = subprocess.Popen([binary, "run", "--config", config], stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.time() + 30
        while b"kioskcam is running" not in open(log.name, "rb").read() and time.time() < deadline:
            time.sleep(0.1)
        assert control(binary, config, "start").returncode == 0, "kioskcam start"
        time.sleep(3)
        threads, counts, stop = [], {}, threading.Event()
        if mode == "viewers":
            conn = http.client.HTTPSConnection("127.0.0.1", port, context=TLS, timeout=30)
            conn.request("POST", "/api/login", body=json.dumps({"user": "bench", "password": "measure the viewers"}),
                         headers={"Content-Type": "application/json"})
            response = conn.getresponse()
            response.read()
            cookie = response.getheader("Set-Cookie").split(";")[0]
            for index in range(viewers):
                thread = threading.Thread(target=viewer, args=(port, cookie, stop, counts, index))
                thread.start()
                threads.append(thread)
            time.sleep(2)
        before = json.loads(control(binary, config, "status", "--json").stdout or "{}")
        start_cpu, start = cpu_seconds(daemon.pid), time.time()
        time.sleep(seconds)
        cpu = (cpu_seconds(daemon.pid) - start_cpu) / (time.time() - start)
        status = json.loads(control(binary, config, "status", "--json").stdout or "{}")
        stop.set()
        for thread in threads:
            thread.join()
        hwm = vmhwm_mib(daemon.pid)
        control(binary, config, "stop")
        dropped = status.get("dropped_frames", -1) - before.get("dropped_frames", 0)
        return {"cpu": cpu, "hwm": hwm, "dropped": dropped,
                "received": [counts.get(i, 0) for i in range(len(threads))]}
    finally:
        daemon.send_signal(signal.SIGTERM)
        try:
            daemon.wait(30)
        except subprocess.TimeoutExpired:
            daemon.kill()
        shutil.rmtree(folder, ignore_errors=True)


results = {"off": [], "on": [], "viewers": []}
for run in range(runs):
    for mode in ("off", "on", "viewers"):
        r = one_run(mode)
        results[mode].append(r)
        extra = f", each viewer got {min(r['received']) / 1e6:.1f}–{max(r['received']) / 1e6:.1f} MB" if r["received"] else ""
        print(f"run {run + 1} {mode:>7}: CPU {r['cpu']:.3f} s/s, peak RSS {r['hwm']:.1f} MiB, frames dropped while measured {r['dropped']}{extra}",
              flush=True)

median = {mode: {k: statistics.median(r[k] for r in rs) for k in ("cpu", "hwm")} for mode, rs in results.items()}
per_viewer = (median["viewers"]["cpu"] - median["on"]["cpu"]) / viewers * 100
print(f"medians of {runs} alternated runs, {seconds:g} s each, recording 1280x720p30 + AAC:")
for mode in ("off", "on", "viewers"):
    print(f"  {mode:>7}: CPU {median[mode]['cpu']:.3f} s/s, peak RSS {median[mode]['hwm']:.1f} MiB")
print(f"  extra CPU per live viewer: {per_viewer:.2f} % of one core (target <= 1 %)")
print(f"  peak RSS, web on with {viewers} viewers - web off: {median['viewers']['hwm'] - median['off']['hwm']:.1f} MiB (target <= 12 MiB)")
print(f"  dropped camera frames: {sum(r['dropped'] for rs in results.values() for r in rs)} (target 0)")
