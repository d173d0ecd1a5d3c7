#!/usr/bin/env bash
# HIL scenario: kioskcam's V4L2 camera and ALSA microphone against real kernel drivers
# (vivid, snd-aloop). Run on the host with:
#   scripts/hil/run-guest scripts/hil/scenarios/capture.sh
# Needs the debug build (swift build) — the guest sees the host's files.
set -uo pipefail   # no -e: every check runs and reports PASS or FAIL

# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "${HIL_LIB:-$(dirname "${BASH_SOURCE[0]}")/../lib.sh}"

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
KIOSKCAM=${KIOSKCAM:-${KIOSKCAM_BUILD_DIR:-$ROOT/.build/debug}/kioskcam}
WORK=/tmp/hil-capture
MIC=hw:Loopback,1,0
TONE_HZ=1000
# TCG runs guest code several times slower than the host: record vivid's native
# 320x180 with libx264's fastest preset so the encoder keeps up.
SIZE=320x180
mkdir -p "$WORK"
printf '[encoder]\npreset = "ultrafast"\n[microphone]\nsample_rate = 48000\nchannels = 1\n' >"$WORK/kioskcam.toml"
export HOME=$WORK   # nothing of the host's home is writable here

if [[ ! -x $KIOSKCAM ]]; then
    hil_fail "kioskcam binary" "$KIOSKCAM missing: run swift build first"
    hil_summary
    exit 1
fi

# --- devices ----------------------------------------------------------------------------
if hil_modprobe vivid n_devs=1 node_types=0x1 && hil_wait_for 10 test -c /dev/video0; then
    hil_pass "vivid: /dev/video0"
else
    hil_fail "vivid: /dev/video0" "modprobe vivid failed"
fi
if hil_modprobe snd-aloop && hil_wait_for 10 grep -q Loopback /proc/asound/cards; then
    hil_pass "snd-aloop: Loopback card"
else
    hil_fail "snd-aloop: Loopback card" "modprobe snd-aloop failed"
fi

# A known tone into the loopback's playback side; kioskcam captures the other side.
# The loopback locks both sides to one format, so kioskcam asks for the same (48 kHz mono).
# Generated for as long as the scenario runs (a file of fixed length ran out when a
# loaded host made the guest slow, and the last recordings heard silence).
python3 -c '
import math, struct, sys
rate, hz = 48000, float(sys.argv[1])
second = struct.pack("<%dh" % rate, *[int(12000 * math.sin(2 * math.pi * hz * i / rate)) for i in range(rate)])
while True:
    sys.stdout.buffer.write(second)
' "$TONE_HZ" | aplay -q -D hw:Loopback,0,0 -t raw -f S16_LE -r 48000 -c 1 &
APLAY=$!
sleep 0.5

