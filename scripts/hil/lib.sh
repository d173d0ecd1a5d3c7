# shellcheck shell=bash
# Helpers for HIL scenarios. Source it from a scenario:   . "$HIL_LIB"
#
# run-guest sets, inside the guest:
#   HIL_RESULTS      writable folder shared with the host (RESULTS_DIR there)
#   HIL_KVER         guest kernel version           (modprobe -S)
#   HIL_MODROOT      root of the guest module tree  (modprobe -d)
#   HIL_GPIO_SIM_KO  the out-of-tree gpio-sim module (insmod)
#   HIL_DIR, HIL_LIB, HIL_SCENARIO
# Every PASS/FAIL is printed and appended to $HIL_RESULTS/results.txt; hil_summary
# counts that file, so checks made in subshells count too.

if [[ -z ${HIL_LIB_LOADED:-} ]]; then
    HIL_LIB_LOADED=1
    if [[ -z ${HIL_RESULTS:-} ]]; then
        HIL_RESULTS=$(mktemp -d "${TMPDIR:-/tmp}/hil-results.XXXXXX")
    fi
    mkdir -p "$HIL_RESULTS"
    HIL_RESULTS_FILE=$HIL_RESULTS/results.txt
    : >"$HIL_RESULTS_FILE"
fi

# modprobe from the guest kernel's module tree: hil_modprobe NAME [PARAM=VALUE...]
hil_modprobe() {
    modprobe -d "${HIL_MODROOT:?HIL_MODROOT not set (run inside run-guest)}" \
        -S "${HIL_KVER:?HIL_KVER not set}" "$@"
}

# Informational line, echoed by run-guest on the host.
hil_log() { printf 'HIL: %s\n' "$*"; }

# hil_pass NAME
hil_pass() {
    printf 'PASS: %s\n' "$1"
    printf 'PASS: %s\n' "$1" >>"$HIL_RESULTS_FILE"
}

# hil_fail NAME REASON
hil_fail() {
    printf 'FAIL: %s — %s\n' "$1" "${2:-no reason given}"
    printf 'FAIL: %s — %s\n' "$1" "${2:-no reason given}" >>"$HIL_RESULTS_FILE"
}

# hil_check NAME COMMAND [ARGS...]: PASS if the command succeeds, else FAIL with the
# last line of its output as the reason.
hil_check() {
    local name=$1 out
    shift
    if out=$("$@" 2>&1); then
        hil_pass "$name"
    else
        hil_fail "$name" "$* → $(printf '%s' "$out" | tail -n 1)"
    fi
}

# hil_wait_for SECONDS COMMAND [ARGS...]: polls (every 0.1 s) until the command succeeds.
hil_wait_for() { hil_wait_every 0.1 "$@"; }

# hil_wait_every INTERVAL SECONDS COMMAND…: as hil_wait_for, asking every INTERVAL
# seconds — for a question that is itself work for the guest (ffprobe reading a whole
# .part, a kioskcam start), which asked ten times a second would load the very guest
# that is recording.
hil_wait_every() {
    local interval=$1 deadline=$((SECONDS + $2))
    shift 2
    until "$@" >/dev/null 2>&1; do
        ((SECONDS < deadline)) || return 1
        sleep "$interval"
    done
}

# The unplug checks, shared by the V4L2 and the libcamera scenario: a recording into ROOT
# whose camera is removed mid-way must leave finished, playable MP4s and no `.part`.
hil_count_videos() { find "$1/video" -name '*.mp4' 2>/dev/null | wc -l; }
hil_count_parts() { find "$1/.incoming" -name '*.part' 2>/dev/null | wc -l; }
hil_has_video() { (($(hil_count_videos "$1") >= 1)); }
hil_has_part() { (($(hil_count_parts "$1") >= 1)); }
# hil_video_frames FILE: the video frames ffprobe decodes in FILE (empty when it cannot).
hil_video_frames() {
    ffprobe -v error -count_frames -select_streams v:0 -show_entries stream=nb_read_frames -of csv=p=0 "$1" 2>/dev/null
}
# hil_decodes_cleanly FILE: ffmpeg decodes FILE to the end without a word of complaint.
hil_decodes_cleanly() { [[ -z $(ffmpeg -nostdin -v error -i "$1" -f null - 2>&1) ]]; }

