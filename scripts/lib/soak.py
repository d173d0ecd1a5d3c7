#!/usr/bin/env python3
"""The soak (issue 11), run by scripts/soak: see its --help.

`kioskcam run` for N minutes in real time on its built-in devices (test-pattern camera
1280x720 at 30 fps, tone microphone: the appliance's default sizes and encoder), with
1-minute segments and the screen live (a file-backed framebuffer, never idle), recording
the whole time. Every 10 s: resident memory (VmRSS), open file descriptors (and how many
are recordings being written), threads, and the daemon's own status, into soak.csv.

Targets:
- resident memory after the first minute grows by <= 1 MiB (the largest sample after
  the first minute minus the first sample after it; samples are taken 5 s after the
  10-s marks, so none falls on a segment cut, when the old and the new encoder are
  briefly both alive);
- the number of open file descriptors stays constant after the first minute (a sample
  taken while a segment cut has two recordings open counts that one extra);
- the last segment's audio and video start within one frame (1/30 s) of each other.
Also reported: the trend of memory after the first minute (least squares, KiB per
minute), dropped frames, every segment's duration, and what the resident memory is at
the end: anonymous (heap, stacks, the encoder's pictures, frame buffers), kioskcam's own
file (code, constants, relocated data) and the libraries and other files, each with how
much of it the daemon touched in the last minute (/proc/PID/clear_refs, then the pages'
Referenced bits in smaps). File pages that were not touched are clean copies of the
program the kernel drops when memory runs short; the touched ones are the working set.
"""

import argparse
import datetime
import glob
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

from benchcommon import control_request

FPS = 30
MIB_KIB = 1024


def read_status_kib(pid, field):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return None


def open_fds(pid):
    targets = []
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            targets.append(os.readlink(f"/proc/{pid}/fd/{fd}"))
        except OSError:
            pass
    return targets


def control_status(path):
    """The daemon's status over its control socket (docs/control.md), asked from here rather
    than by a `kioskcam status` process: such a process maps kioskcam's file too, and its
    page faults would mark the daemon's code pages as touched (the working set, below)."""
    try:
        reply, _, _ = control_request(path, "status")
    except (OSError, ValueError):
        return {}
    return reply.get("result", {}) if reply.get("ok") else {}


MAPPING = re.compile(r"^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ \S+\s*(.*)$")


