#!/usr/bin/env bash
# HIL scenario: kioskcam's framebuffer renderer against the kernel's vfb driver, at
# 800x480 16 bpp and then 480x800 32 bpp. Run on the host with:
#   KIOSKCAM_BUILD_DIR=$PWD/.build/debug KIOSKCAM_HIL_TIMEOUT=400 scripts/hil/run-guest scripts/hil/scenarios/screen.sh
# Needs the debug build with tests (swift build --build-tests) — the guest sees the host's files.
set -uo pipefail   # no -e: every check runs and reports PASS or FAIL

# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "${HIL_LIB:-$(dirname "${BASH_SOURCE[0]}")/../lib.sh}"

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
BUILD=${KIOSKCAM_BUILD_DIR:-$ROOT/.build/debug}
KIOSKCAM=${KIOSKCAM_PROGRAM:-$BUILD/kioskcam}   # the shipped build when scripts/test names it
# The screen broadcast as it ships (scripts/build-broadcast: release, its own FFmpeg) when
# scripts/test built it; otherwise this build's `kioskcam broadcast`.
if [[ -n ${KIOSKCAM_BROADCAST_PROGRAM:-} && -x $KIOSKCAM_BROADCAST_PROGRAM ]]; then
    BROADCAST=("$KIOSKCAM_BROADCAST_PROGRAM")
else
    BROADCAST=("$KIOSKCAM" broadcast)
fi
HIL_XCTEST=$BUILD/kioskcamPackageTests.xctest   # what hil_xctest runs
WORK=/tmp/hil-screen
FB=/dev/fb0
mkdir -p "$WORK"
: >"$WORK/kioskcam.toml"
export HOME=$WORK

for needed in "$KIOSKCAM" "$HIL_XCTEST"; do
    if [[ ! -e $needed ]]; then
        hil_fail "build products" "$needed missing: run swift build --build-tests first"
        hil_summary
        exit 1
    fi
done

# 4 MiB: room for 800x480 at 32 bpp (1.5 MiB) with headroom; vfb starts at 640x480x8.
if hil_modprobe vfb vfb_enable=1 videomemorysize=4194304 && hil_wait_for 10 test -c $FB; then
    hil_pass "vfb: $FB"
else
    hil_fail "vfb: $FB" "modprobe vfb failed"
    hil_summary
    exit 1
fi

# The 8 bpp palette mode vfb starts in is refused with a message that says how to fix it.
if out=$("$KIOSKCAM" screenshot --config "$WORK/kioskcam.toml" --framebuffer $FB -o "$WORK/8bpp.png" 2>&1); then
    hil_fail "8 bpp is refused" "screenshot succeeded: $out"
elif [[ $out == *"fbset"* ]]; then
    hil_pass "8 bpp is refused with a hint: $(printf '%s' "$out" | head -c 160)"
else
    hil_fail "8 bpp is refused with a hint" "$out"
fi

# The kernel console draws on vfb too (a blinking cursor at the top left) and would
# change pixels between the render and the read-back: take it off the framebuffer, as
# an appliance does (see docs/devices.md, "Screen").
for vtcon in /sys/class/vtconsole/vtcon*; do
    if grep -qi "frame buffer" "$vtcon/name" 2>/dev/null; then
        echo 0 >"$vtcon/bind" && hil_log "unbound the framebuffer console ($(cat "$vtcon/name"))"
    fi
done

# The layout name fbset's bitfields spell ("rgba 5/11,6/5,5/0,0/0": length/offset of R,G,B,A).
layout_from_fbset() {
    local rgba
    rgba=$(fbset -fb $FB -s | awk '/rgba/ {print $2}')
    case ${rgba%,*} in
        5/11,6/5,5/0) echo RGB565 ;;
        5/0,6/5,5/11) echo BGR565 ;;
        8/16,8/8,8/0) echo XRGB8888 ;;
        8/0,8/8,8/16) echo XBGR8888 ;;
        *) echo "unknown($rgba)" ;;
    esac
}

run_class() {  # LABEL EXPECT
    local started=$SECONDS
    hil_xctest --dir "$WORK" "fb-$1" KIOSKCAM_HIL_FB=$FB KIOSKCAM_HIL_FB_EXPECT="$2" HIL_RESULTS="$HIL_RESULTS" \
        -- KioskScreenTests.FramebufferHILTests
    hil_log "FramebufferHILTests at $1 took $((SECONDS - started)) s"
    grep -E "^framebuffer:" "$HIL_XCTEST_LOG" | sed 's/^/HIL: /'
}