# hil_part_has_seconds ROOT SECONDS: the recording being written under ROOT holds at
# least SECONDS of video (its last frame's time, read from the .part itself). What a
# check that needs "a few seconds recorded" waits for, instead of sleeping a fixed time
# that a loaded TCG guest may not fill.
hil_part_has_seconds() {
    local part last
    part=$(find "$1/.incoming" -name '*.part' 2>/dev/null | head -n 1)
    [[ -n $part ]] || return 1
    last=$(ffprobe -v error -select_streams v:0 -show_entries packet=pts_time -of csv=p=0 "$part" 2>/dev/null | tail -n 1)
    [[ -n $last ]] && awk -v t="$last" -v want="$2" 'BEGIN { exit !(t + 0 >= want) }'
}

# hil_pcm_running CARD-DIR: an ALSA substream is running (/proc/asound/…/status says so):
# what a check that plays or captures waits for before it acts.
hil_pcm_running() { grep -q 'state: RUNNING' "/proc/asound/$1/status" 2>/dev/null; }

# hil_gone PID: the process has exited.
hil_gone() { ! kill -0 "$1" 2>/dev/null; }

# hil_check_unplugged_part ROOT SECONDS WHAT: within SECONDS the part recorded before the
# unplug is finished, and it plays for at least 2 s.
hil_check_unplugged_part() {
    local root=$1 limit=$2 what=$3 first seconds
    if ! hil_wait_for "$limit" hil_has_video "$root"; then
        hil_fail "unplug: the recording is finished" "no file in the library $limit s after the $what"
        return
    fi
    first=$(find "$root/video" -name '*.mp4' | sort | head -n 1)
    seconds=$(ffprobe -v error -show_entries format=duration -of csv=p=0 "$first" 2>/dev/null || echo 0)
    if python3 -c "import sys; sys.exit(0 if float('${seconds:-0}') >= 2.0 else 1)"; then
        hil_pass "unplug: the part recorded before the $what is finished and plays (${seconds} s)"
    else
        hil_fail "unplug: the finished part plays" "duration '${seconds}'"
    fi
}

# hil_check_all_playable ROOT MINIMUM WHAT: at least MINIMUM finished MP4s, every one
# decodes to the end, and no `.part` is left.
hil_check_all_playable() {
    local root=$1 minimum=$2 what=$3 bad=0 file videos parts
    while read -r file; do
        ffprobe -v error -count_frames -show_entries stream=nb_read_frames -of csv=p=0 "$file" >/dev/null 2>&1 || bad=$((bad + 1))
    done < <(find "$root/video" -name '*.mp4')
    videos=$(hil_count_videos "$root")
    parts=$(hil_count_parts "$root")
    if ((videos >= minimum && bad == 0 && parts == 0)); then
        hil_pass "$what: $videos file(s), all playable, nothing half-written"
    else
        hil_fail "$what: at least $minimum playable file(s)" "$videos files, $bad unplayable, $parts .part left"
    fi
}

