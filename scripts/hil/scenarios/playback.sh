#!/usr/bin/env bash
# HIL scenario: issue 14's playback target against the real job. A 1280x720 recording
# with sound (at a frame rate TCG keeps up with, see FPS) is played (a) by
# `kioskcam play --screen` onto vfb's /dev/fb0 at 800x480 and the snd-aloop card, and (b) by
#   ffmpeg -re -i FILE -pix_fmt rgb565le -s 800x450 -f fbdev /dev/fb0 -f alsa hw:Loopback,0,0
# (-pix_fmt rgba, and the panel at 32 bpp, where vfb's 16 bpp is not ffmpeg's RGB565)
# alternately, several times in one run. Each player's CPU (user + system of the process
# and all its threads) comes from /proc/PID/stat: a subshell waits for the player and
# reads its own cutime + cstime. Passes when kioskcam's total is <= ffmpeg's total
# times MARGIN (1.0: no margin).
# Run on the host with (a release build: the target is about the shipped binary):
#   swift build -c release --product kioskcam
#   KIOSKCAM_BUILD_DIR=$PWD/.build/release KIOSKCAM_HIL_TIMEOUT=1200 scripts/hil/run-guest scripts/hil/scenarios/playback.sh
# (run-guest passes only KIOSKCAM_BUILD_DIR into the guest; the length, frame rate,
# rounds and margin are set below.)
set -uo pipefail   # no -e: every check runs and reports PASS or FAIL

# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "${HIL_LIB:-$(dirname "${BASH_SOURCE[0]}")/../lib.sh}"

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
BUILD=${KIOSKCAM_BUILD_DIR:-$ROOT/.build/release}
KIOSKCAM=${KIOSKCAM_PROGRAM:-$BUILD/kioskcam}
LENGTH=10     # seconds of recording
# Frames per second of the 1280x720 recording. Issue 14 says 30; under TCG on this
# 2-core machine (shared with builds) neither player decodes and scales 720p fast enough
# (measured: at 30 fps ffmpeg ran 6 s in 15-18 s, ours dropped 178 of 180 pictures; at 6
# fps still 45 of 48 dropped), and a player that drops pictures is not doing the same
# work as one that shows them all. At 2 fps both can show every picture in real time, so
# the CPU ratio compares the same work: per picture the same decode + scale + present
# as at 30 fps; the per-second sound work and each process's start weigh fifteen times
# more than at 30. (Measured 2026-11-24: our player still drops 9 of 20 here, 0 of 20 with
# alsa:null — its sound clock moved in 0.5 s steps on a paced card, which alone makes
# every other 2 fps picture late; the avsync branch's played-count fix addresses it.)
FPS=2
ROUNDS=3      # alternations of the two players
MARGIN=1.0    # the ratio to pass: the target itself, no allowance for noise
WORK=/tmp/hil-playback
FB=/dev/fb0
CARD=hw:Loopback,0,0
FILE=$WORK/101500.mp4
mkdir -p "$WORK"
export HOME=$WORK

if [[ ! -x $KIOSKCAM ]]; then
    hil_fail "build products" "$KIOSKCAM missing: run swift build -c release --product kioskcam first"
    hil_summary
    exit 1
fi
case $(dirname "$KIOSKCAM") in
    */release) hil_log "measuring $KIOSKCAM" ;;
    *) hil_log "measuring $KIOSKCAM — not a release build: the ratio says little about the shipped binary" ;;
esac
if devices=$(ffmpeg -hide_banner -devices 2>/dev/null) && grep -qE '^ *D?E +fbdev ' <<<"$devices" \
    && grep -qE '^ *D?E +alsa ' <<<"$devices"; then
    hil_pass "ffmpeg has the fbdev and alsa outputs"
else
    hil_fail "ffmpeg has the fbdev and alsa outputs" "ffmpeg -devices lists no fbdev or alsa muxer: run scripts/install-deps --test"
    hil_summary
    exit 1
fi

ready=1
if hil_modprobe vfb vfb_enable=1 videomemorysize=4194304 && hil_wait_for 10 test -c $FB; then
    hil_pass "vfb: $FB"
else
    hil_fail "vfb: $FB" "modprobe vfb failed"; ready=0
fi
for vtcon in /sys/class/vtconsole/vtcon*; do
    if grep -qi "frame buffer" "$vtcon/name" 2>/dev/null; then echo 0 >"$vtcon/bind"; fi
done
if hil_modprobe snd-aloop && hil_wait_for 10 grep -q Loopback /proc/asound/cards; then
    hil_pass "snd-aloop: Loopback card"
else
    hil_fail "snd-aloop: Loopback card" "modprobe snd-aloop failed"; ready=0
