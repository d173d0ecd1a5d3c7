#!/usr/bin/env bash
# HIL smoke scenario: every device class KioskCam uses appears in the guest and answers
# through its real kernel interface (camera, microphone, framebuffer, touch, GPIO).
# Run on the host with:  scripts/hil/run-guest scripts/hil/scenarios/devices.sh
set -uo pipefail   # no -e: every check runs and reports PASS or FAIL

# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "${HIL_LIB:-$(dirname "${BASH_SOURCE[0]}")/../lib.sh}"

WORK=/tmp/hil-devices
mkdir -p "$WORK"

# --- camera: vivid ----------------------------------------------------------------------
check_camera() {
    if ! hil_modprobe vivid n_devs=1 node_types=0x1; then
        hil_fail "camera: modprobe vivid" "modprobe failed"
        return
    fi
    hil_pass "camera: modprobe vivid"
    if ! hil_wait_for 10 test -c /dev/video0; then
        hil_fail "camera: /dev/video0" "no character device after 10 s"
        return
    fi
    hil_pass "camera: /dev/video0"
    local all
    all=$(v4l2-ctl -d /dev/video0 --all 2>&1)
    if grep -Eq 'Driver name[[:space:]]*: vivid' <<<"$all"; then
        hil_pass "camera: v4l2-ctl --all reports driver vivid"
    else
        hil_fail "camera: v4l2-ctl --all reports driver vivid" "$(head -n 3 <<<"$all" | tr '\n' ' ')"
    fi
    # vivid's default input is a webcam with discrete sizes (320x180, 640x360, 640x480,
    # ...): ask for the smallest and stream what the driver settled on.
    local frames=$WORK/frames.yuyv fmt sizeimage size
    v4l2-ctl -d /dev/video0 --set-fmt-video=width=320,height=180,pixelformat=YUYV 2>/dev/null
    fmt=$(v4l2-ctl -d /dev/video0 --get-fmt-video 2>&1)
    sizeimage=$(awk -F: '/Size Image/ {gsub(/ /, "", $2); print $2}' <<<"$fmt")
    if ! grep -q "Pixel Format *: 'YUYV'" <<<"$fmt" || ! grep -q 'Width/Height *: 320/180' <<<"$fmt"; then
        hil_fail "camera: set format 320x180 YUYV" "$(grep -E 'Width|Pixel' <<<"$fmt" | tr -s ' \t\n' ' ')"
        return
    fi
    hil_pass "camera: set format 320x180 YUYV"
    v4l2-ctl -d /dev/video0 --stream-mmap --stream-count=5 --stream-to="$frames" >/dev/null 2>&1
    size=$(stat -c %s "$frames" 2>/dev/null || echo 0)
    if ((size > 0 && size == 5 * ${sizeimage:-0})); then
        hil_pass "camera: streamed 5 frames (mmap), $size bytes"
    else
        hil_fail "camera: streamed 5 frames (mmap)" "got $size bytes, expected 5 × ${sizeimage:-?}"
    fi
}

