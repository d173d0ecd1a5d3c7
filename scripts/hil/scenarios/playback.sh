#!/usr/bin/env bash
# HIL scenario: issue 14's playback target against the real job. A 1280x720 30 fps
# recording with sound is played (a) by `kioskcam play --screen` onto vfb's /dev/fb0 at
# 800x480 RGB565 and the snd-aloop card, and (b) by
#   ffmpeg -re -i FILE -pix_fmt rgb565le -s 800x450 -f fbdev /dev/fb0 -f alsa hw:Loopback,0,0
# alternately, several times in one run. Each player's CPU (user + system of the process
# and all its threads) comes from /proc/PID/stat: a subshell waits for the player and
# reads its own cutime + cstime. Passes when kioskcam's total is <= ffmpeg's total
# times PLAYBACK_MARGIN (default 1.0: no margin).
# Run on the host with (a release build: the target is about the shipped binary):
#   swift build -c release --product kioskcam
#   KIOSKCAM=$PWD/.build/release/kioskcam KIOSKCAM_HIL_TIMEOUT=1200 scripts/hil/run-guest scripts/hil/scenarios/playback.sh
# Environment: PLAYBACK_SECONDS (recording length, default 6), PLAYBACK_ROUNDS (default 3),
# PLAYBACK_MARGIN (default 1.0).
set -uo pipefail   # no -e: every check runs and reports PASS or FAIL

# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "${HIL_LIB:-$(dirname "${BASH_SOURCE[0]}")/../lib.sh}"

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
KIOSKCAM=${KIOSKCAM:-$ROOT/.build/release/kioskcam}
LENGTH=${PLAYBACK_SECONDS:-6}
ROUNDS=${PLAYBACK_ROUNDS:-3}
MARGIN=${PLAYBACK_MARGIN:-1.0}
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
if devices=$(ffmpeg -hide_banner -devices 2>/dev/null) && grep -qE '^ *D?E +fbdev ' <<<"$devices" \
    && grep -qE '^ *D?E +alsa ' <<<"$devices"; then
    hil_pass "ffmpeg has the fbdev and alsa outputs"
else
    hil_fail "ffmpeg has the fbdev and alsa outputs" "ffmpeg -devices lists no fbdev or alsa muxer: run scripts/install-deps --test"
    hil_summary
    exit 1
fi

ready=1
if hil_modprobe vfb vfb_enable=1 videomemorysize=4194304 && hil_wait_for 10 test -c $FB \
    && fbset -fb $FB -g 800 480 800 480 16 && fbset -fb $FB -s | grep -q 'rgba 5/11,6/5,5/0'; then
    hil_pass "vfb: $FB at 800x480 RGB565"
else
    hil_fail "vfb: $FB at 800x480 RGB565" "modprobe vfb or fbset failed: $(fbset -fb $FB -s 2>&1 | tr '\n' ' ')"; ready=0
fi
for vtcon in /sys/class/vtconsole/vtcon*; do
    if grep -qi "frame buffer" "$vtcon/name" 2>/dev/null; then echo 0 >"$vtcon/bind"; fi
done
if hil_modprobe snd-aloop && hil_wait_for 10 grep -q Loopback /proc/asound/cards; then
    hil_pass "snd-aloop: Loopback card"
else
    hil_fail "snd-aloop: Loopback card" "modprobe snd-aloop failed"; ready=0
fi
if ((ready)) && ffmpeg -v error -nostdin -y -f lavfi -i "testsrc2=size=1280x720:rate=30:duration=$LENGTH" \
    -f lavfi -i "sine=frequency=1000:duration=$LENGTH:sample_rate=48000" -c:v libx264 -preset veryfast -g 30 \
    -pix_fmt yuv420p -c:a aac -ac 2 "$FILE" 2>"$WORK/make.log"; then
    hil_pass "recording: 1280x720 30 fps H.264 + AAC, $LENGTH s"
else
    hil_fail "recording: 1280x720 30 fps H.264 + AAC" "$(tail -n 1 "$WORK/make.log" 2>/dev/null)"; ready=0
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