# The broadcast runs under a real memory cgroup, as kioskcam-broadcast.service puts it
# (MemoryMax=50M): the guest's kernel enforces the cap the build machine cannot.
CGROUP=/sys/fs/cgroup
BROADCAST_CGROUP=$CGROUP/kioskcam-broadcast
memory_cgroup_ready=false
if { mountpoint -q $CGROUP || mount -t cgroup2 none $CGROUP; } \
    && grep -qw memory $CGROUP/cgroup.controllers \
    && echo +memory >$CGROUP/cgroup.subtree_control; then
    memory_cgroup_ready=true
else
    hil_fail "cgroup v2 memory controller in the guest" "could not mount cgroup2 on $CGROUP or enable +memory"
fi

# Runs a command in a fresh cgroup with memory.max = 50M (called in $(...), so the
# kernel's figures are read afterwards by cgroup_figures).
in_broadcast_cgroup() {
    rmdir "$BROADCAST_CGROUP" 2>/dev/null || true
    mkdir "$BROADCAST_CGROUP" && echo 50M >"$BROADCAST_CGROUP/memory.max" || return 1
    sh -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' sh "$BROADCAST_CGROUP" "$@"
}

# Sets CGROUP_PEAK_MIB and CGROUP_OOM_KILLS from the cgroup the last broadcast ran in.
cgroup_figures() {
    CGROUP_PEAK_MIB=$(awk '{ printf "%.1f", $1 / 1048576 }' "$BROADCAST_CGROUP/memory.peak" 2>/dev/null)
    CGROUP_OOM_KILLS=$(sed -n 's/^oom_kill //p' "$BROADCAST_CGROUP/memory.events" 2>/dev/null)
}

for mode in "800 480 16" "480 800 32"; do
    read -r w h bpp <<<"$mode"
    size=${w}x$h
    if fbset -fb $FB -g "$w" "$h" "$w" "$h" "$bpp"; then
        hil_log "fbset: $(fbset -fb $FB -s | grep -E 'geometry|rgba' | tr -s ' ' | tr '\n' ';')"
        # kioskcam must find the same layout from the driver's bitfields (vfb says BGR565 at 16 bpp).
        run_class "${size}x$bpp" "$size $(layout_from_fbset)"
        # With nothing holding the device: the picture the test left behind.
        if "$KIOSKCAM" screenshot --config "$WORK/kioskcam.toml" --framebuffer $FB -o "$WORK/after-$size.png" >/dev/null 2>"$WORK/after.err" \
            && [[ $(head -c 8 "$WORK/after-$size.png" | od -An -tx1 | tr -d ' \n') == 89504e470d0a1a0a ]] \
            && ffprobe -v error -show_entries stream=width,height -of csv=p=0 "$WORK/after-$size.png" | grep -qx "$w,$h"; then
            hil_pass "kioskcam screenshot with no renderer running: a ${w}x$h PNG"
        else
            hil_fail "kioskcam screenshot with no renderer running" "$(cat "$WORK/after.err")"
        fi
        # The screen broadcast of vfb into the library: a separate process reading what the
        # panel shows (16 bpp BGR565 goes through RGBA; 32 bpp by reference). Small for TCG.
        rm -rf "${WORK:?}/media"
        $memory_cgroup_ready || continue
        if out=$(in_broadcast_cgroup "${BROADCAST[@]}" --config "$WORK/kioskcam.toml" --framebuffer $FB --root "$WORK/media" --mic tone \
                --to library --fps 5 --duration 3s --quiet --status-file "$WORK/broadcast.json" 2>"$WORK/broadcast-$size.err") \
            && [[ $out == */screen/*.mp4 ]] \
            && [[ $(ffprobe -v error -show_entries stream=codec_name,width,height -of csv=p=0 "$out" | sort | tr '\n' ' ') == "aac h264,$w,$h " ]]; then
            hil_pass "$(basename "${BROADCAST[0]}")${BROADCAST[1]:+ ${BROADCAST[1]}} of vfb ${size}x$bpp: $out (h264 ${w}x$h + aac)"
        else
            hil_fail "kioskcam broadcast of vfb ${size}x$bpp" "$(tail -3 "$WORK/broadcast-$size.err") ${out:-}"
        fi
        cgroup_figures
        if [[ ${CGROUP_OOM_KILLS:-x} == 0 && -n ${CGROUP_PEAK_MIB:-} ]]; then
            hil_pass "broadcast ${size}x$bpp under memory.max=50M: peak $CGROUP_PEAK_MIB MiB charged, 0 OOM kills"
        else
            hil_fail "broadcast ${size}x$bpp under memory.max=50M" "oom_kill=${CGROUP_OOM_KILLS:-?} peak=${CGROUP_PEAK_MIB:-?} MiB"
        fi
    else
        hil_fail "fbset ${w}x${h}x$bpp" "fbset refused"
    fi
done

cp -r "$WORK" "$HIL_RESULTS/work" 2>/dev/null
hil_summary
