#!/usr/bin/env bash
# HIL scenario: the whole appliance (`kioskcam run`) with every device class at once,
# each a real kernel driver: vivid (camera), snd-aloop (microphone, a tone played into
# it), gpio-sim (record button line 0, snapshot button line 1, LED line 2), uinput +
# evdev (touch screen) and vfb (800x480 16 bpp screen). The test class
# KioskApplianceTests.ApplianceHILTests drives it (taps, GPIO presses, the control
# socket, SIGTERM) and checks the screen, the LED, the library and the metrics; then
# restarts it with event clips on ([events] mode = "both") and makes one clip through
# the control socket (event.start/event.stop), checking the clip, the event log,
# status, the screen's EVENT badge and the metrics (results in appliance/events/).
# The daemon runs as kioskcam.service runs it on a board: as the user kioskcam (made by
# the project's sysusers.d file), reaching every device only through its groups (video
# audio input render gpio), which udevd gives the device nodes with Debian's rules and
# the project's 70-kioskcam.rules; the test's other `kioskcam …` commands run as root,
# as a maintainer's `sudo kioskcam …` does.
# Run on the host with:
#   KIOSKCAM_BUILD_DIR=$PWD/.build/debug KIOSKCAM_HIL_TIMEOUT=600 scripts/hil/run-guest scripts/hil/scenarios/appliance.sh
# Needs the debug build with tests (swift build --build-tests) — the guest sees the host's files.
# Screenshots, the daemon log, the metrics file and the library listing are copied to
# the results folder (appliance/), for a person to look at.
set -uo pipefail   # no -e: every check runs and reports PASS or FAIL

# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "${HIL_LIB:-$(dirname "${BASH_SOURCE[0]}")/../lib.sh}"

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
BUILD=${KIOSKCAM_BUILD_DIR:-$ROOT/.build/debug}
KIOSKCAM=${KIOSKCAM_PROGRAM:-$BUILD/kioskcam}   # the shipped build when scripts/test names it
HIL_XCTEST=$BUILD/kioskcamPackageTests.xctest   # what hil_xctest runs
WORK=/tmp/hil-appliance
FB=/dev/fb0
MIC=hw:Loopback,1,0
mkdir -p "$WORK"
export HOME=$WORK   # nothing of the host's home is writable here

for needed in "$KIOSKCAM" "$HIL_XCTEST"; do
    if [[ ! -e $needed ]]; then
        hil_fail "build products" "$needed missing: run swift build --build-tests first"
        hil_summary
        exit 1
    fi
done
hil_log "guest kernel $(uname -r), scenario $(basename "$0")"
ready=1

# --- camera: vivid ----------------------------------------------------------------------
if hil_modprobe vivid n_devs=1 node_types=0x1 && hil_wait_for 10 test -c /dev/video0; then
    hil_pass "vivid: /dev/video0"
else
    hil_fail "vivid: /dev/video0" "modprobe vivid failed"; ready=0
fi

# --- microphone: snd-aloop, with a 1 kHz tone played into its other side ---------------
if hil_modprobe snd-aloop && hil_wait_for 10 grep -q Loopback /proc/asound/cards; then
    hil_pass "snd-aloop: Loopback card"
else
    hil_fail "snd-aloop: Loopback card" "modprobe snd-aloop failed"; ready=0
fi
# The loopback locks both sides to the first one's format: 48 kHz mono, as configured.
# Generated for as long as the scenario runs, so a slow guest never runs out of tone.
python3 -c '
import math, struct, sys
rate = 48000
second = struct.pack("<%dh" % rate, *[int(12000 * math.sin(2 * math.pi * 1000 * i / rate)) for i in range(rate)])
while True:
    sys.stdout.buffer.write(second)
' | aplay -q -D hw:Loopback,0,0 -t raw -f S16_LE -r 48000 -c 1 &
APLAY=$!

# --- GPIO: gpio-sim, one chip, one bank of 8 lines --------------------------------------
CHIP="" SIM=""
setup_gpio_sim() {
    # shellcheck disable=SC2119  # no named lines needed here
    hil_gpio_sim || return 1
    CHIP=$HIL_GPIO_CHIP
    SIM=$HIL_GPIO_SIM
    # The buttons start released: active low, pulled up.
    for n in 0 1; do echo pull-up >"$SIM/sim_gpio$n/pull"; done
}
setup_gpio_sim || ready=0

