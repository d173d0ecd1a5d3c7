#!/usr/bin/env bash
# HIL scenario: touch screens through libevdev against the real kernel input stack —
# virtual touch screens of every protocol made with uinput, read back through evdev —
# and a pinch on one zooming vivid's picture in the running daemon.
# Run on the host with:
#   KIOSKCAM_BUILD_DIR=$PWD/.build/debug scripts/hil/run-guest scripts/hil/scenarios/touch.sh
# Needs the debug build with tests (swift build --build-tests) — the guest sees the host's files.
set -uo pipefail   # no -e: every check runs and reports PASS or FAIL

# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "${HIL_LIB:-$(dirname "${BASH_SOURCE[0]}")/../lib.sh}"

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
BUILD=${KIOSKCAM_BUILD_DIR:-$ROOT/.build/debug}
KIOSKCAM=${KIOSKCAM_PROGRAM:-$BUILD/kioskcam}   # the shipped build when scripts/test names it
WORK=/tmp/hil-touch
mkdir -p "$WORK"
export HOME=$WORK

# --- devices ----------------------------------------------------------------------------
# Without udev nothing loads evdev, and without it no /dev/input/event* appears.
if hil_modprobe uinput && hil_modprobe evdev && hil_wait_for 10 test -c /dev/uinput; then
    hil_pass "uinput + evdev loaded: /dev/uinput"
else
    hil_fail "uinput + evdev loaded" "modprobe failed or no /dev/uinput"
fi

# --- the wrapper's own tests against the real kernel ------------------------------------
# Every protocol, hotplug, SYN_DROPPED, and panels with quirks (no lift at all, a
# zero-size lift, MSC_TIMESTAMP-only frames) replayed with real timing.
hil_xctest --dir "$WORK" touch KIOSKCAM_HIL_UINPUT=1 -- KioskInputTests.TouchHILTests

# --- kioskcam input-monitor against a uinput device --------------------------------------
# A protocol B touch screen (0…4095 on both axes) made from Python, so the command is
# checked against a device it did not make itself: it must find it by discovery, say
# why, and print the taps in screen pixels.
make_device() {  # PROTOCOL_MARKER_FILE: creates the device, waits for "go", taps, waits for "end"
    python3 - "$1" <<'PY'
import fcntl, os, struct, sys, time
marker = sys.argv[1]
U = 0x55
def IOW(nr, size): return (1 << 30) | (size << 16) | (U << 8) | nr
def IOR(nr, size): return (2 << 30) | (size << 16) | (U << 8) | nr
UI_DEV_CREATE, UI_DEV_DESTROY = (U << 8) | 1, (U << 8) | 2
UI_DEV_SETUP, UI_ABS_SETUP = IOW(3, 92), IOW(4, 28)
UI_SET_EVBIT, UI_SET_KEYBIT, UI_SET_ABSBIT, UI_SET_PROPBIT = (IOW(n, 4) for n in (100, 101, 103, 110))
EV_SYN, EV_KEY, EV_ABS, BTN_TOUCH = 0, 1, 3, 0x14A
ABS_X, ABS_Y, SLOT, MX, MY, TID = 0, 1, 0x2F, 0x35, 0x36, 0x39
fd = os.open("/dev/uinput", os.O_WRONLY | os.O_NONBLOCK)
fcntl.ioctl(fd, UI_SET_EVBIT, EV_KEY); fcntl.ioctl(fd, UI_SET_KEYBIT, BTN_TOUCH)
fcntl.ioctl(fd, UI_SET_EVBIT, EV_ABS); fcntl.ioctl(fd, UI_SET_PROPBIT, 1)
for code, hi in ((ABS_X, 4095), (ABS_Y, 4095), (SLOT, 9), (MX, 4095), (MY, 4095), (TID, 65535)):
    fcntl.ioctl(fd, UI_SET_ABSBIT, code)
    fcntl.ioctl(fd, UI_ABS_SETUP, struct.pack("HH6i", code, 0, 0, 0, hi, 0, 0, 0))
fcntl.ioctl(fd, UI_DEV_SETUP, struct.pack("4H80sI", 6, 0x4b43, 2, 1, b"kioskcam-hil-events", 0))
fcntl.ioctl(fd, UI_DEV_CREATE)
sysname = fcntl.ioctl(fd, IOR(44, 64), bytes(64)).split(b"\0")[0].decode()
base = f"/sys/devices/virtual/input/{sysname}"
node = None
for _ in range(100):
    names = [n for n in os.listdir(base) if n.startswith("event")] if os.path.isdir(base) else []
    if names and os.path.exists(f"/dev/input/{names[0]}"):
        node = f"/dev/input/{names[0]}"; break
    time.sleep(0.1)
open(marker + ".node", "w").write(node or "")
def emit(*events):
    for t, c, v in events: os.write(fd, struct.pack("llHHi", 0, 0, t, c, v))
    os.write(fd, struct.pack("llHHi", 0, 0, EV_SYN, 0, 0))
for _ in range(600):
    if os.path.exists(marker + ".go"): break
    time.sleep(0.1)
# A tap at the panel's centre, then a drag to its bottom-right corner.
emit((EV_ABS, SLOT, 0), (EV_ABS, TID, 1), (EV_ABS, MX, 2048), (EV_ABS, MY, 2048), (EV_KEY, BTN_TOUCH, 1), (EV_ABS, ABS_X, 2048), (EV_ABS, ABS_Y, 2048))
emit((EV_ABS, TID, -1), (EV_KEY, BTN_TOUCH, 0))
emit((EV_ABS, TID, 2), (EV_ABS, MX, 0), (EV_ABS, MY, 0), (EV_KEY, BTN_TOUCH, 1), (EV_ABS, ABS_X, 0), (EV_ABS, ABS_Y, 0))
emit((EV_ABS, MX, 4095), (EV_ABS, MY, 4095), (EV_ABS, ABS_X, 4095), (EV_ABS, ABS_Y, 4095))
emit((EV_ABS, TID, -1), (EV_KEY, BTN_TOUCH, 0))
for _ in range(600):
    if os.path.exists(marker + ".end"): break
    time.sleep(0.1)
fcntl.ioctl(fd, UI_DEV_DESTROY)
PY
}

