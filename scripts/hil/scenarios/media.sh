#!/usr/bin/env bash
# HIL scenario: the touch screen's Library (issue 14) with real drivers — vfb (screen),
# uinput + evdev (touch), snd-aloop (the sound card the player plays through, and the
# other side of it to record what was played). Taps open the Library, a day and a
# recording; screenshots show each page; the recording's clicks come back once a second.
# Timing is measured from outside the player: the panel read every 4 ms, the loopback's
# other side captured with monotonic stamps; picture − sound and tap → first picture are
# printed against issue 14's targets (40 ms, 300 ms) and gated at 150 ms and 1 s, which a
# slow TCG guest still meets. Run it alone: the figures mean most with the machine to itself.
# Run on the host with:
#   KIOSKCAM_BUILD_DIR=$PWD/.build/debug KIOSKCAM_HIL_TIMEOUT=900 scripts/hil/run-guest scripts/hil/scenarios/media.sh
# Needs the debug build with tests (swift build --build-tests) — the guest sees the host's files.
set -uo pipefail   # no -e: every check runs and reports PASS or FAIL

# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "${HIL_LIB:-$(dirname "${BASH_SOURCE[0]}")/../lib.sh}"

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
BUILD=${KIOSKCAM_BUILD_DIR:-$ROOT/.build/debug}
KIOSKCAM=${KIOSKCAM:-$BUILD/kioskcam}
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

if ((ready)); then
    hil_xctest --timeout 700 --dir "$WORK" media KIOSKCAM_HIL_MEDIA=1 KIOSKCAM_HIL_FB=$FB \
        KIOSKCAM_HIL_PLAYBACK=hw:Loopback,0,0 KIOSKCAM_HIL_CAPTURE=hw:Loopback,1,0 \
        KIOSKCAM_HIL_MEDIA_WORK="$WORK/run" -- KioskApplianceTests.MediaViewHILTests
    grep -E "^HIL: media" "$HIL_XCTEST_LOG" 2>/dev/null
    grep -E "media: (first picture|stopped|playing)" "$WORK/run/daemon.log" 2>/dev/null | sed 's/^/HIL:   /'
    # The player on the card alone: a tone through and back, and a seek's restart of the
    # same PCM (the daemon has exited, so the loopback is free).
    hil_xctest --timeout 300 --dir "$WORK" alsa-player -- KioskALSATests.ALSAPlayerLoopbackTests
    # The microphone on the same card: periods 20 ± 5 ms apart by the driver's stamps, an
    # overrun recovered and counted. Here, not in capture.sh, because this scenario has the
    # machine to itself and a loaded guest's timer would bend those 5 ms.
    hil_xctest --dir "$WORK" alsa KIOSKCAM_TEST_ALSA_DEVICE=hw:Loopback,1,0 -- KioskALSATests.ALSAHardwareTests
fi

cp -r "$WORK" "$HIL_RESULTS/work" 2>/dev/null
hil_summary