# --- touch: uinput + evdev (without udev nothing loads evdev) ---------------------------
if hil_modprobe uinput && hil_modprobe evdev && hil_wait_for 10 test -c /dev/uinput; then
    hil_pass "uinput + evdev: /dev/uinput"
else
    hil_fail "uinput + evdev" "modprobe failed or no /dev/uinput"; ready=0
fi

# --- screen: vfb at 800x480 16 bpp ------------------------------------------------------
# 4 MiB: room for 800x480 at 32 bpp with headroom; vfb starts at 640x480x8.
if hil_modprobe vfb vfb_enable=1 videomemorysize=4194304 && hil_wait_for 10 test -c $FB \
        && fbset -fb $FB -g 800 480 800 480 16; then
    hil_pass "vfb: $FB at $(fbset -fb $FB -s | awk '/geometry/ {print $2 "x" $3 "x" $6}')"
else
    hil_fail "vfb: $FB at 800x480x16" "modprobe vfb or fbset failed"; ready=0
fi
# The kernel console draws on vfb too (a blinking cursor): take it off, as an appliance does.
for vtcon in /sys/class/vtconsole/vtcon*; do
    if grep -qi "frame buffer" "$vtcon/name" 2>/dev/null; then echo 0 >"$vtcon/bind"; fi
done

# Foundation on Linux wakes its run loops (and so sees a child process exit) through a
# UDP socket pair on 127.0.0.1: without the loopback interface, Process.waitUntilExit
# never returns. The guest boots with no network at all; an appliance has lo up.
ip link set lo up 2>/dev/null || ifconfig lo 127.0.0.1 up

# --- the daemon's user and the device groups, as on a board ------------------------------
# The user and its groups from rootfs/usr/lib/sysusers.d/kioskcam.conf; udevd with the
# project's rule (GPIO chips to group gpio) over the devices above; and `kioskcam run`,
# started by the test (KIOSKCAM_PROGRAM, else the one beside its bundle: $KIOSKCAM), as
# that user (hil_daemon_as_service_user).
SERVICE_USER=0
if ((ready)) && hil_service_user "$ROOT/rootfs" \
        && hil_udevd "$ROOT/rootfs/usr/lib/udev/rules.d/70-kioskcam.rules" -- video4linux media sound gpio graphics input \
        && hil_daemon_as_service_user "$KIOSKCAM"; then
    SERVICE_USER=1
else
    ready=0