# has_lines N PATTERN FILE: the file has at least N lines matching (read anew on each call,
# so it can be polled with hil_wait_for).
has_lines() { (($(grep -c -- "$2" "$3" 2>/dev/null) >= $1)); }

check_events() {  # NAME kioskcam-events-arguments... (@NODE@ is the device's node)
    local name=$1 marker=$WORK/events-$1 out=$WORK/events-$1.out
    shift
    rm -f "$marker".*
    make_device "$marker" &
    local maker=$!
    hil_wait_for 20 test -s "$marker.node"
    local node
    node=$(cat "$marker.node" 2>/dev/null)
    local args=("$@")
    args=("${args[@]//@NODE@/$node}")
    "$KIOSKCAM" input-monitor "${args[@]}" >"$out" 2>"$out.err" &
    local events=$!
    hil_wait_for 20 grep -q "touch: using" "$out"
    touch "$marker.go"
    # Waits only (the checks below say what came): the last release, then all five lines.
    hil_wait_for 20 grep -q "release 799 479" "$out"
    hil_wait_for 20 has_lines 5 ' touch ' "$out"
    # Ctrl-C is SIGINT, and the command must exit 0.
    kill -INT "$events" 2>/dev/null
    if ! hil_wait_for 10 sh -c "! kill -0 $events"; then kill -KILL "$events" 2>/dev/null; fi
    wait "$events"
    local rc=$?
    touch "$marker.end"
    wait "$maker"
    hil_log "kioskcam input-monitor ${args[*]:-(no arguments: discovery)}:"
    sed 's/^/HIL:   /' "$out" | head -n 20

    if ((rc == 0)); then hil_pass "events ($name): Ctrl-C exits 0"; else hil_fail "events ($name): Ctrl-C exits 0" "exit $rc: $(tail -n 2 "$out.err" | tr '\n' ' ')"; fi
    if grep -q "touch: using $node \"kioskcam-hil-events\": multi-touch B" "$out"; then
        hil_pass "events ($name): says it uses $node and why"
    else
        hil_fail "events ($name): says it uses $node and why" "$(grep 'touch:' "$out" | head -n 3 | tr '\n' ' ')"
    fi
    local got
    got=$(grep -E "^[0-9]+\.[0-9]{3} $node touch " "$out" | cut -d' ' -f3- | tr '\n' ';')
    if [[ $got == "touch press 400 240 slot 0;touch release 400 240 slot 0;touch press 0 0 slot 0;touch move 799 479 slot 0;touch release 799 479 slot 0;" ]]; then
        hil_pass "events ($name): taps decoded to screen pixels (800x480)"
    else
        hil_fail "events ($name): taps decoded to screen pixels" "got '$got'"
    fi
}