def resident_by_kind(pid, binary):
    """{kind: (resident KiB, of it referenced since the last clear_refs KiB)} from smaps."""
    kinds = {}
    kind = None
    with open(f"/proc/{pid}/smaps") as f:
        for line in f:
            header = MAPPING.match(line)
            if header:
                path = header.group(1)
                kind = ("anonymous" if not path.startswith("/")
                        else "kioskcam's file" if path == binary else "libraries, files")
                continue
            field, _, value = line.partition(":")
            if field in ("Rss", "Referenced"):
                resident, used = kinds.get(kind, (0, 0))
                kib = int(value.split()[0])
                kinds[kind] = (resident + kib, used) if field == "Rss" else (resident, used + kib)
    return kinds


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binary", required=True)
    parser.add_argument("--minutes", type=float, default=30)
    parser.add_argument("--interval", type=float, default=10)
    parser.add_argument("--segment-seconds", type=int, default=60, help="shorter segments for quicker experiments")
    parser.add_argument("--work", default=None)
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()
    if args.minutes < 2:
        parser.error("--minutes must be at least 2 (the first minute is the baseline)")
    work = args.work or tempfile.mkdtemp(prefix="kioskcam-soak.")
    os.makedirs(work, exist_ok=True)
    root = os.path.join(work, "media")
    config = os.path.join(work, "kioskcam.toml")
    with open(config, "w") as f:
        f.write(f"""[storage]
media_root = "{root}"
segment_seconds = {args.segment_seconds}
[camera]
source = "test"
[microphone]
source = "tone"
[screen]
framebuffer = "file:{work}/screen.fb"
[lock]
idle_seconds = 86400
start_locked = false
[control]
state_directory = "{work}/state"
socket = "{work}/control.sock"
socket_group = ""
""")
    binary = os.path.abspath(args.binary)
    cli = lambda *a: subprocess.run([binary, *a, "--config", config], capture_output=True, text=True)
    log_path = os.path.join(work, "daemon.log")
    failures = []
    with open(log_path, "wb") as log:
        daemon = subprocess.Popen([binary, "run", "--config", config], stdout=log, stderr=subprocess.STDOUT,
                                  stdin=subprocess.DEVNULL)
    pid = daemon.pid
    try:
        deadline = time.time() + 120
        while "kioskcam is running" not in open(log_path, errors="replace").read():
            if daemon.poll() is not None or time.time() > deadline:
                print(open(log_path, errors="replace").read(), file=sys.stderr)
                sys.exit("soak: the daemon did not start")
            time.sleep(0.1)
        started = cli("start")
        if started.returncode != 0:
            sys.exit(f"soak: kioskcam start: {started.stderr.strip()}")
        t0 = time.time()
        end = t0 + args.minutes * 60
        samples = []
        working_set_from = end - 60      # the last minute: clear_refs, then read what was touched
        refs_cleared = False
        working_set = {}
        csv_path = os.path.join(work, "soak.csv")
        with open(csv_path, "w") as csv:
            csv.write("seconds,rss_kib,fds,recording_fds,threads,state,seconds_recorded,segment,dropped_frames\n")
            # Halfway between the segment cuts (every 60 s of recording): a sample at a cut
            # would see the old and the new encoder alive at once, for a moment.
            next_sample = t0 + args.interval / 2
            while True:
                now = time.time()
                if now >= next_sample:
                    # /proc first, then the status request (its connection is an fd of the daemon's).
                    rss = read_status_kib(pid, "VmRSS")
                    threads = read_status_kib(pid, "Threads")
                    targets = open_fds(pid)
                    recording = sum(1 for t in targets if "/.incoming/" in t)
                    status = control_status(os.path.join(work, "control.sock"))
                    sample = {"t": now - t0, "rss": rss, "fds": len(targets), "recording_fds": recording,
                              "threads": threads, "state": status.get("state", "?"),
                              "seconds": status.get("seconds_recorded", 0), "segment": status.get("segment", 0),
                              "dropped": status.get("dropped_frames", 0)}
                    samples.append(sample)
                    csv.write(f"{sample['t']:.1f},{rss},{len(targets)},{recording},{threads},{sample['state']},"
                              f"{sample['seconds']:.2f},{sample['segment']},{sample['dropped']}\n")
                    csv.flush()
                    print(f"soak {sample['t']:7.1f} s  rss {rss / 1024:7.2f} MiB  fds {len(targets)} ({recording} recording)  "
                          f"threads {threads}  {sample['state']} {sample['seconds']:.0f} s seg {sample['segment']} "
                          f"dropped {sample['dropped']}", flush=True)
                    if sample["state"] != "recording":
                        failures.append(f"at {sample['t']:.0f} s the daemon was {sample['state']}, not recording")
                    next_sample += args.interval
                if not refs_cleared and now >= working_set_from:
                    with open(f"/proc/{pid}/clear_refs", "w") as f:
                        f.write("1")
                    refs_cleared = True
                if now >= end:
                    working_set = resident_by_kind(pid, os.path.realpath(binary))
                    break
                if daemon.poll() is not None:
                    sys.exit(f"soak: the daemon exited ({daemon.returncode}) after {now - t0:.0f} s; see {log_path}")
                time.sleep(min(0.5, max(0.01, min(next_sample, end) - time.time())))
        stopped = cli("stop")
        if stopped.returncode != 0:
            failures.append(f"kioskcam stop: {stopped.stderr.strip()}")
        daemon.send_signal(signal.SIGTERM)
        code = daemon.wait(timeout=60)
        if code != 0:
            failures.append(f"the daemon exited {code} after SIGTERM")
    finally:
        if daemon.poll() is None:
            daemon.kill()
            daemon.wait()

    # Memory after the first minute.
    baseline = next(s for s in samples if s["t"] >= 60)
    later = [s for s in samples if s["t"] >= baseline["t"]]
    growth = max(s["rss"] for s in later) - baseline["rss"]
    xs = [s["t"] / 60 for s in later]
    ys = [s["rss"] for s in later]
    mean_x, mean_y = statistics.mean(xs), statistics.mean(ys)
    slope = sum((x - mean_x) * (y - mean_y) for x, y in zip(xs, ys)) / max(sum((x - mean_x) ** 2 for x in xs), 1e-9)
    # File descriptors: constant, apart from the second recording open during a segment cut.
    steady = [s["fds"] - max(0, s["recording_fds"] - 1) for s in later]
    fd_min, fd_max = min(s["fds"] for s in later), max(s["fds"] for s in later)
    # The segments, and the last one's stream start times.
    files = sorted(glob.glob(os.path.join(root, "video", "*", "*.mp4")))
    durations = []
    for path in files:
        probe = subprocess.run(["ffprobe", "-v", "error", "-show_entries", "format=duration", "-of", "json", path],
                               capture_output=True, text=True)
        durations.append(float(json.loads(probe.stdout)["format"]["duration"]))
    def stream_starts(path):
        probe = subprocess.run(["ffprobe", "-v", "error", "-show_entries", "stream=codec_type,start_time", "-of", "json", path],
                               capture_output=True, text=True)
        starts = {s["codec_type"]: float(s["start_time"]) for s in json.loads(probe.stdout).get("streams", [])}
        skew = abs(starts["video"] - starts["audio"]) if "video" in starts and "audio" in starts else None
        return starts, skew
    # The last segment, and the last full one before it (the stop may come just after a cut).
    checked = [(path, *stream_starts(path)) for path in files[-2:]]

    print()
    print(f"== soak: {args.minutes:g} min of kioskcam run ({binary}), built-in test pattern 1280x720@30 + tone, "
          f"{args.segment_seconds} s segments, screen live, recording throughout")
    print(f"memory:   VmRSS {baseline['rss'] / 1024:.2f} MiB at {baseline['t']:.0f} s, max after it "
          f"{max(ys) / 1024:.2f} MiB, end {ys[-1] / 1024:.2f} MiB: grew {growth} KiB (target <= {MIB_KIB} KiB); "
          f"trend {slope:+.1f} KiB/min over {len(later)} samples")
    print(f"          first sample {samples[0]['rss'] / 1024:.2f} MiB at {samples[0]['t']:.0f} s; "
          f"threads {min(s['threads'] for s in later)}-{max(s['threads'] for s in later)}")
    if working_set:
        parts = [f"{kind} {kib / 1024:.1f} MiB ({used / 1024:.1f} touched)"
                 for kind, (kib, used) in sorted(working_set.items(), key=lambda item: -item[1][0])]
        total = sum(kib for kib, _ in working_set.values())
        touched = sum(used for _, used in working_set.values())
        print(f"resident: {total / 1024:.1f} MiB at the end, {touched / 1024:.1f} MiB of it touched in the last minute "
              f"(the working set): {'; '.join(parts)}")
    print(f"fds:      {fd_min}-{fd_max} open after the first minute; without the second recording open at a "
          f"segment cut: {min(steady)}-{max(steady)} (target: constant)")
    full = durations[:-1]
    print(f"segments: {len(files)} files, {sum(durations):.1f} s in all"
          + (f"; full segments {min(full):.3f}-{max(full):.3f} s" if full else "")
          + (f"; the last {durations[-1]:.3f} s" if durations else ""))
    print(f"dropped:  {samples[-1]['dropped']} video frames (the encoder fell behind; other jobs share these cores)")
    for path, starts, skew in reversed(checked):
        if skew is not None:
            print(f"{'last:' if path == files[-1] else 'before:':9s} {os.path.relpath(path, root)}: video starts at "
                  f"{starts['video']:.4f} s, audio at {starts['audio']:.4f} s: {skew * 1000:.1f} ms apart "
                  f"(target <= one frame, {1000 / FPS:.1f} ms)")
    if growth > MIB_KIB:
        failures.append(f"resident memory grew by {growth} KiB after the first minute (target <= {MIB_KIB} KiB)")
    if max(steady) != min(steady):
        failures.append(f"open file descriptors changed: {min(steady)}-{max(steady)}")
    if not checked:
        failures.append("no segment was recorded")
    for path, starts, skew in checked:
        if skew is None:
            failures.append(f"{os.path.relpath(path, root)} has no video or no audio stream")
        elif skew > 1 / FPS + 1e-6:
            failures.append(f"{os.path.relpath(path, root)}: audio and video start {skew * 1000:.1f} ms apart")
    print(f"failures: {len(failures)}")
    for failure in failures:
        print(f"  - {failure}")
    if not failures and not args.keep:
        shutil.rmtree(root, ignore_errors=True)
        print(f"data:     {csv_path}, {log_path} (the recordings were removed; --keep keeps them)")
    else:
        print(f"data:     {csv_path}, {log_path}, {root}")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