fi
if ((ready)); then
    if ffmpeg -v error -nostdin -y -f lavfi -i "testsrc2=size=1280x720:rate=$FPS:duration=$LENGTH" \
        -f lavfi -i "sine=frequency=1000:duration=$LENGTH:sample_rate=48000" -c:v libx264 -preset veryfast -g $FPS \
        -pix_fmt yuv420p -c:a aac -ac 2 "$FILE" 2>"$WORK/make.log"; then
        hil_pass "recording: 1280x720 $FPS fps H.264 + AAC, $LENGTH s"
    else
        hil_fail "recording: 1280x720 $FPS fps H.264 + AAC" "$(tail -n 1 "$WORK/make.log")"; ready=0
    fi
fi
# The panel: 800x480 RGB565 as issue 14 says, if ffmpeg's fbdev output takes vfb's 16 bpp.
# vfb's 16 bpp is 565 with red in the low bits (fbset: rgba 5/0,6/5,5/11), which
# ffmpeg's fbdev maps to no pixel format; then both players draw on 800x480 at 32 bpp
# (vfb's is R, G, B, A from the low byte: ffmpeg's rgba), and the log says so.
# fb_pixels: ffmpeg's name for the framebuffer's layout as fbset reports it.
fb_pixels() {
    case $(fbset -fb $FB -s | awk '/rgba/ {print $2}') in
        5/11,6/5,5/0,0/0) echo rgb565le ;;
        8/16,8/8,8/0,*) echo bgra ;;
        8/0,8/8,8/16,*) echo rgba ;;
        *) echo unknown ;;
    esac
}
PIXELS=unknown
if ((ready)); then
    fbset -fb $FB -g 800 480 800 480 16
    PIXELS=$(fb_pixels)
    if [[ $PIXELS != rgb565le ]]; then
        hil_log "vfb at 16 bpp is $(fbset -fb $FB -s | awk '/rgba/ {print $2}') (not RGB565 as ffmpeg's fbdev takes it); using 32 bpp"
        fbset -fb $FB -g 800 480 800 480 32
        PIXELS=$(fb_pixels)
    fi
    layout=$(fbset -fb $FB -s | awk '/geometry/ {print $2 "x" $3 "x" $6} /rgba/ {print $2}' | tr '\n' ' ')
    if ffmpeg -v error -nostdin -i "$FILE" -frames:v 1 -pix_fmt "$PIXELS" -s 800x450 -f fbdev $FB 2>"$WORK/fb.log"; then
        hil_pass "panel: $FB $layout, ffmpeg writes it as $PIXELS"
    else
        hil_fail "panel: $FB $layout" "ffmpeg -f fbdev: $(tr '\n' ' ' <"$WORK/fb.log")"; ready=0
    fi
fi
if ((!ready)); then
    hil_summary
    exit 1
fi