fi
# Each node the daemon opens belongs to its group with mode 0660 and gives "other"
# nothing, so only the group membership lets the daemon in. The touch screen's node
# comes later (the test makes it); the daemon finding it is the test's own check.
card=$(grep -l '^Loopback$' /sys/class/sound/card*/id 2>/dev/null | head -n 1 | sed 's,.*/card\([0-9]*\)/id,\1,')
nodes=("/dev/video0 video" "/dev/fb0 video" "/dev/${CHIP:-gpiochip?} gpio")
[[ -z $card ]] || nodes+=("/dev/snd/controlC$card audio" "/dev/snd/pcmC${card}D1c audio")
if ((SERVICE_USER)); then
    for entry in "${nodes[@]}"; do
        node=${entry% *} group=${entry#* }
        got=$(stat -c '%G %a' "$node" 2>&1)
        if [[ $got == "$group 660" ]]; then
            hil_pass "udev: $node is $group 0660 (the daemon's way in)"
        else
            hil_fail "udev: $node is $group 0660" "it is '$got'"; ready=0
        fi
    done
fi

# --- the appliance ----------------------------------------------------------------------
if ((ready)); then
    start=$SECONDS
    # Leave time to copy the results out before run-guest's own limit.
    limit=$(( ${HIL_GUEST_TIMEOUT:-600} > 120 ? ${HIL_GUEST_TIMEOUT:-600} - 60 : 60 ))
    # Progress lines and every check the test makes go to the console as they come (the
    # checks as this scenario's own PASS/FAIL lines), so a slow step shows where it is.
    hil_xctest --timeout "$limit" --dir "$WORK" appliance KIOSKCAM_HIL_APPLIANCE=1 \
        KIOSKCAM_HIL_GPIO_CHIP="$CHIP" KIOSKCAM_HIL_GPIO_SIM="$SIM" \
        KIOSKCAM_HIL_CAMERA=/dev/video0 KIOSKCAM_HIL_MIC=$MIC KIOSKCAM_HIL_FB=$FB \
        KIOSKCAM_HIL_APPLIANCE_WORK="$WORK/appliance" \
        -- KioskApplianceTests.ApplianceHILTests
    hil_log "ApplianceHILTests, every device at once, took $((SECONDS - start)) s"
    # A test killed half-way leaves its daemon behind: end it, and say so — every daemon
    # the test started, not only the first.
    while read -r pid; do
        if kill -0 "$pid" 2>/dev/null; then
            hil_fail "kioskcam run (pid $pid) has exited after the test" "still running; killed"
            kill -KILL "$pid"
            hil_wait_for 10 hil_gone "$pid"
        fi
    done < <(sed -n 's/.*started kioskcam run (pid \([0-9]*\)).*/\1/p' "$HIL_XCTEST_LOG")
    # Nothing of the daemon still holds a GPIO line.
    if [[ -n $CHIP ]] && gpioinfo "$CHIP" 2>&1 | grep -q '"kioskcam"'; then
        hil_fail "gpio: no line left held by \"kioskcam\" after the daemon exits" "$(gpioinfo "$CHIP" | grep kioskcam | tr '\n' ' ')"
    fi
    # Every daemon the tests started ran as the service does: user and group kioskcam,
    # the unit's groups, no capability, no new privileges (each start's own `id`).
    starts=$(grep -c . "$HIL_DAEMON_IDENTITY" 2>/dev/null || true)
    wrong=""
    while read -r line; do
        ok=1
        [[ $line =~ ^uid=[0-9]+\(kioskcam\)\ gid=[0-9]+\(kioskcam\)\  ]] || ok=0
        for group in ${HIL_SERVICE_GROUPS//,/ }; do [[ $line == *"($group)"* ]] || ok=0; done
        [[ $line == *"CapEff: 0000000000000000"* && $line == *"NoNewPrivs: 1"* ]] || ok=0
        ((ok)) || wrong=$line
    done <"$HIL_DAEMON_IDENTITY"
    if ((${starts:-0} > 0)) && [[ -z $wrong ]]; then
        hil_pass "all $starts daemon starts ran as user kioskcam with groups $HIL_SERVICE_GROUPS, no capabilities"
    else
        hil_fail "every daemon start ran as user kioskcam with the unit's groups" "${starts:-0} starts; ${wrong:-none recorded}"
    fi
    # What the daemon wrote, the library and its state, is kioskcam's (the root CLI's
    # own writes there are handed to the state folder's owner too).
    written=$(find "$WORK/appliance" \( -path '*/media/*' -o -path '*/state/*' \) -type f | wc -l)
    foreign=$(find "$WORK/appliance" \( -path '*/media/*' -o -path '*/state/*' \) ! -user kioskcam | head -n 3 | tr '\n' ' ')
    if ((written > 0)) && [[ -z $foreign ]]; then
        hil_pass "the library and the state ($written files) belong to kioskcam"
    else
        hil_fail "the library and the state belong to kioskcam" "$written files; not kioskcam's: ${foreign:-none}"
    fi
else
    hil_fail "KioskApplianceTests.ApplianceHILTests" "a device did not come up (see above); not run"
fi

kill "$APLAY" 2>/dev/null
[[ -z ${HIL_UDEVD:-} ]] || kill "$HIL_UDEVD" 2>/dev/null
# For a person: screenshots, the daemon log, the metrics, the library listing and the files.
mkdir -p "$HIL_RESULTS/appliance"
cp -r "$WORK/appliance/." "$HIL_RESULTS/appliance/" 2>/dev/null
[[ -z ${HIL_DAEMON_IDENTITY:-} ]] || cp "$HIL_DAEMON_IDENTITY" "$HIL_RESULTS/appliance/daemon-identity.txt" 2>/dev/null
cp "$HIL_RESULTS/xctest-appliance.log" "$HIL_RESULTS/appliance/" 2>/dev/null
hil_summary