# --- microphone: snd-aloop --------------------------------------------------------------
check_microphone() {
    if ! hil_modprobe snd-aloop; then
        hil_fail "mic: modprobe snd-aloop" "modprobe failed"
        return
    fi
    hil_pass "mic: modprobe snd-aloop"
    if hil_wait_for 10 grep -q Loopback /proc/asound/cards; then
        hil_pass "mic: /proc/asound/cards lists Loopback"
    else
        hil_fail "mic: /proc/asound/cards lists Loopback" "$(tr '\n' ' ' </proc/asound/cards)"
        return
    fi
    if arecord -l 2>&1 | grep -q 'Loopback'; then
        hil_pass "mic: arecord -l lists Loopback"
    else
        hil_fail "mic: arecord -l lists Loopback" "$(arecord -l 2>&1 | head -n 2 | tr '\n' ' ')"
    fi

    # 1.5 s of a 440 Hz tone at half scale, S16_LE stereo 48 kHz.
    local tone=$WORK/tone.wav capture=$WORK/capture.wav
    python3 - "$tone" <<'EOF'
import math, struct, sys, wave
rate, secs = 48000, 1.5
with wave.open(sys.argv[1], "wb") as w:
    w.setnchannels(2); w.setsampwidth(2); w.setframerate(rate)
    frames = bytearray()
    for i in range(int(rate * secs)):
        v = int(16000 * math.sin(2 * math.pi * 440 * i / rate))
        frames += struct.pack("<hh", v, v)
    w.writeframes(bytes(frames))
EOF
    # Capture first (it fixes the loopback's format), then play into the other end.
    arecord -q -D hw:Loopback,1,0 -f S16_LE -r 48000 -c 2 -d 3 "$capture" \
        2>"$WORK/arecord.err" &
    local rec=$!
    hil_wait_for 10 grep -q 'state: RUNNING' /proc/asound/Loopback/pcm1c/sub0/status
    if aplay -q -D hw:Loopback,0,0 "$tone" 2>"$WORK/aplay.err"; then
        hil_pass "mic: aplay into hw:Loopback,0,0"
    else
        hil_fail "mic: aplay into hw:Loopback,0,0" "$(tail -n 1 "$WORK/aplay.err")"
    fi
    wait "$rec"
    local level
    level=$(python3 - "$capture" <<'EOF'
import array, math, sys, wave
with wave.open(sys.argv[1], "rb") as w:
    data = array.array("h", w.readframes(w.getnframes()))
peak = max((abs(s) for s in data), default=0)
rms = math.sqrt(sum(s * s for s in data) / len(data)) if data else 0.0
print(f"{peak} {rms:.0f} {len(data) // 2}")
EOF
    ) || level="0 0 0"
    local peak rms nframes
    read -r peak rms nframes <<<"$level"
    if ((peak > 8000)); then
        hil_pass "mic: capture from hw:Loopback,1,0 is non-silent (peak $peak, rms $rms, $nframes frames)"
    else
        hil_fail "mic: capture from hw:Loopback,1,0 is non-silent" \
            "peak $peak rms $rms over $nframes frames; arecord: $(tail -n 1 "$WORK/arecord.err")"
    fi
}

# --- framebuffer: vfb -------------------------------------------------------------------
check_framebuffer() {
    # 4 MiB: room for 800x480 and 480x800 at 32 bpp (1.5 MB each).
    if ! hil_modprobe vfb vfb_enable=1 videomemorysize=4194304; then
        hil_fail "fb: modprobe vfb" "modprobe failed"
        return
    fi
    hil_pass "fb: modprobe vfb"
    if ! hil_wait_for 10 test -c /dev/fb0; then
        hil_fail "fb: /dev/fb0" "no character device after 10 s"
        return
    fi
    hil_pass "fb: /dev/fb0"
    local w h bpp got
    for mode in "800 480 16" "480 800 32"; do
        read -r w h bpp <<<"$mode"
        fbset -fb /dev/fb0 -g "$w" "$h" "$w" "$h" "$bpp" 2>"$WORK/fbset.err"
        got=$(fbset -fb /dev/fb0 -s 2>&1 | awk '$1 == "geometry" {print $2, $3, $6}')
        if [[ $got == "$w $h $bpp" ]]; then
            hil_pass "fb: fbset ${w}x${h}x${bpp}"
        else
            hil_fail "fb: fbset ${w}x${h}x${bpp}" "now '$got'; $(tail -n 1 "$WORK/fbset.err")"
        fi
    done
    # The framebuffer takes a whole frame of pixels at the current mode.
    if dd if=/dev/zero of=/dev/fb0 bs=$((480 * 800 * 4)) count=1 2>/dev/null; then
        hil_pass "fb: wrote one 480x800x32 frame to /dev/fb0"
    else
        hil_fail "fb: wrote one 480x800x32 frame to /dev/fb0" "dd failed"
    fi
}

