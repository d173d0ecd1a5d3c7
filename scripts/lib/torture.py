#!/usr/bin/env python3
"""The power-cut battery (issue 11), run by scripts/torture: see its --help.

`kill -9` of `kioskcam run` at random moments while it records 2 s segments, at
segment cuts, during start-up salvage and during purges; after every kill and every
restart the library is checked. Each claim is checked from the files themselves:

- plays: every library file decodes to the last frame (`ffprobe -count_frames`, no
  error output), once when it lands and never changes afterwards;
- lost: per recording run, (kill time - time `record.start` answered) minus the
  seconds of that run's files in the library (video stream durations, ffprobe), and
  the same measured from what the daemon itself reported (`seconds_recorded` in a
  `status` just before the kill, plus the time since); both must be <= 2 s;
- nothing outside the library: the media root holds only `video|audio|photo/
  YYYYMMDD/HHMMSS[-N].ext`, the day's `.index`, `.quarantine/*`, and `.incoming`
  holds nothing once a restarted daemon is running (before it records again);
- counted once: no two library files with the same content or the same inode, no two
  covering the same time (name + duration), no `.index` name twice or naming a
  missing file, every `.part` a kill left resolved exactly once (recovered,
  discarded or quarantined), every library file belongs to exactly one run;
- honest header: every library file's header (video `tkhd`, `mvhd`, `mehd`) says
  how long it plays, within 0.1 s of its decoded frames at 30 fps, whether it was
  finished or salvaged, even when a kill hit while the header was being written;
- salvage: a file is quarantined only after salvage was interrupted 3 times on it
  (seen in its attempt counter after each kill); otherwise it is recovered;
- purge: a kill while a purge deletes old days leaves them half deleted; the next
  recording start finishes the purge;
- inside a move: die-at-move.so (LD_PRELOAD) kills the daemon between the link() that
  gives a finished file its library name and the unlink() of its temp name, in the
  recorder's move at a segment cut or in start-up salvage's: the moment no timed kill
  hits, and the one where a file can end up in the library twice.

Nothing is retried: a check that fails is reported and the run exits 1.
"""

import argparse
import datetime
import hashlib
import json
import os
import random
import re
import shutil
import signal
import socket
import struct
import statistics
import subprocess
import sys
import tempfile
import time

from benchcommon import control_request

SEGMENT_SECONDS = 2
MAX_LOST_SECONDS = 2.0
SEED_FILES_PER_FOLDER = 2500
SEED_FOLDERS = 4
LIBRARY_FILE = re.compile(r"^(video|audio|photo)/(\d{8})/(\d{6})(?:-(\d+))?\.(mp4|m4a|png|jpg)$")
INDEX_FILE = re.compile(r"^(video|audio|photo)/(\d{8})/\.index$")
PART_FILE = re.compile(r"^(video|audio|photo)-(\d{8})-(\d{6})(?:~\d+)?\.(mp4|m4a|jpg)\.part$")
ATTEMPTS_FILE = re.compile(r"^\.(.+\.part)\.attempts$")
NEW_ATTEMPTS_FILE = re.compile(r"^\.(.+\.part)\.attempts\.new$")   # a count a kill stopped before its rename