# hil_xctest [--timeout SECS] [--dir DIR] NAME [VAR=VALUE...] -- Target.Class
# Runs one XCTest class of the test bundle ($HIL_XCTEST, else the build's
# kioskcamPackageTests.xctest) in DIR (default: here) with the variables set, and
# reports every test case as its own PASS/FAIL line ("NAME: Class.test"; a skipped test
# is a FAIL: a HIL test must run) and the class as a whole as one more: PASS only if
# the bundle exits 0 and its summary says more than 0 tests executed, none skipped and
# none failed, and none of its lines here was a FAIL. While it runs, "HIL: " lines are
# passed through and a test's own "CHECK PASS: what" / "CHECK FAIL: what — why" lines
# become PASS/FAIL lines.
# The whole output is in $HIL_RESULTS/xctest-NAME.log (HIL_XCTEST_LOG, for more greps).
# Returns 0 when the class passed.
hil_xctest() {
    local limit="" dir=$PWD
    while [[ ${1:-} == --* ]]; do
        case $1 in
            --timeout) limit=$2; shift 2 ;;
            --dir) dir=$2; shift 2 ;;
            *) hil_fail "hil_xctest" "unknown option $1"; return 2 ;;
        esac
    done
    local name=${1:-} vars=()
    shift
    while (($#)) && [[ $1 != -- ]]; do vars+=("$1"); shift; done
    if [[ -z $name || ${1:-} != -- || $# -ne 2 ]]; then
        hil_fail "hil_xctest ${name}" "usage: hil_xctest [--timeout SECS] [--dir DIR] NAME [VAR=VALUE...] -- Target.Class"
        return 2
    fi
    local class=$2
    local bundle=${HIL_XCTEST:-${KIOSKCAM_BUILD_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/.build/debug}/kioskcamPackageTests.xctest}
    HIL_XCTEST_LOG=$HIL_RESULTS/xctest-${name//[^A-Za-z0-9_.-]/_}.log
    if [[ ! -x $bundle ]]; then
        hil_fail "$name: $class" "$bundle missing: run swift build --build-tests first"
        return 1
    fi
    local run=("$bundle" "$class")
    [[ -z $limit ]] || run=(timeout -k 10 "$limit" "${run[@]}")
    local rc before failed
    before=$(wc -l <"$HIL_RESULTS_FILE")
    (cd "$dir" && env ${vars[@]+"${vars[@]}"} "${run[@]}" 2>&1) | tee "$HIL_XCTEST_LOG" | _hil_xctest_lines "$name"
    rc=${PIPESTATUS[0]}
    failed=$(tail -n +"$((before + 1))" "$HIL_RESULTS_FILE" | grep -c '^FAIL: ' || true)

    local summary executed skipped failures
    summary=$(grep -E '^[[:space:]]*Executed [0-9]+ tests?, with ' "$HIL_XCTEST_LOG" | tail -n 1 | sed 's/^[[:space:]]*//')
    executed=$(sed -nE 's/^Executed ([0-9]+) tests?,.*/\1/p' <<<"$summary")
    skipped=$(sed -nE 's/.* ([0-9]+) tests? skipped.*/\1/p' <<<"$summary")
    failures=$(sed -nE 's/.* ([0-9]+) failures? .*/\1/p' <<<"$summary")
    local why=""
    if [[ -n $limit ]] && ((rc == 124 || rc == 137)); then
        why="killed after $limit s"
    elif [[ -z $summary ]]; then
        why="no XCTest summary (exit $rc; crashed?): $(grep -E 'error|Fatal|fatal' "$HIL_XCTEST_LOG" | head -n 2 | tr '\n' ' ')"
    elif ((${executed:-0} == 0)); then
        why="executed no test (is $class the right name?): $summary"
    elif ((${skipped:-0} > 0)); then
        why="$skipped skipped — a HIL test must run here: $summary"
    elif ((rc != 0 || ${failures:-0} > 0)); then
        why="exit $rc: $summary"
    elif ((failed > 0)); then
        why="$failed of its checks failed (above): $summary"
    fi
    if [[ -z $why ]]; then
        hil_pass "$name: $class — $summary"
    else
        hil_fail "$name: $class" "$why"
        return 1
    fi
}

# Reads XCTest's output (stdin) for hil_xctest NAME: a PASS/FAIL line per test case, the
# HIL: and CHECK lines as they come, and a FAIL for a test that started and never ended.
_hil_xctest_lines() {
    local name=$1 line test="" reason="" what
    while IFS= read -r line; do
        case $line in
            "HIL: "*) printf '%s\n' "$line" ;;
            "CHECK PASS: "*) hil_pass "$name: ${line#CHECK PASS: }" ;;
            "CHECK FAIL: "*) what=${line#CHECK FAIL: }; hil_fail "$name: ${what%% — *}" "${what#* — }" ;;
            "Test Case '"*"' started"*) test=${line#Test Case \'}; test=${test%%\'*}; reason="" ;;
            *": error: "*) [[ -n $reason ]] || reason=${line#*: error: } ;;
            *" : Test skipped"*) reason=${line#* : Test skipped} reason=${reason# - } ;;
            "Test Case '"*"' passed"*) hil_pass "$name: $test${line##*\' passed}"; test="" ;;
            "Test Case '"*"' failed"*) hil_fail "$name: $test" "${reason:-failed}"; test="" ;;
            "Test Case '"*"' skipped"*) hil_fail "$name: $test skipped" "${reason:-no reason given}"; test="" ;;
        esac
    done
    [[ -z $test ]] || hil_fail "$name: $test" "started and never finished (crashed or killed); see the log"
}

# hil_need_kioskcam PATH: PATH is an executable, or the scenario ends here (a FAIL and
# the summary): the guest runs the host's build and has none of its own.
hil_need_kioskcam() {
    [[ -x $1 ]] && return 0
    hil_fail "kioskcam binary" "$1 missing: run swift build first"
    hil_summary
    exit 1
}

