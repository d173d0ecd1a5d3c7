#!/usr/bin/env bash
# HIL scenario: the touch screen's Library (issue 14) with real drivers — vfb (screen),
# uinput + evdev (touch), snd-aloop (the sound card the player plays through, and the
# other side of it to record what was played). Taps open the Library, a day and a
# recording; screenshots show each page; the recording's clicks come back once a second.
# Timing is measured from outside the player: the panel read every 4 ms, the loopback's
# other side captured with monotonic stamps; picture − sound and tap → first picture are
# printed against issue 14's targets (40 ms, 300 ms) and gated at 150 ms and 1 s, which a
# slow TCG guest still meets. Then the player on the card alone, `kioskcam play` captured
# back, and the microphone's period timing. Run it alone: the figures mean most with the machine to itself.
# Run on the host with:
#   KIOSKCAM_BUILD_DIR=$PWD/.build/debug KIOSKCAM_HIL_TIMEOUT=900 scripts/hil/run-guest scripts/hil/scenarios/media.sh
# Needs the debug build with tests (swift build --build-tests) — the guest sees the host's files.
set -uo pipefail   # no -e: every check runs and reports PASS or FAIL

# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "${HIL_LIB:-$(dirname "${BASH_SOURCE[0]}")/../lib.sh}"

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
BUILD=${KIOSKCAM_BUILD_DIR:-$ROOT/.build/debug}
KIOSKCAM=${KIOSKCAM_PROGRAM:-$BUILD/kioskcam}   # the shipped build when scripts/test names it
HIL_XCTEST=$BUILD/kioskcamPackageTests.xctest   # what hil_xctest runs
WORK=/tmp/hil-media
FB=/dev/fb0
mkdir -p "$WORK"
export HOME=$WORK

for needed in "$KIOSKCAM" "$HIL_XCTEST"; do
    if [[ ! -e $needed ]]; then
        hil_fail "build products" "$needed missing: run swift build --build-tests first"
        hil_summary
        exit 1
    fi
done
ready=1

if hil_modprobe vfb vfb_enable=1 videomemorysize=4194304 && hil_wait_for 10 test -c $FB \
    && fbset -fb $FB -g 800 480 800 480 32; then
    hil_pass "vfb: $FB at 800x480x32"
else
    hil_fail "vfb: $FB at 800x480x32" "modprobe vfb or fbset failed"; ready=0
fi
for vtcon in /sys/class/vtconsole/vtcon*; do
    if grep -qi "frame buffer" "$vtcon/name" 2>/dev/null; then echo 0 >"$vtcon/bind"; fi
done
if hil_modprobe uinput && hil_modprobe evdev && hil_wait_for 10 test -c /dev/uinput; then
    hil_pass "uinput + evdev: /dev/uinput"
else
    hil_fail "uinput + evdev" "modprobe failed or no /dev/uinput"; ready=0
fi
if hil_modprobe snd-aloop && hil_wait_for 10 grep -q Loopback /proc/asound/cards; then
    hil_pass "snd-aloop: Loopback card"
else
    hil_fail "snd-aloop: Loopback card" "modprobe snd-aloop failed"; ready=0
fi