TICK=$(getconf CLK_TCK)
# cpu_of LOG COMMAND...: runs the command to its end in a subshell and prints
# "TICKS WALL_MS STATUS": the CPU ticks (user + system, all threads) the subshell's
# waited-for child spent, from the subshell's own /proc/PID/stat (cutime, cstime).
cpu_of() {
    local log=$1
    shift
    (
        start=${EPOCHREALTIME/./}   # microseconds, without a child of its own
        "$@" >"$log" 2>&1
        status=$?
        end=${EPOCHREALTIME/./}
        read -r stat </proc/"$BASHPID"/stat
        # shellcheck disable=SC2086
        set -- ${stat##*) }   # the fields after "(comm)": state is $1, utime $12 … cstime $15
        echo "$(( ${14} + ${15} )) $(( (end - start) / 1000 )) $status"
    )
}

# What starting each program costs here (loading it and its libraries over 9p under TCG):
# part of each round's figure, printed so the playback itself can be told apart.
start_ours=$(cpu_of "$WORK/start-kioskcam.log" "$KIOSKCAM" --version)
start_theirs=$(cpu_of "$WORK/start-ffmpeg.log" ffmpeg -hide_banner -version)
hil_log "start-up alone: kioskcam --version $(awk -v t="${start_ours%% *}" -v h="$TICK" 'BEGIN { printf "%.2f", t / h }') s CPU," \
    "ffmpeg -version $(awk -v t="${start_theirs%% *}" -v h="$TICK" 'BEGIN { printf "%.2f", t / h }') s CPU"

ours_total=0 theirs_total=0 not_same=0
for round in $(seq 1 "$ROUNDS"); do
    # (no process substitution: the guest's devtmpfs has no /dev/fd)
    measured=$(cpu_of "$WORK/kioskcam-$round.log" "$KIOSKCAM" play "$FILE" --device "alsa:$CARD" --screen $FB --quiet)
    read -r ours ours_ms ours_status <<<"$measured"
    shown=$(sed -nE 's/.*: ([0-9]+) pictures shown, ([0-9]+) dropped.*/\1 \2/p' "$WORK/kioskcam-$round.log")
    if ((ours_status == 0)) && [[ -n $shown ]]; then
        hil_pass "round $round: kioskcam played ($(grep -E '^played' "$WORK/kioskcam-$round.log" | head -c 200))"
    else
        hil_fail "round $round: kioskcam played" "exit $ours_status: $(tail -n 2 "$WORK/kioskcam-$round.log" | tr '\n' ' ')"
    fi
    if ((round == 1)); then
        if "$KIOSKCAM" screenshot --framebuffer $FB -o "$WORK/kioskcam.png" >/dev/null 2>&1 \
            && [[ $(ffmpeg -v error -i "$WORK/kioskcam.png" -vf "crop=400:225:200:60,scale=1:1" -f rawvideo -pix_fmt gray - \
                    | od -An -tu1 | tr -d ' ') -gt 20 ]]; then
            hil_pass "kioskcam's last picture is on $FB (screenshot in work/kioskcam.png)"
        else
            hil_fail "kioskcam's last picture is on $FB" "the middle of the screenshot is black or there is none"
        fi
    fi
    measured=$(cpu_of "$WORK/ffmpeg-$round.log" \
        ffmpeg -v error -nostdin -re -i "$FILE" -pix_fmt "$PIXELS" -s 800x450 -f fbdev $FB -f alsa "$CARD")
    read -r theirs theirs_ms theirs_status <<<"$measured"
    if ((theirs_status == 0)); then
        hil_pass "round $round: ffmpeg played"
    else
        hil_fail "round $round: ffmpeg played" "exit $theirs_status: $(tail -n 2 "$WORK/ffmpeg-$round.log" | tr '\n' ' ')"
    fi
    ours_total=$((ours_total + ours)) theirs_total=$((theirs_total + theirs))
    hil_log "round $round: kioskcam $(awk -v t="$ours" -v h="$TICK" 'BEGIN { printf "%.2f", t / h }') s CPU over ${ours_ms} ms" \
        "(shown/dropped: ${shown:-?}), ffmpeg $(awk -v t="$theirs" -v h="$TICK" 'BEGIN { printf "%.2f", t / h }') s CPU over ${theirs_ms} ms," \
        "ratio $(awk -v a="$ours" -v b="$theirs" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 99) }')"
    # The same work: each player in real time (paced by the card), kioskcam showing
    # (nearly) every picture — ffmpeg never drops, it falls behind instead (at 30 fps it
    # took 15-18 s for 6 s). Wall time also holds each process's start-up under TCG
    # (kioskcam --version alone about 1.5 s, ffmpeg's 0.7 s) and the sound still in the
    # card at the end (kioskcam drains its last half-second buffers): 3 s over the
    # recording's length is still real time; falling behind shows as far more.
    read -r shown_count dropped_count <<<"${shown:-0 999}"
    if ((ours_ms <= LENGTH * 1000 + 3000 && theirs_ms <= LENGTH * 1000 + 3000 && dropped_count * 20 <= shown_count + dropped_count)); then
        hil_pass "round $round: the same work (both in real time: ${ours_ms} and ${theirs_ms} ms for $LENGTH s; kioskcam dropped $dropped_count of $((shown_count + dropped_count)))"
    else
        not_same=$((not_same + 1))
        hil_fail "round $round: the same work" "kioskcam took ${ours_ms} ms and dropped $dropped_count of $((shown_count + dropped_count)) pictures, ffmpeg took ${theirs_ms} ms, for $LENGTH s: not the same work (a slow guest, or a picture clock that steps), the CPU figures do not compare"
    fi
done

ratio=$(awk -v a="$ours_total" -v b="$theirs_total" 'BEGIN { printf "%.3f", (b > 0 ? a / b : 99) }')
summary="[$PIXELS panel] kioskcam $(awk -v t="$ours_total" -v h="$TICK" 'BEGIN { printf "%.2f", t / h }') s CPU, ffmpeg $(awk -v t="$theirs_total" -v h="$TICK" 'BEGIN { printf "%.2f", t / h }') s CPU over $ROUNDS rounds of $LENGTH s of 1280x720 at $FPS fps: ratio $ratio (target <= 1.0, margin $MARGIN)"
hil_log "$summary"
if ((not_same > 0)); then
    # Already failed above, round by round: a ratio of unequal work is no verdict.
    hil_log "playback CPU, no verdict ($not_same of $ROUNDS rounds not the same work): $summary"
elif awk -v r="$ratio" -v m="$MARGIN" 'BEGIN { exit !(r <= m) }'; then
    hil_pass "playback CPU: $summary"
else
    hil_fail "playback CPU" "$summary"
fi

cp -r "$WORK"/*.log "$WORK"/*.png "$HIL_RESULTS/" 2>/dev/null
hil_summary