ours_total=0 theirs_total=0
for round in $(seq 1 "$ROUNDS"); do
    read -r ours ours_ms ours_status < <(cpu_of "$WORK/kioskcam-$round.log" \
        "$KIOSKCAM" play "$FILE" --device "alsa:$CARD" --screen $FB --quiet)
    shown=$(sed -nE 's/.*: ([0-9]+) pictures shown, ([0-9]+) dropped.*/\1 \2/p' "$WORK/kioskcam-$round.log")
    if ((ours_status == 0)) && [[ -n $shown ]]; then
        hil_pass "round $round: kioskcam played ($(grep -E '^played' "$WORK/kioskcam-$round.log" | head -c 200))"
    else
        hil_fail "round $round: kioskcam played" "exit $ours_status: $(tail -n 2 "$WORK/kioskcam-$round.log" | tr '\n' ' ')"
    fi
    if ((round == 1)); then
        if "$KIOSKCAM" screenshot --framebuffer $FB -o "$WORK/kioskcam.png" >/dev/null 2>&1 \
            && [[ $(ffmpeg -v error -i "$WORK/kioskcam.png" -vf "crop=400:225:200:60,signalstats,metadata=print:key=lavfi.signalstats.YAVG" \
                    -f null - 2>&1 | sed -nE 's/.*YAVG=([0-9]+).*/\1/p' | head -n 1) -gt 20 ]]; then
            hil_pass "kioskcam's last picture is on $FB (screenshot in work/kioskcam.png)"
        else
            hil_fail "kioskcam's last picture is on $FB" "the middle of the screenshot is black or there is none"
        fi
    fi
    read -r theirs theirs_ms theirs_status < <(cpu_of "$WORK/ffmpeg-$round.log" \
        ffmpeg -v error -nostdin -re -i "$FILE" -pix_fmt rgb565le -s 800x450 -f fbdev $FB -f alsa "$CARD")
    if ((theirs_status == 0)); then
        hil_pass "round $round: ffmpeg played"
    else
        hil_fail "round $round: ffmpeg played" "exit $theirs_status: $(tail -n 2 "$WORK/ffmpeg-$round.log" | tr '\n' ' ')"
    fi
    ours_total=$((ours_total + ours)) theirs_total=$((theirs_total + theirs))
    hil_log "round $round: kioskcam $(awk -v t="$ours" -v h="$TICK" 'BEGIN { printf "%.2f", t / h }') s CPU over ${ours_ms} ms" \
        "(shown/dropped: ${shown:-?}), ffmpeg $(awk -v t="$theirs" -v h="$TICK" 'BEGIN { printf "%.2f", t / h }') s CPU over ${theirs_ms} ms," \
        "ratio $(awk -v a="$ours" -v b="$theirs" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 99) }')"
    # Each player must have played in real time (paced by the card), not raced or crawled.
    for pair in "kioskcam:$ours_ms" "ffmpeg:$theirs_ms"; do
        ms=${pair#*:}
        if ((ms >= LENGTH * 1000 - 300 && ms <= LENGTH * 1000 * 2 + 3000)); then
            hil_pass "round $round: ${pair%%:*} took ${ms} ms for $LENGTH s"
        else
            hil_fail "round $round: ${pair%%:*} played in real time" "took ${ms} ms for $LENGTH s"
        fi
    done
done

ratio=$(awk -v a="$ours_total" -v b="$theirs_total" 'BEGIN { printf "%.3f", (b > 0 ? a / b : 99) }')
summary="kioskcam $(awk -v t="$ours_total" -v h="$TICK" 'BEGIN { printf "%.2f", t / h }') s CPU, ffmpeg $(awk -v t="$theirs_total" -v h="$TICK" 'BEGIN { printf "%.2f", t / h }') s CPU over $ROUNDS rounds of $LENGTH s: ratio $ratio (target <= 1.0, margin $MARGIN)"
hil_log "$summary"
if awk -v r="$ratio" -v m="$MARGIN" 'BEGIN { exit !(r <= m) }'; then
    hil_pass "playback CPU: $summary"
else
    hil_fail "playback CPU" "$summary"
fi

cp -r "$WORK"/*.log "$WORK"/*.png "$HIL_RESULTS/" 2>/dev/null
hil_summary