# hil_vivid: vivid with one capture node, /dev/video0 there within 10 s (PASS or FAIL).
hil_vivid() {
    if hil_modprobe vivid n_devs=1 node_types=0x1 && hil_wait_for 10 test -c /dev/video0; then
        hil_pass "vivid: /dev/video0"
    else
        hil_fail "vivid: /dev/video0" "modprobe vivid failed"
        return 1
    fi
}

# Prints "N passed, N failed" alone on a line; returns non-zero if anything failed
# (or nothing was checked at all).
hil_summary() {
    local passed failed
    passed=$(grep -c '^PASS: ' "$HIL_RESULTS_FILE" || true)
    failed=$(grep -c '^FAIL: ' "$HIL_RESULTS_FILE" || true)
    printf '%d passed, %d failed\n' "$passed" "$failed"
    printf '%d passed, %d failed\n' "$passed" "$failed" >"$HIL_RESULTS/summary.txt"
    ((failed == 0 && passed > 0))
}

# hil_gpio_sim [OFFSET=NAME...]: gpio-sim with one chip of one bank of 8 lines (naming the
# lines given), live. Sets HIL_GPIO_CHIP (e.g. gpiochip0) and HIL_GPIO_SIM (its sysfs
# folder: drive input N with `echo pull-up|pull-down >$HIL_GPIO_SIM/sim_gpioN/pull`, read
# an output from .../value). Reports PASS/FAIL; returns non-zero on failure.
hil_gpio_sim() {
    local cfg=/sys/kernel/config/gpio-sim/chip0 err=$HIL_RESULTS/gpio-sim.err spec offset
    hil_modprobe configfs 2>/dev/null || true   # may be built in
    if ! mountpoint -q /sys/kernel/config; then
        mount -t configfs configfs /sys/kernel/config || { hil_fail "gpio-sim: mount configfs" "mount failed"; return 1; }
    fi
    if [[ -z ${HIL_GPIO_SIM_KO:-} || ! -f $HIL_GPIO_SIM_KO ]]; then
        hil_fail "gpio-sim: insmod" "HIL_GPIO_SIM_KO='${HIL_GPIO_SIM_KO:-}' not found (run scripts/hil/prepare)"
        return 1
    fi
    if ! insmod "$HIL_GPIO_SIM_KO" 2>"$err"; then
        hil_fail "gpio-sim: insmod" "$(tail -n 1 "$err")"
        return 1
    fi
    if ! { mkdir "$cfg" && mkdir "$cfg/bank0" && echo 8 >"$cfg/bank0/num_lines"; } 2>"$err"; then
        hil_fail "gpio-sim: configfs chip0/bank0" "$(tail -n 1 "$err")"
        return 1
    fi
    for spec in "$@"; do
        offset=${spec%%=*}
        if ! { mkdir "$cfg/bank0/line$offset" && echo "${spec#*=}" >"$cfg/bank0/line$offset/name"; } 2>"$err"; then
            hil_fail "gpio-sim: name line $offset" "$(tail -n 1 "$err")"
            return 1
        fi
    done
    if ! echo 1 >"$cfg/live" 2>"$err"; then
        hil_fail "gpio-sim: live" "$(tail -n 1 "$err")"
        return 1
    fi
    HIL_GPIO_CHIP=$(cat "$cfg/bank0/chip_name")
    # shellcheck disable=SC2034  # read by the scenario that called us
    HIL_GPIO_SIM=/sys/devices/platform/$(cat "$cfg/dev_name")/$HIL_GPIO_CHIP
    if [[ -n $HIL_GPIO_CHIP ]] && hil_wait_for 10 test -c "/dev/$HIL_GPIO_CHIP"; then
        hil_pass "gpio-sim: /dev/$HIL_GPIO_CHIP ($(gpiodetect | grep "^$HIL_GPIO_CHIP" || true))"
    else
        hil_fail "gpio-sim: /dev/$HIL_GPIO_CHIP" "no character device after 10 s"
        return 1
    fi
}

# --- the daemon as kioskcam.service runs it: user kioskcam, device groups ---------------
# On a board, kioskcam.service runs as the user kioskcam (sysusers.d/kioskcam.conf) and
# reaches the devices through its groups, which udev gives the nodes. These three
# helpers make the guest that board: the user from the project's own sysusers.d file,
# udevd with the project's own udev rule, and `kioskcam run` started as that user.