class Torture:
    def __init__(self, binary, kills, seed, work, log):
        self.binary = binary
        self.kills_planned = kills
        self.rng = random.Random(seed)
        self.seed = seed
        self.work = work
        self.say = log
        self.root = os.path.join(work, "media")
        self.incoming = os.path.join(self.root, ".incoming")
        self.quarantine = os.path.join(self.root, ".quarantine")
        self.socket_path = os.path.join(work, "control.sock")
        self.config = os.path.join(work, "kioskcam.toml")
        self.failures = []
        self.kills = []           # one dict per kill
        self.runs = []            # recording runs: window, times, daemon's own figures
        self.lives = 0
        self.last_kill = 0.0
        self.files = {}           # library path (relative) -> record
        self.pending = {}         # .part name -> {"run": index or None, "interrupted": n, "counter": n}
        self.resolved = {}        # .part name -> ("recovered", path) | ("discarded", reason) | ("quarantined", path)
        self.seed_dates = set()   # date folders made for purges (not recordings)
        self.seeds_waiting = False  # a purge was cut short: the next start must finish it
        self.seedings = 0
        self.quarantined = {}     # quarantine file -> reason
        self.unindexed = set()
        self.process = None
        self.life_log = None
        # The aimed kill inside a move (scripts/lib/die-at-move.c), armed while self.arm exists.
        self.arm = os.path.join(work, "arm")
        self.shim = os.path.join(work, "die-at-move.so")
        source = os.path.join(os.path.dirname(os.path.abspath(__file__)), "die-at-move.c")
        # The Swift toolchain's clang is on PATH wherever kioskcam builds.
        compiler = os.environ.get("CC") or shutil.which("clang") or shutil.which("cc")
        if not compiler:
            raise RuntimeError("no C compiler (clang from the Swift toolchain, or cc) to build die-at-move.so")
        subprocess.run([compiler, "-shared", "-fPIC", "-O2", "-o", self.shim, source, "-ldl"], check=True)
        with open(self.config, "w") as f:
            f.write(f"""[storage]
media_root = "{self.root}"
segment_seconds = {SEGMENT_SECONDS}
retention_days = 30
[camera]
source = "test"
size = "320x240"
[microphone]
source = "tone"
[encoder]
preset = "ultrafast"
[screen]
framebuffer = "file:{work}/screen.fb"
[lock]
idle_seconds = 3600
start_locked = false
[control]
state_directory = "{work}/state"
socket = "{self.socket_path}"
socket_group = ""
""")

    # MARK: Failures

    def fail(self, message):
        self.failures.append(message)
        self.say(f"  FAIL: {message}")

    # MARK: The daemon

    def spawn(self, preload=False):
        """Starts `kioskcam run`; with `preload`, die-at-move.so is in it (armed by self.arm)."""
        self.lives += 1
        self.life_log = os.path.join(self.work, f"life-{self.lives:03d}.log")
        out = open(self.life_log, "wb")
        environment = dict(os.environ)
        if preload:
            environment.update(LD_PRELOAD=self.shim, KIOSKCAM_TORTURE_ARM=self.arm)
        self.process = subprocess.Popen([self.binary, "run", "--config", self.config], env=environment,
                                        stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        out.close()
        self.spawned_at = time.time()

    def log_text(self):
        with open(self.life_log, "rb") as f:
            return f.read().decode("utf-8", "replace")

    def wait_running(self, timeout=120):
        deadline = time.time() + timeout
        while time.time() < deadline:
            if "kioskcam is running" in self.log_text():
                return True
            if self.process.poll() is not None:
                self.fail(f"life {self.lives}: the daemon exited ({self.process.returncode}) before running; see {self.life_log}")
                return False
            time.sleep(0.02)
        self.fail(f"life {self.lives}: not running after {timeout} s; see {self.life_log}")
        return False

    def kill(self):
        moment = time.time()
        os.kill(self.process.pid, signal.SIGKILL)
        self.process.wait()
        self.process = None
        self.last_kill = moment
        return moment

    def call(self, command, arguments=None, timeout=30):
        """One request on a fresh connection: (result, sent, answered)."""
        return control_request(self.socket_path, command, arguments, timeout)

    def status(self):
        reply, sent, answered = self.call("status")
        if not reply.get("ok"):
            raise RuntimeError(f"status failed: {reply}")
        return reply["result"], (sent + answered) / 2

    # MARK: Looking at the media root

    def walk(self):
        """Relative paths of every file and symlink under the media root."""
        found = []
        for directory, subdirectories, names in os.walk(self.root):
            for name in names + [d for d in subdirectories if os.path.islink(os.path.join(directory, d))]:
                found.append(os.path.relpath(os.path.join(directory, name), self.root))
        return found

    def incoming_names(self):
        try:
            return sorted(os.listdir(self.incoming))
        except FileNotFoundError:
            return []

    def counters(self):
        """Attempt counters in .incoming: .part name -> count (None: empty or unreadable)."""
        values = {}
        for name in self.incoming_names():
            match = ATTEMPTS_FILE.match(name)
            if match:
                try:
                    with open(os.path.join(self.incoming, name)) as f:
                        values[match.group(1)] = int(f.read().strip())
                except (OSError, ValueError):
                    values[match.group(1)] = None
        return values

    def is_seed(self, relative):
        parts = relative.split("/")
        return len(parts) >= 2 and parts[1] in self.seed_dates

    def seed_count(self):
        total = 0
        for date in self.seed_dates:
            folder = os.path.join(self.root, "video", date)
            try:
                total += len(os.listdir(folder))
            except FileNotFoundError:
                pass
        return total

    @staticmethod
    def name_time(relative):
        match = LIBRARY_FILE.match(relative)
        return datetime.datetime.strptime(match.group(2) + match.group(3), "%Y%m%d%H%M%S").timestamp()

    def probe(self, path):
        """Decodes every frame; returns (video seconds, frames, errors)."""
        result = subprocess.run(["ffprobe", "-v", "error", "-count_frames", "-show_entries",
                                 "stream=codec_type,nb_read_frames,duration,start_time:format=duration",
                                 "-of", "json", path], capture_output=True, text=True)
        errors = result.stderr.strip()
        if result.returncode != 0:
            errors = errors or f"ffprobe exit {result.returncode}"
        try:
            info = json.loads(result.stdout or "{}")
        except json.JSONDecodeError:
            return 0.0, 0, errors or "ffprobe printed no JSON"
        video = [s for s in info.get("streams", []) if s.get("codec_type") == "video"]
        audio = [s for s in info.get("streams", []) if s.get("codec_type") == "audio"]
        if not video or not audio:
            errors = (errors + "; " if errors else "") + f"streams: {len(video)} video, {len(audio)} audio (want 1 + 1)"
        frames = int(video[0].get("nb_read_frames", 0)) if video else 0
        seconds = 0.0
        if video:
            try:
                seconds = float(video[0]["duration"])
            except (KeyError, ValueError):
                seconds = frames / 30
        if video and frames == 0:
            errors = (errors + "; " if errors else "") + "no video frame decodes"
        return seconds, frames, errors

    @staticmethod
    def header_seconds(path):
        """(video tkhd seconds, mvhd seconds, mehd seconds or None) from the file's moov."""
        with open(path, "rb") as f:
            head = f.read(65536)

        def boxes(start, end):
            while start + 8 <= end:
                size, kind = struct.unpack(">I4s", head[start:start + 8])
                if size < 8 or start + size > end:
                    return
                yield kind, start + 8, start + size
                start += size

        def child(kind, start, end):
            return next(((s, e) for k, s, e in boxes(start, end) if k == kind), None)

        moov = child(b"moov", 0, len(head))
        if not moov:
            return 0.0, 0.0, None
        mvhd = child(b"mvhd", *moov)
        timescale, movie = struct.unpack(">II", head[mvhd[0] + 12:mvhd[0] + 20])
        video = 0.0
        for kind, start, end in boxes(*moov):
            if kind != b"trak":
                continue
            mdia = child(b"mdia", start, end)
            hdlr = child(b"hdlr", *mdia) if mdia else None
            if hdlr and head[hdlr[0] + 8:hdlr[0] + 12] == b"vide":
                tkhd = child(b"tkhd", start, end)
                video = struct.unpack(">I", head[tkhd[0] + 20:tkhd[0] + 24])[0] / timescale
        mvex = child(b"mvex", *moov)
        if not mvex:   # not fragmented (salvage's re-mux): the moov alone is the truth
            return video, movie / timescale, movie / timescale
        mehd = child(b"mehd", *mvex)
        mehd_seconds = struct.unpack(">Q", head[mehd[0] + 4:mehd[0] + 12])[0] / timescale if mehd else None
        return video, movie / timescale, mehd_seconds

    def check_root(self, daemon_running):
        """Every file in the media root is where it may be; new library files decode."""
        seen = set()
        for relative in self.walk():
            full = os.path.join(self.root, relative)
            if relative.startswith(".incoming/"):
                name = relative[len(".incoming/"):]
                if daemon_running or not (PART_FILE.match(name) or ATTEMPTS_FILE.match(name) or NEW_ATTEMPTS_FILE.match(name)):
                    self.fail(f"left in .incoming: {name}")
                continue
            if relative.startswith(".quarantine/"):
                continue
            if self.is_seed(relative):
                continue
            if INDEX_FILE.match(relative):
                continue
            if not LIBRARY_FILE.match(relative) or not os.path.isfile(full) or os.path.islink(full):
                self.fail(f"stray file outside the library tree: {relative}")
                continue
            seen.add(relative)
            info = os.lstat(full)
            known = self.files.get(relative)
            if known:
                if (info.st_ino, info.st_size, info.st_mtime_ns) != known["stat"]:
                    self.fail(f"{relative} changed after it landed in the library")
                    known["stat"] = (info.st_ino, info.st_size, info.st_mtime_ns)
                continue
            if not relative.endswith(".mp4"):
                self.fail(f"unexpected kind of file: {relative}")
                continue
            seconds, frames, errors = self.probe(full)
            if errors:
                self.fail(f"{relative} does not play: {errors}")
            video, movie, mehd = self.header_seconds(full)
            if abs(video - frames / 30) > 0.1 or movie < video or mehd != movie:
                self.fail(f"{relative}: its header says video {video:.3f} s, movie {movie:.3f} s, mehd {mehd} "
                          f"for {frames} frames ({frames / 30:.3f} s)")
            with open(full, "rb") as f:
                digest = hashlib.sha1(f.read()).hexdigest()
            self.files[relative] = {"stat": (info.st_ino, info.st_size, info.st_mtime_ns), "seconds": seconds,
                                    "frames": frames, "sha1": digest, "start": self.name_time(relative),
                                    "run": None, "life": self.lives}
        for relative in sorted(set(self.files) - seen):
            if not self.files[relative].get("gone"):
                self.fail(f"{relative} disappeared from the library")
                self.files[relative]["gone"] = True
        self.check_counted_once()
        self.check_quarantine()

    def check_counted_once(self):
        live = {p: r for p, r in self.files.items() if not r.get("gone")}
        by_digest, by_inode = {}, {}
        for path, record in live.items():
            for table, key in ((by_digest, record["sha1"]), (by_inode, record["stat"][0])):
                if key in table and table[key] != path:
                    pair = tuple(sorted((path, table[key])))
                    if pair not in self.reported_pairs:
                        self.reported_pairs.add(pair)
                        self.fail(f"counted twice: {pair[0]} and {pair[1]} hold the same recording")
                table[key] = path
        ordered = sorted(live.items(), key=lambda item: (item[1]["start"], item[0]))
        for (path_a, a), (path_b, b) in zip(ordered, ordered[1:]):
            overlap = a["start"] + a["seconds"] - b["start"]
            if overlap > 1.0 and (path_a, path_b) not in self.reported_pairs:
                self.reported_pairs.add((path_a, path_b))
                self.fail(f"counted twice: {path_a} ({a['seconds']:.2f} s) and {path_b} cover the same {overlap:.2f} s")
        # The day's index: each name once, only existing files.
        indexed = set()
        for relative in {os.path.dirname(p) for p in live}:
            index = os.path.join(self.root, relative, ".index")
            names = []
            if os.path.exists(index):
                with open(index) as f:
                    names = [line.split("\t")[0] for line in f.read().splitlines() if line]
            for name in names:
                path = relative + "/" + name
                if names.count(name) > 1 and path not in self.reported_index:
                    self.reported_index.add(path)
                    self.fail(f"{relative}/.index names {name} {names.count(name)} times")
                if not os.path.exists(os.path.join(self.root, path)) and path not in self.reported_index:
                    self.reported_index.add(path)
                    self.fail(f"{relative}/.index names {name}, which is not in the library")
                indexed.add(path)
        self.unindexed = set(live) - indexed

    def check_quarantine(self):
        try:
            names = os.listdir(self.quarantine)
        except FileNotFoundError:
            return
        for name in names:
            if name.endswith(".txt") or name in self.quarantined:
                continue
            note = os.path.join(self.quarantine, name + ".txt")
            reason = open(note).read().strip() if os.path.exists(note) else "(no note)"
            self.quarantined[name] = reason
            self.say(f"  quarantined {name}: {reason}")

    # MARK: What a life's log says about salvage

    def read_salvage(self, text):
        for line in text.splitlines():
            match = re.search(r"recovered ([\d.]+) s from (\S+) into (\S+)$", line)
            if match:
                self.resolve(os.path.basename(match.group(2)), ("recovered", os.path.relpath(match.group(3), self.root)))
                continue
            match = re.search(r"discarded (\S+): (.*)$", line)
            if match:
                self.resolve(os.path.basename(match.group(1)), ("discarded", match.group(2)))
                continue
            match = re.search(r"could not salvage (\S+): (.*); moved it to (\S+), where", line)
            if match:
                self.resolve(os.path.basename(match.group(1)), ("quarantined", os.path.basename(match.group(3)), match.group(2)))

    def resolve(self, part, outcome):
        if part in self.resolved:
            if self.resolved[part] != outcome:
                self.fail(f"{part} was salvaged twice: {self.resolved[part]} and {outcome}")
            return
        if part not in self.pending:
            self.fail(f"salvage handled {part}, which no kill left behind")
            return
        self.resolved[part] = outcome
        entry = self.pending[part]
        if outcome[0] == "quarantined":
            interrupted = entry["interrupted"]
            if interrupted < 3 or "did not finish in 3 attempts" not in outcome[2]:
                self.fail(f"{part} was quarantined after {interrupted} interrupted salvage attempt(s): {outcome[2]}")
        elif outcome[0] == "recovered" and entry["interrupted"] > 0:
            self.say(f"  {part}: recovered after {entry['interrupted']} interrupted salvage attempt(s)")

    def note_leftovers(self, run):
        """After a kill: the .part files now in .incoming that no earlier kill left are this run's."""
        fresh = []
        for name in self.incoming_names():
            if PART_FILE.match(name) and name not in self.pending:
                self.pending[name] = {"run": run, "interrupted": 0, "counter": 0}
                fresh.append(name)
        return fresh

    def settle_pending(self):
        """A running daemon has salvaged everything: each .part left must have an outcome."""
        self.read_salvage(self.log_text())
        claimed = {o[1] for o in self.resolved.values() if o[0] == "recovered"}
        for part in self.pending:
            if part in self.resolved:
                continue
            # A start-up killed between salvage's move and its log line: find the file by its name.
            match = PART_FILE.match(part)
            kind, date, clock, extension = match.group(1), match.group(2), match.group(3), match.group(4)
            pattern = re.compile(rf"^{kind}/{date}/{clock}(-\d+)?\.{extension}$")
            candidates = sorted(p for p in self.walk() if pattern.match(p) and p not in claimed)
            if candidates:
                self.resolved[part] = ("recovered", candidates[0], "not logged")
                claimed.add(candidates[0])
                self.say(f"  {part}: recovered by a start-up that was killed before it could log it ({candidates[0]})")
            else:
                self.resolved[part] = ("discarded", "not logged")
                self.say(f"  {part}: gone without a log line (a start-up killed while discarding it)")

    # MARK: Purges

    def seed_old_days(self):
        """Makes SEED_FOLDERS old date folders of small files, beside the library, ready to
        move in. The files are hard links to one file: creating files is slow on a busy
        disk (several ms each here), linking is not, and the purge unlinks names either way."""
        stage = tempfile.mkdtemp(prefix="stage-", dir=self.work)
        source = os.path.join(stage, "source")
        with open(source, "wb") as f:
            f.write(b"\0" * 64)
        today = datetime.date.today()
        dates = []
        for offset in range(SEED_FOLDERS):
            date = (today - datetime.timedelta(days=40 + 5 * (self.seedings * SEED_FOLDERS + offset))).strftime("%Y%m%d")
            folder = os.path.join(stage, date)
            os.makedirs(folder)
            for n in range(SEED_FILES_PER_FOLDER):
                os.link(source, os.path.join(folder, f"{n // 3600 % 24:02d}{n // 60 % 60:02d}{n % 60:02d}.mp4"))
            dates.append(date)
        self.seedings += 1
        return stage, dates

    def move_seeds_in(self, stage, dates):
        os.makedirs(os.path.join(self.root, "video"), exist_ok=True)
        for date in dates:
            os.rename(os.path.join(stage, date), os.path.join(self.root, "video", date))
            self.seed_dates.add(date)
        shutil.rmtree(stage)
        return self.seed_count()

    def kill_when_purging(self, before, timeout=60):
        """Kills as soon as the purge has deleted something; returns (kill time, files left)."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.seed_count() < before:
                moment = self.kill()
                return moment, self.seed_count()
            if self.process.poll() is not None:
                break
            time.sleep(0.002)
        moment = self.kill() if self.process else time.time()
        self.fail(f"the purge did not start within {timeout} s")
        return moment, self.seed_count()

    # MARK: One life per kill

    def restart(self, preload=False):
        """Starts the daemon and waits until it runs; it has salvaged everything by then."""
        self.spawn(preload)
        if not self.wait_running():
            if self.process and self.process.poll() is None:
                self.kill()
            return False
        self.settle_pending()
        left = self.incoming_names()
        if left:
            self.fail(f"a running daemon (life {self.lives}) left in .incoming: {left}")
        self.check_root(daemon_running=True)
        return True

    def start_recording(self):
        wait = self.last_kill + 2.0 - time.time()
        if wait > 0:   # keeps each run's files in seconds of their own (names are by the second)
            time.sleep(wait)
        reply, sent, answered = self.call("record.start")
        if not reply.get("ok"):
            self.fail(f"record.start refused: {reply}")
            return None
        if self.seeds_waiting:
            left = self.seed_count()
            if left:
                self.fail(f"the purge a kill cut short was not finished by the next recording start: {left} old files left")
            else:
                self.say("  the purge cut short by the last kill was finished before recording started")
            self.seeds_waiting = False
        run = {"index": len(self.runs), "sent": sent, "answered": answered, "life": self.lives}
        self.runs.append(run)
        return run

    def wait_recording(self, run):
        """The first status with recorded seconds: the daemon's own clock for this run."""
        deadline = time.time() + 10
        while time.time() < deadline:
            status, moment = self.status()
            if status.get("state") == "recording" and status.get("seconds_recorded", 0) > 0:
                return status["seconds_recorded"], moment
            time.sleep(0.02)
        self.fail("the recording wrote nothing within 10 s of record.start")
        return 0.0, time.time()

    def end_run(self, run, kind, moment, detail=""):
        run["killed"] = moment
        run["kind"] = kind
        fresh = self.note_leftovers(run["index"])
        run["leftovers"] = fresh
        run["finished_logged"] = re.findall(r"\] finished (\S+) \(", self.log_text())
        if kind == "cut" and len(fresh) >= 2:
            detail = (detail + ", " if detail else "") + "while the old segment was being finished"
            run["mid_cut"] = True
        self.kills.append({"kind": kind, "run": run["index"], "at": moment, "detail": detail,
                           "after_start": moment - run["answered"]})
        self.say(f"kill {len(self.kills):2d} {kind:7s} {moment - run['answered']:6.2f} s into the recording, "
                 f".incoming: {len(fresh)} file(s) {detail}")
        self.check_root(daemon_running=False)

    def kill_recording(self, kind):
        if kind == "purge":
            stage, dates = self.seed_old_days()
        run = self.start_recording()
        if run is None:
            self.kill()
            return
        first_seconds, first_moment = self.wait_recording(run)
        if kind == "move":
            # The daemon kills itself inside the move of the first segment into the library.
            open(self.arm, "w").close()
            seconds, at = self.status()
            run["daemon_seconds"], run["daemon_at"] = seconds["seconds_recorded"], at
            deadline = time.time() + 30
            while self.process.poll() is None and time.time() < deadline:
                time.sleep(0.002)
            moment = time.time()
            os.unlink(self.arm)
            if self.process.poll() is None:
                self.fail("die-at-move.so did not stop the daemon at the first segment's move")
                moment = self.kill()
            else:
                self.process = None
                self.last_kill = moment
            self.end_run(run, kind, moment, self.describe_move())
        elif kind == "random":
            target = run["answered"] + self.rng.uniform(0.6, 7.0)
            time.sleep(max(0, target - 0.3 - time.time()))
            seconds, at = self.status()
            run["daemon_seconds"], run["daemon_at"] = seconds["seconds_recorded"], at
            time.sleep(max(0, target - time.time()))
            self.end_run(run, kind, self.kill())
        elif kind == "cut":
            # Segment k ends when the recording's timeline reaches 2k s; the daemon says where it is.
            boundary = SEGMENT_SECONDS * self.rng.randint(1, 3)
            while first_moment + (boundary - first_seconds) < time.time() + 0.4:
                boundary += SEGMENT_SECONDS
            cut_at = first_moment + (boundary - first_seconds)
            time.sleep(max(0, cut_at - 0.3 - time.time()))
            seconds, at = self.status()
            run["daemon_seconds"], run["daemon_at"] = seconds["seconds_recorded"], at
            cut_at = at + (boundary - seconds["seconds_recorded"])
            jitter = self.rng.uniform(0.0, 0.1)
            time.sleep(max(0, cut_at + jitter - time.time()))
            moment = self.kill()
            self.end_run(run, kind, moment, f"{moment - cut_at:+.3f} s from the cut at {boundary} s")
        else:  # purge while recording: SIGHUP makes the storage thread purge now
            time.sleep(max(0, run["answered"] + self.rng.uniform(0.5, 5.0) - time.time()))
            before = self.move_seeds_in(stage, dates)
            seconds, at = self.status()
            run["daemon_seconds"], run["daemon_at"] = seconds["seconds_recorded"], at
            self.process.send_signal(signal.SIGHUP)
            moment, left = self.kill_when_purging(before)
            self.note_purge_kill(before, left)
            self.end_run(run, "purge", moment, f"during a purge (SIGHUP) while recording, {before - left} of {before} old files deleted")

    def describe_move(self):
        """Which temp file a kill inside a move left with a library name as well."""
        linked = []
        for name in self.incoming_names():
            path = os.path.join(self.incoming, name)
            if PART_FILE.match(name) and os.stat(path).st_nlink > 1:
                linked.append(name)
        if not linked:
            self.fail("a kill inside a move left no temp file that is also in the library")
            return ""
        return "inside the move of " + ", ".join(linked) + " (linked into the library, temp name not yet removed)"

    def note_purge_kill(self, before, left):
        self.seeds_waiting = left > 0
        self.purge_hits += 1 if 0 < left < before else 0

    def kill_purge_at_start(self):
        """record.start purges before it records: kill while that purge deletes."""
        stage, dates = self.seed_old_days()
        wait = self.last_kill + 2.0 - time.time()
        if wait > 0:
            time.sleep(wait)
        before = self.move_seeds_in(stage, dates)
        with socket.socket(socket.AF_UNIX) as s:
            s.connect(self.socket_path)
            s.sendall((json.dumps({"v": 1, "cmd": "record.start", "id": 1}) + "\n").encode())
            moment, left = self.kill_when_purging(before)
        self.note_purge_kill(before, left)
        fresh = self.note_leftovers(None)
        if fresh:
            self.fail(f"a kill during the purge before recording left files in .incoming: {fresh}")
        self.kills.append({"kind": "purge", "run": None, "at": moment,
                           "detail": f"during the purge record.start runs first, {before - left} of {before} old files deleted"})
        self.say(f"kill {len(self.kills):2d} purge   during record.start's purge: {before - left} of {before} old files deleted")
        self.check_root(daemon_running=False)

    def kill_during_salvage(self, method):
        """A start-up killed early: by a random 0-300 ms after spawning, or as soon as an
        attempt counter appears (salvage has begun on a file)."""
        before = self.counters()
        waiting = [p for p in self.pending if p not in self.resolved and os.path.exists(os.path.join(self.incoming, p))]
        self.spawn(preload=method == "move")
        if method == "move":
            open(self.arm, "w").close()
            deadline = time.time() + 60
            while self.process.poll() is None and time.time() < deadline and "kioskcam is running" not in self.log_text():
                time.sleep(0.002)
            moment = time.time()
            os.unlink(self.arm)
            if self.process.poll() is None:
                moment = self.kill()
                detail = "nothing was moved at start-up"
            else:
                self.process = None
                self.last_kill = moment
                detail = self.describe_move()
            self.read_salvage(self.log_text())
            self.kills.append({"kind": "move", "run": None, "at": moment, "detail": "start-up salvage: " + detail})
            self.say(f"kill {len(self.kills):2d} move    {moment - self.spawned_at:6.3f} s after spawning, salvage: {detail}")
            self.check_root(daemon_running=False)
            return
        if method == "window":
            time.sleep(self.rng.uniform(0.0, 0.3))
            moment = self.kill()
        else:
            deadline = time.time() + 60
            while time.time() < deadline and self.process.poll() is None:
                if self.counters() != before:   # a counter written (or being written) for a new attempt
                    break
                if "kioskcam is running" in self.log_text():
                    break
                time.sleep(0.001)
            moment = self.kill()
        self.read_salvage(self.log_text())
        after = self.counters()
        interrupted = []
        for part, count in after.items():
            if count is None:
                self.fail(f"the attempt counter of {part} is empty or unreadable after a kill "
                          f"(was {before.get(part, 0)}): the attempts so far are no longer counted")
                continue
            if count > (before.get(part) or 0) and os.path.exists(os.path.join(self.incoming, part)):
                if part in self.pending:
                    self.pending[part]["interrupted"] = count
                interrupted.append(f"{part} (attempt {count})")
        if interrupted:
            outcome = "interrupted salvage of " + ", ".join(interrupted)
            self.salvage_hits += 1
        elif all(os.path.exists(os.path.join(self.incoming, p)) for p in waiting):
            outcome = "before salvage began"
        else:
            outcome = "after salvage had finished"
        self.kills.append({"kind": "salvage", "run": None, "at": moment, "detail": f"{method}: {outcome}",
                           "after_spawn": moment - self.spawned_at})
        self.say(f"kill {len(self.kills):2d} salvage {moment - self.spawned_at:6.3f} s after spawning ({method}): {outcome}")
        self.check_root(daemon_running=False)

    # MARK: The plan and the end

    def plan(self):
        n = self.kills_planned
        purge = max(1, round(n * 0.16))
        salvage = max(1, round(n * 0.2))
        cut = max(1, round(n * 0.24))
        move = max(1, round(n * 0.06))
        rand = max(1, n - purge - salvage - cut - move)
        salvage = n - purge - cut - rand - move
        purge_at_start = (purge + 1) // 2
        move_in_recording = (move + 1) // 2
        episodes = [["random"] for _ in range(rand)] + [["cut"] for _ in range(cut)] \
            + [["purge-rec"] for _ in range(purge - purge_at_start)] + [["purge-start"] for _ in range(purge_at_start)] \
            + [["move"] for _ in range(move_in_recording)]
        self.rng.shuffle(episodes)
        recording = [e for e in episodes if e[0] != "purge-start"]
        # A kill inside salvage's move follows a kill that left files to salvage.
        for episode in self.rng.sample([e for e in recording if e[0] != "move"], move - move_in_recording):
            episode.append("move")
        # Salvage kills follow recording kills (which leave a file to salvage): in bursts of
        # 1 or 2, and once, in a long battery, 3 in a row on one file (the quarantine rule).
        left = salvage
        if n >= 20 and left >= 3:
            self.rng.choice(recording[1:]).extend(["poll", "poll", "poll"])
            left -= 3
        while left > 0:
            episode = self.rng.choice([e for e in recording if len(e) == 1 and e[0] != "move"] or recording)
            burst = min(left, self.rng.choice([1, 2]))
            episode.extend(self.rng.choice(["window", "poll"]) for _ in range(burst))
            left -= burst
        return episodes

    def run(self):
        self.reported_pairs = set()
        self.reported_index = set()
        self.purge_hits = 0
        self.salvage_hits = 0
        episodes = self.plan()
        self.say(f"== plan (seed {self.seed}): " + " ".join("+".join(e) for e in episodes))
        for episode in episodes:
            kind = episode[0]
            if not self.restart(preload=kind == "move"):
                return
            if kind == "purge-start":
                self.kill_purge_at_start()
            else:
                self.kill_recording({"purge-rec": "purge"}.get(kind, kind))
            for method in episode[1:]:
                self.kill_during_salvage(method)
        if not self.restart():
            return
        self.finish()

    def finish(self):
        """The last life: the CLI records once more (finishing any purge), stops, SIGTERM."""
        wait = self.last_kill + 2.0 - time.time()
        if wait > 0:
            time.sleep(wait)
        cli = [self.binary]
        run = {"index": len(self.runs), "sent": time.time(), "life": self.lives, "kind": "final"}
        self.runs.append(run)
        started = subprocess.run(cli + ["start", "--config", self.config], capture_output=True, text=True)
        if started.returncode != 0:
            self.fail(f"kioskcam start: {started.stderr.strip()}")
        if self.seeds_waiting and self.seed_count():
            self.fail(f"the purge a kill cut short was not finished by `kioskcam start`: {self.seed_count()} old files left")
        time.sleep(3)
        stopped = subprocess.run(cli + ["stop", "--config", self.config], capture_output=True, text=True)
        run["ended"] = time.time()
        if stopped.returncode != 0:
            self.fail(f"kioskcam stop: {stopped.stderr.strip()}")
        status = subprocess.run(cli + ["status", "--json", "--config", self.config], capture_output=True, text=True)
        try:
            reported = json.loads(status.stdout).get("quarantined_files")
        except json.JSONDecodeError:
            reported = None
            self.fail(f"kioskcam status --json: {status.stderr.strip() or status.stdout[:200]}")
        self.process.send_signal(signal.SIGTERM)
        try:
            code = self.process.wait(timeout=60)
            if code != 0:
                self.fail(f"the last daemon exited {code} after SIGTERM")
        except subprocess.TimeoutExpired:
            self.fail("the last daemon did not stop within 60 s of SIGTERM")
            self.kill()
        self.process = None
        self.check_root(daemon_running=False)
        if self.incoming_names():
            self.fail(f"left in .incoming after a clean stop: {self.incoming_names()}")
        if self.seed_count():
            self.fail(f"{self.seed_count()} files of old days the purges should have deleted are left")
        if reported is not None and reported != len(self.quarantined):
            self.fail(f"status says {reported} quarantined file(s), .quarantine holds {len(self.quarantined)}")
        for run in self.runs:
            if run.get("killed") is None:
                continue
            for path in run["finished_logged"]:
                relative = os.path.relpath(path, self.root)
                if relative not in self.files or self.files[relative].get("gone"):
                    self.fail(f"run {run['index']}: the daemon finished {relative}, but it is not in the library")

    def report(self):
        """Attributes files to runs by the second in their name, and prints the totals."""
        windows = [(r, int(r["sent"]) - 1, r.get("killed") or r.get("ended") or time.time()) for r in self.runs]
        for path, record in self.files.items():
            if record.get("gone"):
                continue
            owners = [r for r, low, high in windows if low <= record["start"] <= high]
            if len(owners) != 1:
                self.fail(f"{path} belongs to {len(owners)} recording runs (by the time in its name)")
                continue
            record["run"] = owners[0]["index"]
        lost, lost_daemon, spans = [], [], []
        excluded = 0
        for run in self.runs:
            if run.get("killed") is None:
                continue
            quarantined = [p for p in run["leftovers"] if self.resolved.get(p, ("",))[0] == "quarantined"]
            recorded = sum(r["seconds"] for r in self.files.values() if r.get("run") == run["index"] and not r.get("gone"))
            span = run["killed"] - run["answered"]
            run["recorded"] = recorded
            if quarantined:
                excluded += 1
                self.say(f"  run {run['index']}: {recorded:.2f} s in the library of {span:.2f} s; "
                         f"the rest is in .quarantine ({', '.join(quarantined)})")
                continue
            spans.append(span)
            lost.append(span - recorded)
            files = sorted(p for p, r in self.files.items() if r.get("run") == run["index"] and not r.get("gone"))
            daemon_lost = ""
            if "daemon_seconds" in run:
                daemon_lost = f", {run['daemon_seconds'] + run['killed'] - run['daemon_at'] - recorded:.2f} s by the daemon's count"
            self.say(f"  run {run['index']:2d} {run['kind']:6s} {span:6.2f} s before the kill, {recorded:6.2f} s in "
                     f"{len(files)} file(s): {span - recorded:.2f} s lost{daemon_lost}")
            if span - recorded > MAX_LOST_SECONDS:
                self.fail(f"run {run['index']} ({run['kind']}): {span - recorded:.2f} s lost "
                          f"({span:.2f} s recorded before the kill, {recorded:.2f} s in the library)")
            if "daemon_seconds" in run:
                daemon_span = run["daemon_seconds"] + (run["killed"] - run["daemon_at"])
                lost_daemon.append(daemon_span - recorded)
                if daemon_span - recorded > MAX_LOST_SECONDS:
                    self.fail(f"run {run['index']} ({run['kind']}): {daemon_span - recorded:.2f} s lost by the daemon's own count")
        live = [r for r in self.files.values() if not r.get("gone")]
        kinds = {k: [x for x in self.kills if x["kind"] == k] for k in ("random", "cut", "salvage", "purge", "move")}
        mid_cut = sum(1 for r in self.runs if r.get("mid_cut"))
        outcomes = [o[0] for o in self.resolved.values()]
        print()
        print(f"== torture: {len(self.kills)} kills of kioskcam run (seed {self.seed}), {SEGMENT_SECONDS} s segments, 320x240, preset ultrafast")
        print(f"kills:        {len(kinds['random'])} at random moments while recording, "
              f"{len(kinds['cut'])} at a segment cut ({mid_cut} while the old segment was being finished), "
              f"{len(kinds['salvage'])} during start-up ({self.salvage_hits} interrupted a salvage), "
              f"{len(kinds['purge'])} during a purge ({self.purge_hits} with the purge part-way), "
              f"{len(kinds['move'])} inside a move into the library (die-at-move.so: "
              f"{sum(1 for k in kinds['move'] if k['run'] is not None)} at a segment cut, "
              f"{sum(1 for k in kinds['move'] if k['run'] is None)} in start-up salvage)")
        print(f"files:        {len(live)} in the library, all decoded to the last frame: "
              f"{sum(1 for r in live if r['frames'] > 0)} ok; {sum(r['frames'] for r in live)} frames")
        print(f"salvage:      {outcomes.count('recovered')} files recovered at start-up, "
              f"{outcomes.count('discarded')} discarded (no complete fragment), {outcomes.count('quarantined')} quarantined")
        for name, reason in sorted(self.quarantined.items()):
            print(f"              .quarantine/{name}: {reason}")
        print(f"recorded:     {sum(r['seconds'] for r in live):.1f} s in the library; "
              f"{sum(spans):.1f} s recorded before the kills in {len(spans)} runs")
        if lost:
            print(f"lost/kill:    max {max(lost):.2f} s, mean {statistics.mean(lost):.2f} s "
                  f"(kill time - record.start answered - seconds in the library; limit {MAX_LOST_SECONDS:.0f} s)")
        if lost_daemon:
            print(f"              max {max(lost_daemon):.2f} s, mean {statistics.mean(lost_daemon):.2f} s "
                  f"by the daemon's own count (its seconds_recorded just before the kill + time since)")
        if excluded:
            print(f"              {excluded} run(s) not counted: their last file went to .quarantine")
        print(f"index:        {len(self.unindexed)} library file(s) without an .index line "
              f"(a kill between the move and the index write; kioskcam list probes them)")
        purged = len(self.seed_dates) * SEED_FILES_PER_FOLDER
        print(f"purges:       {purged} old files in {len(self.seed_dates)} old days, all deleted in the end: "
              f"{'yes' if not self.seed_count() else 'NO'}")
        print(f"failures:     {len(self.failures)}")
        for failure in self.failures:
            print(f"  - {failure}")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binary", required=True)
    parser.add_argument("--kills", type=int, default=50)
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--work", default=None, help="folder for the run (default: a new temp folder)")
    parser.add_argument("--keep", action="store_true", help="keep the folder even if every check passes")
    args = parser.parse_args()
    if args.kills < 5:
        parser.error("--kills must be at least 5 (one of each kind)")
    seed = args.seed if args.seed is not None else random.randrange(1 << 31)
    work = args.work or tempfile.mkdtemp(prefix="kioskcam-torture.")
    os.makedirs(work, exist_ok=True)
    try:
        torture = Torture(os.path.abspath(args.binary), args.kills, seed, work, lambda s: print(s, flush=True))
    except (OSError, RuntimeError, subprocess.CalledProcessError) as error:
        sys.exit(f"torture: cannot set up in {work}: {error}")
    started = time.time()
    try:
        torture.run()
    except Exception as error:  # a harness error is a failure, not a pass
        torture.fail(f"the battery stopped: {type(error).__name__}: {error}")
    finally:
        if torture.process is not None and torture.process.poll() is None:
            torture.kill()
    torture.report()
    print(f"time:         {time.time() - started:.0f} s; work folder {work}"
          + (" (kept)" if torture.failures or args.keep else " (removed)"))
    if not torture.failures and not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    sys.exit(1 if torture.failures else 0)


if __name__ == "__main__":
    main()
