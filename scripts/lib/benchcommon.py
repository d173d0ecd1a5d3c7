"""What the benchmark, soak and power-cut scripts share: a free loopback port, a process's
CPU time and peak RSS, and one request on the daemon's control socket."""
import json
import os
import socket
import time

TICKS = os.sysconf("SC_CLK_TCK")


def free_port(kind=socket.SOCK_STREAM):
    with socket.socket(socket.AF_INET, kind) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cpu_seconds(pid):
    """User + system CPU seconds of a process so far (/proc/PID/stat)."""
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def vmhwm_mib(pid):
    """The process's peak resident set (VmHWM), MiB."""
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def control_request(socket_path, command, arguments=None, timeout=30):
    """One request on a fresh connection to the daemon's control socket (docs/control.md):
    (the reply as a dict, when it was sent, when it was answered). A closed connection
    reads as a failed reply."""
    request = {"v": 1, "cmd": command, "id": 1}
    if arguments:
        request["args"] = arguments
    with socket.socket(socket.AF_UNIX) as connection:
        connection.settimeout(timeout)
        connection.connect(socket_path)
        sent = time.time()
        connection.sendall((json.dumps(request) + "\n").encode())
        data = b""
        while not data.endswith(b"\n"):
            chunk = connection.recv(65536)
            if not chunk:
                break
            data += chunk
        answered = time.time()
    reply = json.loads(data.decode()) if data else {"ok": False, "error": {"message": "connection closed"}}
    return reply, sent, answered