# hil_service_user [ROOTFS]: runs ROOTFS's sysusers.d/kioskcam.conf (default: this
# checkout's rootfs/) over copies of the guest's passwd/group/shadow/gshadow and binds
# the results over /etc's (read-only 9p here), so the user kioskcam, the gpio group and
# the memberships exist for every program in the guest. Sets HIL_SERVICE_GROUPS to the
# unit's SupplementaryGroups=, comma-separated. Reports PASS/FAIL; non-zero on failure.
hil_service_user() {
    local rootfs=${1:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/rootfs}
    local sysroot=/run/hil-sysusers err=$HIL_RESULTS/sysusers.err file
    mkdir -p "$sysroot/etc" "$sysroot/usr/lib/sysusers.d"
    for file in passwd group shadow gshadow; do
        [[ ! -f /etc/$file ]] || cp -p "/etc/$file" "$sysroot/etc/$file"
    done
    cp "$rootfs/usr/lib/sysusers.d/kioskcam.conf" "$sysroot/usr/lib/sysusers.d/"
    if ! systemd-sysusers --root="$sysroot" kioskcam.conf >"$err" 2>&1; then
        hil_fail "sysusers.d/kioskcam.conf" "$(tail -n 1 "$err")"
        return 1
    fi
    for file in passwd group shadow gshadow; do
        [[ -f /etc/$file ]] || continue
        if ! mount --bind "$sysroot/etc/$file" "/etc/$file" 2>"$err"; then
            hil_fail "sysusers.d/kioskcam.conf: /etc/$file" "bind mount: $(tail -n 1 "$err")"
            return 1
        fi
    done
    HIL_SERVICE_GROUPS=$(sed -n 's/^SupplementaryGroups=//p' "$rootfs/usr/lib/systemd/system/kioskcam.service" | tr ' ' ',')
    if [[ -n $HIL_SERVICE_GROUPS ]] && id kioskcam >/dev/null 2>&1; then
        hil_pass "sysusers.d/kioskcam.conf: $(id kioskcam); the unit's groups: $HIL_SERVICE_GROUPS"
    else
        hil_fail "sysusers.d/kioskcam.conf" "no user kioskcam, or no SupplementaryGroups= in the unit"
        return 1
    fi
}