# Dominant frequency of a file's audio, from zero crossings of its decoded samples.
dominant_hz() {
    ffmpeg -nostdin -v error -i "$1" -map 0:a -ac 1 -ar 48000 -f s16le - 2>/dev/null | python3 -c '
import struct, sys
data = sys.stdin.buffer.read()
s = struct.unpack("<%dh" % (len(data) // 2), data)
s = s[4800:]  # skip the first 0.1 s (encoder priming)
crossings = sum(1 for a, b in zip(s, s[1:]) if (a < 0) != (b < 0))
print(round(crossings / 2 / (len(s) / 48000.0)) if s else 0)'
}

# --- probe ------------------------------------------------------------------------------
if "$KIOSKCAM" probe --json >"$WORK/probe.json" 2>"$WORK/probe.err"; then
    if python3 - "$WORK/probe.json" <<'EOF'
import json, sys
report = json.load(open(sys.argv[1]))
cameras = report["cameras"]
vivid = [c for c in cameras if c["driver"] == "vivid"]
assert vivid, "no vivid camera in %r" % [c["driver"] for c in cameras]
fourccs = {f["fourcc"] for f in vivid[0]["formats"]}
missing = {"YUYV", "NV12", "YU12"} - fourccs
assert not missing, "formats missing: %s (have %s)" % (missing, sorted(fourccs))
assert any("Loopback" in (m.get("cardName", "") + m.get("cardID", "") + m.get("name", "")) for m in report["microphones"]), report["microphones"]
EOF
    then hil_pass "probe --json lists vivid (YUYV, NV12, YU12) and the Loopback microphone"
    else hil_fail "probe --json lists vivid and Loopback" "$(tail -n 1 "$WORK/probe.err")"
    fi
else
    hil_fail "probe --json" "$(tail -n 2 "$WORK/probe.err" | tr '\n' ' ')"
fi

# --- warm-up ----------------------------------------------------------------------------
# A booted appliance has its libraries paged in; the first run here pages them in over
# 9p under TCG (seconds), which would only measure the emulator. Not checked.
"$KIOSKCAM" record --config "$WORK/kioskcam.toml" --camera /dev/video0 --size "$SIZE" --mic "alsa:$MIC" \
    --duration 1s --root "$WORK/warm-up" --quiet >/dev/null 2>&1

# --- record in each pixel format -------------------------------------------------------
for fourcc in YUYV NV12 YU12; do
    root=$WORK/media-$fourcc
    if file=$("$KIOSKCAM" record --config "$WORK/kioskcam.toml" --camera /dev/video0 --pixel-format "$fourcc" --size "$SIZE" --fps 30 \
            --mic "alsa:$MIC" --duration 3s --root "$root" 2>"$WORK/record-$fourcc.log"); then
        probe=$(ffprobe -v error -show_entries stream=codec_name:format=duration -of csv=p=0 "$file" | tr '\n' ' ')
        hil_log "$fourcc streams: $(ffprobe -v error -count_frames -show_entries stream=codec_name,start_time,duration,nb_read_frames -of csv=p=0 "$file" | tr '\n' ' ')"
        hil_log "$fourcc progress: $(grep -E 'dropped' "$WORK/record-$fourcc.log" | tail -n 1)"
        if grep -q "dequeuing" "$WORK/record-$fourcc.log"; then
            hil_fail "record $fourcc: a quiet log" "libv4l2 complained $(grep -c dequeuing "$WORK/record-$fourcc.log") times"
        fi
        duration=$(ffprobe -v error -show_entries format=duration -of csv=p=0 "$file")
        if [[ $probe == *h264* && $probe == *aac* ]] && python3 -c "import sys; sys.exit(0 if abs($duration - 3.0) <= 0.2 else 1)"; then
            hil_pass "record $fourcc: H.264 + AAC, ${duration} s"
        else
            hil_fail "record $fourcc: H.264 + AAC of 3 s" "ffprobe: $probe"
        fi
        hz=$(dominant_hz "$file")
        if ((hz >= TONE_HZ * 95 / 100 && hz <= TONE_HZ * 105 / 100)); then
            hil_pass "record $fourcc: the recorded sound is the ${TONE_HZ} Hz tone (${hz} Hz)"
        else
            hil_fail "record $fourcc: the recorded sound is the ${TONE_HZ} Hz tone" "dominant ${hz} Hz"
        fi
        grep -h "camera:" "$WORK/record-$fourcc.log" | head -n 2 | sed 's/^/HIL: /'
    else
        hil_fail "record $fourcc" "$(tail -n 2 "$WORK/record-$fourcc.log" | tr '\n' ' ')"
    fi
done

# --- unplug and replug ------------------------------------------------------------------
root=$WORK/media-unplug
log=$WORK/record-unplug.log
"$KIOSKCAM" record --config "$WORK/kioskcam.toml" --camera /dev/video0 --size "$SIZE" --fps 30 --mic "alsa:$MIC" --root "$root" >"$WORK/unplug.out" 2>"$log" &
RECORDER=$!
count_videos() { find "$root/video" -name '*.mp4' 2>/dev/null | wc -l; }
count_parts() { find "$root/.incoming" -name '*.part' 2>/dev/null | wc -l; }
has_video() { (($(count_videos) >= 1)); }
has_part() { (($(count_parts) >= 1)); }
if hil_wait_for 30 has_part; then
    sleep 3
    # Unbinding the driver is what an unplugged USB camera does to an open device:
    # its node disappears and every call on the fd fails with ENODEV.
    echo vivid.0 >/sys/bus/platform/drivers/vivid/unbind
    if hil_wait_for 15 has_video; then
        first=$(find "$root/video" -name '*.mp4' | sort | head -n 1)
        seconds=$(ffprobe -v error -show_entries format=duration -of csv=p=0 "$first" 2>/dev/null || echo 0)
        if python3 -c "import sys; sys.exit(0 if float('${seconds:-0}') >= 2.0 else 1)"; then
            hil_pass "unplug: the part recorded before the unplug is finished and plays (${seconds} s)"
        else
            hil_fail "unplug: the finished part plays" "duration '${seconds}'"
        fi
    else
        hil_fail "unplug: the recording is finished" "no file in the library 15 s after the unplug"
    fi
    if kill -0 "$RECORDER" 2>/dev/null; then hil_pass "unplug: kioskcam stays up"; else hil_fail "unplug: kioskcam stays up" "it exited: $(tail -n 2 "$log" | tr '\n' ' ')"; fi
    if grep -q "camera lost" "$log"; then hil_pass "unplug: reports \"camera lost\""; else hil_fail "unplug: reports camera lost" "$(tail -n 3 "$log" | tr '\n' ' ')"; fi
    echo vivid.0 >/sys/bus/platform/drivers/vivid/bind
    replugged=$SECONDS
    if hil_wait_for 20 has_part; then
        hil_pass "replug: recording resumes by itself ($((SECONDS - replugged)) s after the camera returned)"
    else
        hil_fail "replug: recording resumes" "no new recording 20 s after the replug: $(tail -n 3 "$log" | tr '\n' ' ')"
    fi
    sleep 3
    kill -TERM "$RECORDER"
    wait "$RECORDER"
    status=$?
    if ((status == 0)); then hil_pass "SIGTERM: exit 0"; else hil_fail "SIGTERM: exit 0" "exit $status: $(tail -n 2 "$log" | tr '\n' ' ')"; fi
    bad=0
    while read -r file; do
        ffprobe -v error -count_frames -show_entries stream=nb_read_frames -of csv=p=0 "$file" >/dev/null 2>&1 || bad=$((bad + 1))
    done < <(find "$root/video" -name '*.mp4')
    if (($(count_videos) >= 2 && bad == 0 && $(count_parts) == 0)); then
        hil_pass "after replug and SIGTERM: $(count_videos) files, all playable, nothing half-written"
    else
        hil_fail "after replug and SIGTERM: two playable files" "$(count_videos) files, $bad unplayable, $(count_parts) .part left"
    fi
else
    hil_fail "unplug: recording started" "$(tail -n 3 "$log" | tr '\n' ' ')"
    kill -TERM "$RECORDER" 2>/dev/null
fi
sed 's/^/HIL: log: /' "$log" | grep -E "lost|back|error" | head -n 6

# --- the wrappers' own hardware tests (skipped on a host without devices) -------------
hil_xctest --dir "$WORK" v4l2 KIOSKCAM_HIL_CAMERA=/dev/video0 -- KioskV4L2Tests.V4L2CameraHILTests
hil_xctest --dir "$WORK" alsa KIOSKCAM_TEST_ALSA_DEVICE=$MIC -- KioskALSATests.ALSAHardwareTests

# --- a real small disk ---------------------------------------------------------------
# The disk guard's test mounts a tiny tmpfs, which a host that is not root (or a
# container) cannot: it skips there and runs here, as root, in seconds. (The other
# tmpfs tests record real video, which takes minutes under TCG: they are not run here.)
# It runs tools through Foundation's Process, which sees a child exit only through a
# socket pair on 127.0.0.1: without the loopback interface (the guest boots with no
# network) it would wait for ever.
ip link set lo up 2>/dev/null || ifconfig lo 127.0.0.1 up
hil_xctest --timeout 60 --dir "$WORK" disk-guard -- KioskRecordingTests.LibraryPurgerTests/testDiskGuardDeletesOldestDaysOnARealSmallFilesystem

kill "$APLAY" 2>/dev/null
# Keep logs and recordings for a person to look at (the guest's /tmp is its own).
cp -r "$WORK" "$HIL_RESULTS/work" 2>/dev/null
hil_summary