# play_checks: `kioskcam play` of an AAC .m4a through the loopback with arecord listening
# on its other side: 1000 Hz ± 10, 2 s ± 50 ms, no gap; then a card another program holds
# is refused at once (exit 69). Here, not in capture.sh, because the 50 ms are a bound
# for a guest with the machine to itself.
play_checks() {
MIC=hw:Loopback,1,0
TONE=$WORK/tone-1k.m4a
ffmpeg -nostdin -v error -y -f lavfi -i "sine=frequency=1000:sample_rate=48000:duration=2" -ac 1 -c:a aac "$TONE"
# arecord runs until the player has finished (raw, so stopping it loses no header):
# a fixed -d once ended before a slow guest's kioskcam had even started playing.
arecord -q -D "$MIC" -t raw -f S16_LE -r 48000 -c 1 "$WORK/played.raw" 2>"$WORK/arecord.err" &
ARECORD=$!
hil_wait_for 20 hil_pcm_running Loopback/pcm1c/sub0 || hil_log "arecord is not capturing after 20 s"
if timeout -k 5 60 "$KIOSKCAM" play "$TONE" --device "alsa:hw:Loopback,0,0" 2>"$WORK/play.log"; then
    hil_pass "play: exit 0 ($(grep -o 'played.*' "$WORK/play.log" | tail -n 1))"
else
    hil_fail "play: exit 0" "$(tail -n 2 "$WORK/play.log" | tr '\n' ' ')"
fi
sleep 0.5
kill -INT "$ARECORD" 2>/dev/null
wait "$ARECORD" 2>/dev/null
if result=$(python3 - "$WORK/played.raw" <<'EOF2'
import sys, struct
rate = 48000
data = open(sys.argv[1], "rb").read()
data = data[:len(data) // 2 * 2]
s = struct.unpack("<%dh" % (len(data) // 2), data)
loud = [i for i, v in enumerate(s) if abs(v) > 1000]
if not loud:
    print("no tone came back (%d samples)" % len(s)); sys.exit(1)
first, last = loud[0], loud[-1]
seconds = (last - first + 1) / rate
quiet = longest = 0
for v in s[first:last + 1]:
    quiet = 0 if abs(v) > 1000 else quiet + 1
    longest = max(longest, quiet)
tone = s[first:last + 1]
hz = sum(1 for a, b in zip(tone, tone[1:]) if (a < 0) != (b < 0)) / 2 / seconds
print("%.1f Hz, %.3f s, longest quiet run %d samples" % (hz, seconds, longest))
sys.exit(0 if abs(hz - 1000) <= 10 and abs(seconds - 2.0) <= 0.05 and longest < 24 else 1)
EOF2
); then
    hil_pass "play: captured back from $MIC: $result"
else
    hil_fail "play: captured back as 1000 Hz ± 10, 2 s ± 50 ms, no gap" "$result"
fi
# A device another program holds: a clear error at once (exit 69), not a wait.
python3 -c 'import sys, time
while True: sys.stdout.buffer.write(bytes(9600)); sys.stdout.flush()' | aplay -q -D hw:Loopback,0,0 -t raw -f S16_LE -r 48000 -c 1 &
HOLDER=$!
hil_wait_for 20 hil_pcm_running Loopback/pcm0p/sub0 || hil_log "the holder is not playing after 20 s"
started=$SECONDS
timeout -k 5 20 "$KIOSKCAM" play "$TONE" --device "alsa:hw:Loopback,0,0" 2>"$WORK/play-busy.log"
status=$?
if ((status == 69 && SECONDS - started <= 5)) && grep -q "busy" "$WORK/play-busy.log"; then
    hil_pass "play: a busy device is exit 69 at once ($(grep -o 'The playback device is busy[^;]*' "$WORK/play-busy.log"))"
else
    hil_fail "play: a busy device is exit 69 at once" "exit $status after $((SECONDS - started)) s: $(tail -n 1 "$WORK/play-busy.log")"
fi
kill "$HOLDER" 2>/dev/null
}

if ((ready)); then
    hil_xctest --timeout 700 --dir "$WORK" media KIOSKCAM_HIL_MEDIA=1 KIOSKCAM_HIL_FB=$FB \
        KIOSKCAM_HIL_PLAYBACK=hw:Loopback,0,0 KIOSKCAM_HIL_CAPTURE=hw:Loopback,1,0 \
        KIOSKCAM_HIL_MEDIA_WORK="$WORK/run" -- KioskApplianceTests.MediaViewHILTests
    grep -E "^HIL: media" "$HIL_XCTEST_LOG" 2>/dev/null
    grep -E "media: (first picture|stopped|playing)" "$WORK/run/daemon.log" 2>/dev/null | sed 's/^/HIL:   /'
    # The player on the card alone: a tone through and back, and a seek's restart of the
    # same PCM (the daemon has exited, so the loopback is free).
    hil_xctest --timeout 300 --dir "$WORK" alsa-player -- KioskALSATests.ALSAPlayerLoopbackTests
    play_checks
    # The microphone on the same card: periods 20 ± 5 ms apart by the driver's stamps, an
    # overrun recovered and counted. Here, not in capture.sh, because this scenario has the
    # machine to itself and a loaded guest's timer would bend those 5 ms.
    hil_xctest --dir "$WORK" alsa KIOSKCAM_TEST_ALSA_DEVICE=hw:Loopback,1,0 -- KioskALSATests.ALSAHardwareTests
fi

cp -r "$WORK" "$HIL_RESULTS/work" 2>/dev/null
hil_summary