# hil_udevd RULES_FILE... -- SUBSYSTEM...: starts udevd (the host's, in this chroot) with
# the given rules files added in /run/udev/rules.d, then replays "add" for the devices of
# those subsystems that exist already and waits for udev to finish: their nodes get the
# groups and modes a board's udev gives them (Debian's 50-udev-default.rules, plus ours).
# Devices added later are handled as they come. Sets HIL_UDEVD (its pid). Run
# hil_service_user first: udev looks the rules' groups up when it reads them.
hil_udevd() {
    local rules=() subsystems=()
    while (($#)) && [[ $1 != -- ]]; do rules+=("$1"); shift; done
    shift
    while (($#)); do subsystems+=(--subsystem-match="$1"); shift; done
    export SYSTEMD_IGNORE_CHROOT=1   # else udevd and udevadm refuse to run in a chroot
    mkdir -p /run/udev/rules.d
    cp "${rules[@]}" /run/udev/rules.d/
    /lib/systemd/systemd-udevd >"$HIL_RESULTS/udevd.log" 2>&1 &
    # shellcheck disable=SC2034  # read by the scenario that called us
    HIL_UDEVD=$!
    if ! hil_wait_for 20 test -S /run/udev/control; then
        hil_fail "udevd" "no control socket after 20 s: $(tail -n 1 "$HIL_RESULTS/udevd.log")"
        return 1
    fi
    if udevadm trigger --action=add "${subsystems[@]}" && udevadm settle --timeout=120; then
        hil_pass "udevd with $(basename -a "${rules[@]}" | tr '\n' ' ')applied to ${subsystems[*]#--subsystem-match=}"
    else
        hil_fail "udevd" "udevadm trigger/settle failed"
        return 1
    fi
}

# hil_daemon_as_service_user BINARY: from now on, `BINARY run …` starts the daemon as
# kioskcam.service would — user and group kioskcam, the unit's SupplementaryGroups=
# (HIL_SERVICE_GROUPS), no capabilities, no new privileges, umask 0007 — and every other
# `BINARY …` runs as root, as the maintainer's `sudo kioskcam …` does. BINARY is the
# program the tests start (beside their bundle), so a wrapper is bound over it (the
# real one stays reachable at a second bind). Before it drops root, the wrapper hands
# the folder holding the --config file to kioskcam (the tests keep the state, library,
# socket and metrics there: what StateDirectory= and RuntimeDirectory= give the
# service) and waits for udev (After=systemd-udevd.service). HOME is a folder of
# kioskcam's own (systemd sets the user's home, /var/lib/kioskcam, which it owns). Each
# start appends the daemon's own `id` and capability lines to HIL_DAEMON_IDENTITY.
hil_daemon_as_service_user() {
    local binary dir=/run/hil-kioskcam err=$HIL_RESULTS/daemon-wrapper.err
    binary=$(realpath "$1")
    HIL_DAEMON_IDENTITY=$dir/identity.log
    mkdir -p "$dir/home"
    : >"$dir/kioskcam.real"
    : >"$HIL_DAEMON_IDENTITY"
    chown kioskcam:kioskcam "$HIL_DAEMON_IDENTITY" "$dir/home"
    chmod 700 "$dir/home"
    cat >"$dir/kioskcam" <<EOF
#!/bin/sh
# Written by hil_daemon_as_service_user (scripts/hil/lib.sh), bound over $binary.
real=$dir/kioskcam.real
[ "\${1-}" = run ] || exec "\$real" "\$@"
config="" previous=""
for argument in "\$@"; do
    [ "\$previous" = --config ] && config=\$argument
    previous=\$argument
done
[ -z "\$config" ] || chown -R kioskcam:kioskcam "\$(dirname "\$config")"
SYSTEMD_IGNORE_CHROOT=1 udevadm settle --timeout=60 || true
export HOME=$dir/home
exec setpriv --reuid=kioskcam --regid=kioskcam --groups=$HIL_SERVICE_GROUPS \\
    --inh-caps=-all --bounding-set=-all --no-new-privs \\
    /bin/sh -c 'umask 0007
        { id; grep -E "^(CapEff|CapBnd|NoNewPrivs):" /proc/self/status; } | tr "\\t\\n" "  " >>$HIL_DAEMON_IDENTITY
        echo >>$HIL_DAEMON_IDENTITY
        exec "\$0" "\$@"' "\$real" "\$@"
EOF
    chmod 755 "$dir/kioskcam"
    if mount --bind "$binary" "$dir/kioskcam.real" 2>"$err" && mount --bind "$dir/kioskcam" "$binary" 2>>"$err" \
            && head -c 2 "$binary" | grep -q '#!'; then
        hil_pass "$binary run: as user kioskcam (groups $HIL_SERVICE_GROUPS, no capabilities); other commands as root"
    else
        hil_fail "kioskcam run as user kioskcam" "binding the wrapper over $binary failed: $(tail -n 1 "$err")"
        return 1
    fi
}

# hil_overlay_checks LABEL KIOSKCAM BASE_CONFIG WORKDIR CAMERA SIZE FPS: records 2 s with an
# [overlay] (the time, bottom-left) and a [privacy] mask (the top-right of the picture as
# shown) on a camera mounted a quarter turn, with an HLS stream of the same encode, and
# takes a still; then reads each back with overlay-check.py against `kioskcam config
# overlay` references: the mask black, the time the first frame was captured, pixel by pixel.
hil_overlay_checks() {
    local label=$1 kioskcam=$2 base=$3 dir=$4 camera_source=$5 size=$6 fps=$7 file still start t
    rm -rf "$dir"
    mkdir -p "$dir/hls"
    local shown="${size#*x}x${size%x*}"   # turned a quarter
    local camera marks masks
    camera=$(printf '[camera]\nsize = "%s"\nfps = %s\nrotation = 90' "$size" "$fps")
    marks=$'[overlay]\ntext = "%H:%M:%S"\nposition = "bottom-left"\nsize_percent = 6'
    masks=$'[privacy]\nmasks = ["50,0,50,25"]'
    { cat "$base"; printf '\n%s\n%s\n%s\n[stream]\nurl = "%s"\naudio = false\n' "$camera" "$marks" "$masks" "$dir/hls/index.m3u8"; } >"$dir/full.toml"
    { cat "$base"; printf '\n%s\n%s\n' "$camera" "$marks"; } >"$dir/overlay-only.toml"
    { cat "$base"; printf '\n%s\n%s\n' "$camera" "$masks"; } >"$dir/masks-only.toml"
    # No picture of this run was captured before `record` was started.
    local launched
    launched=$(date +%s)
    if ! file=$("$kioskcam" record --config "$dir/full.toml" --camera "$camera_source" --mic none --duration 2s --root "$dir/media" \
        2>"$dir/record.log"); then
        hil_fail "$label: record with [overlay] and [privacy]" "$(tail -n 2 "$dir/record.log" | tr '\n' ' ')"
        return
    fi
    # The stream ran from before the recording's first picture until `record` returned.
    local recorded_until
    recorded_until=$(date +%s)
    if ! still=$("$kioskcam" snapshot --config "$dir/full.toml" --camera "$camera_source" --root "$dir/media" 2>"$dir/snapshot.log"); then
        hil_fail "$label: snapshot with [overlay] and [privacy]" "$(tail -n 2 "$dir/snapshot.log" | tr '\n' ' ')"
        still=
    fi
    # A file's name is the local time of its first picture (to the second).
    local start_of='import os, sys, time; p = sys.argv[1]; print(int(time.mktime(time.strptime(os.path.basename(os.path.dirname(p)) + os.path.basename(p)[:6], "%Y%m%d%H%M%S"))))'
    start=$(python3 -c "$start_of" "$file")
    local still_start=$start
    [[ -n $still ]] && still_start=$(python3 -c "$start_of" "$still")
    "$kioskcam" config overlay --config "$dir/masks-only.toml" --out "$dir/ref-masks.yuv" >/dev/null
    local refs=()
    # The stream's playlist may begin seconds into the 2 s recording: its live list keeps
    # the last segments, and on a loaded guest the camera runs on for seconds after the 2 s
    # (finishing the file, stopping). It may also begin before the file's first picture: the
    # file opens on a keyframe, the stream on the encode's first (2 s earlier once on a
    # loaded guest). So its first picture was captured at the earliest when `record` was
    # started and at the latest when it returned: the candidates cover that.
    local last=$((still_start > start + 4 ? still_start : start + 4))
    last=$((recorded_until > last ? recorded_until : last))
    for ((t = launched - 1; t <= last + 2; t++)); do refs+=("$t"); done
    # One process draws the candidates (`--until`): one a second cost a guest's start-up
    # each, 12 of the libcamera guest's 24 minutes beside a CPU hog.
    "$kioskcam" config overlay --config "$dir/overlay-only.toml" --time "$((launched - 1))" --until "$((last + 2))" \
        --out "$dir/ref-{time}.yuv" >/dev/null
    refs+=($((start + 5 * 3600 + 7 * 60)))
    "$kioskcam" config overlay --config "$dir/overlay-only.toml" --time "${refs[-1]}" --out "$dir/ref-${refs[-1]}.yuv" >/dev/null
    local pairs=()
    for t in "${refs[@]}"; do pairs+=("$t:$dir/ref-$t.yuv"); done
    local what source turn when
    for what in recording stream still; do
        # HLS (MPEG-TS) has no display matrix: its pictures are the camera's, turned here.
        turn=null when=$start
        case $what in
            recording) source=$file ;;
            stream) source=$dir/hls/index.m3u8 turn=transpose=clock when="$launched..$recorded_until" ;;
            still) source=$still when=$still_start ;;
        esac
        # The first keyframe: a live list's first segment may begin on a picture that needs
        # one the list no longer holds, which decodes as a smear (on loaded guests its
        # overlay read as any second, runs 5 and 6 of 2026-11-29).
        if [[ -z $source ]] || ! ffmpeg -nostdin -v error -skip_frame nokey -i "$source" -frames:v 1 -vf "$turn" -pix_fmt yuv420p -f rawvideo -y "$dir/$what.yuv" \
            2>"$dir/$what-decode.log"; then
            hil_fail "$label: decode the $what's first picture" "$(tail -n 1 "$dir/$what-decode.log" 2>/dev/null)"
            continue
        fi
        while IFS=$'\t' read -r verdict name detail; do
            if [[ $verdict == PASS ]]; then hil_pass "$name"; else hil_fail "$name" "$detail"; fi
        done <<<"$(python3 "$(dirname "${BASH_SOURCE[0]}")/overlay-check.py" "$label $what" "$dir/$what.yuv" "$shown" "$when" \
            "$dir/ref-masks.yuv" "${pairs[@]}")"
    done
}

# hil_timelapse_checks LABEL KIOSKCAM WORKDIR CAMERA SIZE: `kioskcam run` with
# [timelapse] interval_seconds = 1 on the real camera until the movie holds 5 frames, then
# kill -9: the movie must play, at the camera's size, its frames a second of a moving scene
# apart; the next start must continue it ("continuing at frame N") and it must still play.
hil_timelapse_checks() {
    local label=$1 kioskcam=$2 dir=$3 camera_source=$4 size=$5
    rm -rf "$dir"
    mkdir -p "$dir/state"
    cat >"$dir/kioskcam.toml" <<EOT
[storage]
media_root = "$dir/media"
[camera]
source = "$camera_source"
size = "$size"
fps = 30
[microphone]
source = "none"
[encoder]
preset = "ultrafast"
[screen]
framebuffer = "file:$dir/screen.fb"
[lock]
start_locked = false
[control]
state_directory = "$dir/state"
socket = "$dir/control.sock"
socket_group = ""
metrics_file = ""
[timelapse]
interval_seconds = 1
fps = 10
EOT
    local frames_of='import json, sys; print(json.load(sys.stdin).get("timelapse_frames", 0))'
    local daemon movie before after
    "$kioskcam" run --config "$dir/kioskcam.toml" >"$dir/daemon.log" 2>&1 &
    daemon=$!
    if ! hil_wait_for 120 sh -c "[ \"\$('$kioskcam' status --json --config '$dir/kioskcam.toml' | python3 -c '$frames_of')\" -ge 5 ]"; then
        hil_fail "$label timelapse: 5 frames in the day's movie" "$(grep -E "timelapse|error" "$dir/daemon.log" | tail -n 3 | tr '\n' ' ')"
        kill -9 "$daemon" 2>/dev/null; wait "$daemon" 2>/dev/null
        return
    fi
    kill -9 "$daemon"
    wait "$daemon" 2>/dev/null
    movie=$(ls "$dir"/media/timelapse/*.mp4 2>/dev/null | head -n 1)
    before=$(hil_video_frames "$movie")
    if [[ ${before:-0} -ge 5 ]] && hil_decodes_cleanly "$movie" &&
        [[ $(ffprobe -v error -select_streams v -show_entries stream=width,height -of csv=s=x:p=0 "$movie") == "$size" ]]; then
        hil_pass "$label timelapse: kill -9 leaves $(basename "$movie") playable, $before frames at $size"
    else
        hil_fail "$label timelapse: kill -9 leaves a playable movie" "movie '$movie', ${before:-no} frames"
    fi
    # The scene moves, so a frame a second apart from its neighbour differs.
    if python3 - "$movie" "$size" <<'PY'
import subprocess, sys
movie, size = sys.argv[1], sys.argv[2]
w, h = map(int, size.split("x"))
raw = subprocess.run(["ffmpeg", "-nostdin", "-v", "error", "-i", movie, "-frames:v", "3", "-f", "rawvideo", "-pix_fmt", "gray", "-"],
                     capture_output=True, check=True).stdout
frames = [raw[i * w * h:(i + 1) * w * h] for i in range(3)]
diff = [sum(abs(a - b) for a, b in zip(x, y)) / (w * h) for x, y in zip(frames, frames[1:])]
print(f"mean luma change between frames: {diff}")
sys.exit(0 if len(raw) == 3 * w * h and all(d > 1 for d in diff) else 1)
PY
    then
        hil_pass "$label timelapse: consecutive frames show the moving scene a second apart"
    else
        hil_fail "$label timelapse: consecutive frames differ" "the scene did not move between frames"
    fi
    "$kioskcam" run --config "$dir/kioskcam.toml" >"$dir/daemon2.log" 2>&1 &
    daemon=$!
    if hil_wait_for 120 grep -q "continuing at frame $before" "$dir/daemon2.log" &&
        hil_wait_for 120 sh -c "[ \"\$('$kioskcam' status --json --config '$dir/kioskcam.toml' | python3 -c '$frames_of')\" -ge $((before + 3)) ]"; then
        kill -TERM "$daemon"
        wait "$daemon"
        after=$(hil_video_frames "$movie")
        if [[ ${after:-0} -ge $((before + 3)) ]] && hil_decodes_cleanly "$movie" &&
            [[ $(ls "$dir"/media/timelapse/ | wc -l) -eq 1 ]]; then
            hil_pass "$label timelapse: the next start continues the movie ($before → $after frames, plays)"
        else
            hil_fail "$label timelapse: the continued movie plays" "$before → ${after:-no} frames; $(ls "$dir"/media/timelapse/ | tr '\n' ' ')"
        fi
    else
        hil_fail "$label timelapse: the next start continues the movie" "$(grep -E "timelapse|error" "$dir/daemon2.log" | tail -n 3 | tr '\n' ' ')"
        kill -9 "$daemon" 2>/dev/null; wait "$daemon" 2>/dev/null
    fi
}