if [[ -x $KIOSKCAM ]]; then
    check_events discovery
    # Every other event node (the guest's PS/2 keyboard, its power button, …) is named
    # with the reason it was passed over. No other node would leave nothing to check.
    touch_node=$(cat "$WORK/events-discovery.node" 2>/dev/null)
    others=$(find /dev/input -maxdepth 1 -name 'event*' ! -path "$touch_node" | sort)
    unnamed=$(for node in $others; do grep -q "not using $node " "$WORK/events-discovery.out" || echo "$node"; done)
    if [[ -z $others ]]; then
        hil_fail "events (discovery): lists the input devices it passed over" "no other input device in the guest to pass over"
    elif [[ -z $unnamed ]]; then
        hil_pass "events (discovery): names each input device it passed over (${others//$'\n'/ })"
    else
        hil_fail "events (discovery): names each input device it passed over" "not named: ${unnamed//$'\n'/ }"
    fi
    check_events device-raw --device @NODE@ --raw
    if grep -qE "^[0-9]+\.[0-9]{3} /dev/input/event[0-9]+ raw EV_ABS ABS_MT_POSITION_X 2048$" "$WORK/events-device-raw.out"; then
        hil_pass "events --raw: prints raw evdev events"
    else
        hil_fail "events --raw: prints raw evdev events" "$(grep ' raw ' "$WORK/events-device-raw.out" | head -n 2 | tr '\n' ' ')"
    fi
    # A device that is not a touch screen is refused with the reason.
    if out=$("$KIOSKCAM" events --device /dev/null 2>&1); then
        hil_fail "events --device /dev/null fails" "exit 0: $out"
    elif grep -q "not an evdev input device" <<<"$out"; then
        hil_pass "events --device /dev/null: $(tail -n 1 <<<"$out" | cut -c1-100)"
    else
        hil_fail "events --device /dev/null names the problem" "$out"
    fi
else
    hil_fail "kioskcam binary" "$KIOSKCAM missing: run swift build first"
fi

# --- pinch to zoom: two fingers on a uinput screen zoom vivid's picture -----------------
# The daemon with vivid (no zoom control: the digital zoom), a memory screen and a
# uinput multi-touch screen; the still after the pinch must be the centre crop, and a
# double tap goes back to 1×.
# Foundation's Process (the test starts the daemon and ffmpeg) needs the loopback
# interface up, as appliance.sh brings it up: without it the test hangs in Process.run.
ip link set lo up 2>/dev/null || ifconfig lo 127.0.0.1 up
if hil_modprobe vivid n_devs=1 node_types=0x1 && hil_wait_for 10 test -c /dev/video0; then
    hil_xctest --timeout 600 --dir "$WORK" pinch KIOSKCAM_HIL_APPLIANCE=1 KIOSKCAM_HIL_CAMERA=/dev/video0 \
        -- KioskApplianceTests.ApplianceHILTests/testPinchOnTheTouchScreenZoomsVividsPicture
    # The Sound pill: a sound-only recording from the built-in tone, its waveform on the
    # screen, its Stop; the .m4a is probed.
    hil_xctest --timeout 600 --dir "$WORK" sound KIOSKCAM_HIL_APPLIANCE=1 KIOSKCAM_HIL_CAMERA=/dev/video0 \
        -- KioskApplianceTests.ApplianceHILTests/testTheScreensSoundButtonRecordsSoundOnly
else
    hil_fail "vivid for the pinch test: /dev/video0" "modprobe vivid failed"
fi

cp -r "$WORK" "$HIL_RESULTS/work" 2>/dev/null
hil_summary