# --- touch: uinput ----------------------------------------------------------------------
check_touch() {
    if ! hil_modprobe uinput; then
        hil_fail "touch: modprobe uinput" "modprobe failed"
        return
    fi
    hil_pass "touch: modprobe uinput"
    if ! hil_wait_for 10 test -c /dev/uinput; then
        hil_fail "touch: /dev/uinput" "no character device after 10 s"
        return
    fi
    hil_pass "touch: /dev/uinput"
    # Without udev nothing loads evdev, and without it no /dev/input/event* appears.
    if ! hil_modprobe evdev; then
        hil_fail "touch: modprobe evdev" "modprobe failed"
        return
    fi
    # Create a multi-touch (protocol B) device, inject one touch, read it back via evdev.
    local out
    if out=$(python3 - 2>&1 <<'EOF'
import fcntl, os, select, struct, time
U = 0x55
def IOW(nr, size): return (1 << 30) | (size << 16) | (U << 8) | nr
def IOR(nr, size): return (2 << 30) | (size << 16) | (U << 8) | nr
UI_DEV_CREATE, UI_DEV_DESTROY = (U << 8) | 1, (U << 8) | 2
UI_DEV_SETUP, UI_ABS_SETUP = IOW(3, 92), IOW(4, 28)
UI_SET_EVBIT, UI_SET_KEYBIT, UI_SET_ABSBIT, UI_SET_PROPBIT = (IOW(n, 4) for n in (100, 101, 103, 110))
EV_SYN, EV_KEY, EV_ABS = 0, 1, 3
BTN_TOUCH, INPUT_PROP_DIRECT = 0x14A, 1
ABS_X, ABS_Y, ABS_MT_SLOT, ABS_MT_X, ABS_MT_Y, ABS_MT_TID = 0, 1, 0x2F, 0x35, 0x36, 0x39
fd = os.open("/dev/uinput", os.O_WRONLY | os.O_NONBLOCK)
fcntl.ioctl(fd, UI_SET_EVBIT, EV_KEY); fcntl.ioctl(fd, UI_SET_KEYBIT, BTN_TOUCH)
fcntl.ioctl(fd, UI_SET_EVBIT, EV_ABS); fcntl.ioctl(fd, UI_SET_PROPBIT, INPUT_PROP_DIRECT)
for code, hi in ((ABS_X, 799), (ABS_Y, 479), (ABS_MT_SLOT, 4), (ABS_MT_X, 799), (ABS_MT_Y, 479), (ABS_MT_TID, 65535)):
    fcntl.ioctl(fd, UI_SET_ABSBIT, code)
    fcntl.ioctl(fd, UI_ABS_SETUP, struct.pack("HH6i", code, 0, 0, 0, hi, 0, 0, 0))
fcntl.ioctl(fd, UI_DEV_SETUP, struct.pack("4H80sI", 3, 0x1234, 0x5678, 1, b"kioskcam-hil-touch", 0))
fcntl.ioctl(fd, UI_DEV_CREATE)
sysname = fcntl.ioctl(fd, IOR(44, 64), bytes(64)).split(b"\0")[0].decode()
base = f"/sys/devices/virtual/input/{sysname}"
ev = None
for _ in range(100):
    names = [n for n in os.listdir(base) if n.startswith("event")] if os.path.isdir(base) else []
    if names and os.path.exists(f"/dev/input/{names[0]}"):
        ev = f"/dev/input/{names[0]}"; break
    time.sleep(0.1)
assert ev, f"no event node for {sysname}"
rd = os.open(ev, os.O_RDONLY | os.O_NONBLOCK)
def emit(t, c, v): os.write(fd, struct.pack("llHHi", 0, 0, t, c, v))
for t, c, v in ((EV_ABS, ABS_MT_SLOT, 0), (EV_ABS, ABS_MT_TID, 1), (EV_ABS, ABS_MT_X, 123),
                (EV_ABS, ABS_MT_Y, 321), (EV_KEY, BTN_TOUCH, 1), (EV_ABS, ABS_X, 123),
                (EV_ABS, ABS_Y, 321), (EV_SYN, 0, 0)):
    emit(t, c, v)
seen = []
deadline = time.time() + 5
while time.time() < deadline and (EV_SYN, 0, 0) not in seen:
    if select.select([rd], [], [], 0.5)[0]:
        data = os.read(rd, 24 * 64)
        seen += [struct.unpack("llHHi", data[i:i + 24])[2:] for i in range(0, len(data), 24)]
fcntl.ioctl(fd, UI_DEV_DESTROY)
assert (EV_ABS, ABS_MT_X, 123) in seen and (EV_KEY, BTN_TOUCH, 1) in seen, f"read back {seen}"
print(f"{ev} ({sysname}) delivered {len(seen)} events")
EOF
    ); then
        hil_pass "touch: uinput multi-touch device, touch read back from $(tail -n 1 <<<"$out")"
    else
        hil_fail "touch: uinput multi-touch device" "$(tail -n 1 <<<"$out")"
    fi
}

# --- GPIO: gpio-sim (out-of-tree module) ------------------------------------------------
check_gpio() {
    hil_modprobe configfs 2>/dev/null || true   # may be built in
    if ! mountpoint -q /sys/kernel/config; then
        mount -t configfs configfs /sys/kernel/config || {
            hil_fail "gpio: mount configfs" "mount failed"
            return
        }
    fi
    if [[ -z ${HIL_GPIO_SIM_KO:-} || ! -f $HIL_GPIO_SIM_KO ]]; then
        hil_fail "gpio: insmod gpio-sim.ko" "HIL_GPIO_SIM_KO='${HIL_GPIO_SIM_KO:-}' not found"
        return
    fi
    if ! insmod "$HIL_GPIO_SIM_KO" 2>"$WORK/insmod.err"; then
        hil_fail "gpio: insmod gpio-sim.ko" "$(tail -n 1 "$WORK/insmod.err")"
        return
    fi
    hil_pass "gpio: insmod gpio-sim.ko"
    local cfg=/sys/kernel/config/gpio-sim/chip0
    if ! { mkdir "$cfg" && mkdir "$cfg/bank0" && echo 8 >"$cfg/bank0/num_lines" \
            && echo 1 >"$cfg/live"; } 2>"$WORK/gpio-cfg.err"; then
        hil_fail "gpio: configfs chip0/bank0 live" "$(tail -n 1 "$WORK/gpio-cfg.err")"
        return
    fi
    local dev chip
    dev=$(cat "$cfg/dev_name")
    chip=$(cat "$cfg/bank0/chip_name")
    if [[ -n $chip ]] && hil_wait_for 10 test -c "/dev/$chip"; then
        hil_pass "gpio: configfs chip0/bank0 live → /dev/$chip ($(gpiodetect | grep "^$chip" || true))"
    else
        hil_fail "gpio: configfs chip0/bank0 live" "no /dev/$chip (dev_name '$dev')"
        return
    fi
    local sim=/sys/devices/platform/$dev/$chip

    # gpioget follows the simulated pull.
    local up down
    echo pull-up >"$sim/sim_gpio1/pull"
    up=$(gpioget "$chip" 1 2>&1)
    echo pull-down >"$sim/sim_gpio1/pull"
    down=$(gpioget "$chip" 1 2>&1)
    if [[ $up == 1 && $down == 0 ]]; then
        hil_pass "gpio: gpioget reads pull-up as 1, pull-down as 0"
    else
        hil_fail "gpio: gpioget reads pull-up as 1, pull-down as 0" "got '$up' and '$down'"
    fi

    # gpioset drives an output the simulator sees (an LED line).
    local seen=""
    for v in 1 0; do
        gpioset --mode=signal "$chip" "2=$v" &
        local setter=$!
        if hil_wait_for 5 grep -qx "$v" "$sim/sim_gpio2/value"; then seen+=$v; fi
        kill "$setter" 2>/dev/null
        wait "$setter" 2>/dev/null
    done
    if [[ $seen == 10 ]]; then
        hil_pass "gpio: gpioset 1 then 0 seen on sim_gpio2/value"
    else
        hil_fail "gpio: gpioset 1 then 0 seen on sim_gpio2/value" "saw '$seen'"
    fi

    # gpiomon sees every edge (a button): up, down, up, down → 4 events.
    local events=$WORK/gpiomon.txt
    timeout 30 gpiomon --num-events=4 --format='%e %o' "$chip" 0 >"$events" 2>&1 &
    local mon=$!
    if ! hil_wait_for 10 sh -c "gpioinfo $chip | grep -E 'line +0:.*\[used'"; then
        hil_log "gpiomon did not show as a user of line 0 within 10 s"
    fi
    for pull in pull-up pull-down pull-up pull-down; do
        echo "$pull" >"$sim/sim_gpio0/pull"
        sleep 0.2
    done
    wait "$mon"
    local got
    got=$(tr '\n' ' ' <"$events")
    if [[ $got == "1 0 0 0 1 0 0 0 " ]]; then
        hil_pass "gpio: gpiomon saw 4 edges (rising, falling, rising, falling)"
    else
        hil_fail "gpio: gpiomon saw 4 edges" "got '$got'"
    fi
}

hil_log "guest kernel $(uname -r), scenario $(basename "$0")"
check_camera
check_microphone
check_framebuffer
check_touch
check_gpio
hil_summary
