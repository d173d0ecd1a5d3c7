#!/usr/bin/env bash
# HIL scenario: the 50 MB cap of a broadcast the daemon starts, enforced by the guest's
# real cgroup v2 memory controller (the build machine has memory on cgroup v1 only).
# The scenario mounts cgroup2 and enables +memory below the root, as systemd does for
# kioskcam.service's Delegate=memory, then starts `kioskcam run` in a cgroup of its own
# ("the unit's", as systemd starts the unit) and `kioskcam broadcast-start`, and checks
# with the kernel's own files: the daemon moved into <unit>/daemon, the broadcast runs in
# <unit>/broadcast with memory.max 52428800 and no swap, memory.peak < 50 MiB, oom_kill 0,
# status shows the cap, stop works and the library file plays. Then, with the cgroup file
# system read-only for the daemon (ProtectControlGroups=yes, in a mount namespace of its
# own), the broadcast still runs, uncapped, and status and broadcast-start say so. And the
# cap is real: with the leaf lowered to 8 MiB the kernel kills the broadcast, the daemon
# lives on, and status counts the kill.
# The host's tests (kioskcamTests.BroadcastCgroupDaemonTests) cover the uncapped cases on
# the build machine's kernel; this scenario is the capped case.
# Run on the host with:
#   KIOSKCAM_BUILD_DIR=$PWD/.build/debug KIOSKCAM_HIL_TIMEOUT=1200 scripts/hil/run-guest scripts/hil/scenarios/broadcast-cgroup.sh
set -uo pipefail   # no -e: every check runs and reports PASS or FAIL

# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "${HIL_LIB:-$(dirname "${BASH_SOURCE[0]}")/../lib.sh}"

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
BUILD=${KIOSKCAM_BUILD_DIR:-$ROOT/.build/debug}
KIOSKCAM=${KIOSKCAM_PROGRAM:-$BUILD/kioskcam}   # the shipped build when scripts/test names it
WORK=/tmp/hil-broadcast-cgroup
mkdir -p "$WORK"
export HOME=$WORK

if [[ ! -x $KIOSKCAM ]]; then
    hil_fail "build products" "$KIOSKCAM missing: run swift build first"
    hil_summary
    exit 1
fi
hil_log "guest kernel $(uname -r), scenario $(basename "$0")"

CGROUP=/sys/fs/cgroup
if { mountpoint -q $CGROUP || mount -t cgroup2 none $CGROUP; } \
    && grep -qw memory $CGROUP/cgroup.controllers \
    && echo +memory >$CGROUP/cgroup.subtree_control; then
    hil_pass "cgroup v2 with the memory controller below the root: $(cat $CGROUP/cgroup.subtree_control)"
else
    hil_fail "cgroup v2 memory controller in the guest" "could not mount cgroup2 on $CGROUP or enable +memory"
    hil_summary
    exit 1
fi

# A daemon of its own per case: built-in camera and tone, a file-backed 800x480 screen.
write_config() {  # NAME
    local dir=$WORK/$1
    mkdir -p "$dir"
    cat >"$dir/kioskcam.toml" <<TOML
[storage]
media_root = "$dir/media"
[camera]
source = "test"
size = "320x240"
fps = 5
[microphone]
source = "tone"
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
TOML
}

# A field of `kioskcam status --json` (empty when absent).
status_field() {  # CONFIG FIELD
    "$KIOSKCAM" status --config "$1" --json 2>/dev/null \
        | python3 -c 'import json, sys; v = json.load(sys.stdin).get(sys.argv[1]); print("" if v is None else v)' "$2"
}
broadcast_is_live() { [[ $(status_field "$1" broadcast_state) == live ]]; }
daemon_is_running() { grep -q "kioskcam is running" "$1"; }
cgroup_of() { sed -n 's/^0:://p' "/proc/$1/cgroup" 2>/dev/null; }
contains() { [[ $1 == *"$2"* ]]; }
not_contains() { [[ $1 != *"$2"* ]]; }
starts_with() { [[ $1 == "$2"* ]]; }

# Starts a broadcast, waits until live, records its pid and cgroup, stops it, checks the file.
# Sets BROADCAST_PID, BROADCAST_CGROUP, BROADCAST_OUT.
broadcast_once() {  # LABEL CONFIG
    local label=$1 config=$2 dir file
    dir=$(dirname "$config")
    BROADCAST_PID="" BROADCAST_CGROUP=""
    if ! BROADCAST_OUT=$("$KIOSKCAM" broadcast-start --config "$config" --to library 2>&1); then
        hil_fail "$label: broadcast-start" "$BROADCAST_OUT"
        return 1
    fi
    BROADCAST_PID=$(sed -n 's/.*(pid \([0-9]*\).*/\1/p' <<<"$BROADCAST_OUT")
    hil_log "$label: $BROADCAST_OUT"
    if hil_wait_for 240 broadcast_is_live "$config"; then
        hil_pass "$label: the broadcast is live"
    else
        hil_fail "$label: the broadcast is live" "state $(status_field "$config" broadcast_state): $(status_field "$config" broadcast)"
    fi
    BROADCAST_CGROUP=$(cgroup_of "$BROADCAST_PID")
    # A few seconds in the library file before it stops.
    hil_wait_every 1 120 hil_part_has_seconds "$dir/media" 3 || hil_log "$label: the library file holds less than 3 s after 120 s"
    if out=$("$KIOSKCAM" broadcast-stop --config "$config" 2>&1); then
        hil_pass "$label: broadcast-stop: $out"
    else
        hil_fail "$label: broadcast-stop" "$out"
    fi
    file=$(find "$dir/media/screen" -name '*.mp4' 2>/dev/null | head -1)
    if [[ -n $file ]] && [[ $(ffprobe -v error -show_entries stream=codec_name -of csv=p=0 "$file" | sort | tr '\n' ' ') == "aac h264 " ]]; then
        hil_pass "$label: the library file plays: $file ($(ffprobe -v error -show_entries format=duration -of csv=p=0 "$file") s, h264 + aac)"
    else
        hil_fail "$label: the library file plays" "${file:-no file in $dir/media/screen}"
    fi
}

stop_daemon() {  # PID LABEL
    kill -TERM "$1"
    local status=0
    wait "$1" || status=$?
    if [[ $status == 0 ]]; then hil_pass "$2: the daemon stopped (exit 0)"; else hil_fail "$2: the daemon stopped" "exit $status"; fi
}

# --- 1. delegated: the unit's cgroup with the memory controller --------------------------
UNIT=$CGROUP/kioskcam.service
write_config capped
CONF=$WORK/capped/kioskcam.toml
mkdir -p $UNIT
sh -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' sh "$UNIT" "$KIOSKCAM" run --config "$CONF" >"$WORK/capped/daemon.log" 2>&1 &
DAEMON=$!
if hil_wait_for 240 daemon_is_running "$WORK/capped/daemon.log"; then
    hil_pass "capped: kioskcam run started in /kioskcam.service"
else
    hil_fail "capped: kioskcam run started" "$(tail -5 "$WORK/capped/daemon.log")"
fi
hil_check "capped: the daemon moved itself into /kioskcam.service/daemon" test "$(cgroup_of $DAEMON)" = /kioskcam.service/daemon
hil_check "capped: +memory enabled for the unit's children" grep -qw memory $UNIT/cgroup.subtree_control
cap=$(status_field "$CONF" broadcast_cap)
hil_check "capped: status: broadcast cap: $cap" test "$cap" = "50 MiB, enforced by the cgroup $UNIT/broadcast"
broadcast_once capped "$CONF"
hil_check "capped: broadcast-start did not warn: $BROADCAST_OUT" not_contains "$BROADCAST_OUT" "NOT capped"
hil_check "capped: the broadcast (pid $BROADCAST_PID) ran in /kioskcam.service/broadcast" test "$BROADCAST_CGROUP" = /kioskcam.service/broadcast
hil_check "capped: memory.max $(cat $UNIT/broadcast/memory.max)" test "$(cat $UNIT/broadcast/memory.max)" = 52428800
if [[ -e $UNIT/broadcast/memory.swap.max ]]; then
    hil_check "capped: memory.swap.max $(cat $UNIT/broadcast/memory.swap.max)" test "$(cat $UNIT/broadcast/memory.swap.max)" = 0
fi
peak=$(cat $UNIT/broadcast/memory.peak)
oom=$(sed -n 's/^oom_kill //p' $UNIT/broadcast/memory.events)
peak_mib=$(awk -v p="$peak" 'BEGIN { printf "%.1f", p / 1048576 }')
hil_check "capped: memory.peak $peak_mib MiB < 50 MiB" test "$peak" -gt 0 -a "$peak" -lt 52428800
hil_check "capped: memory.events oom_kill ${oom:-?}" test "${oom:-x}" = 0
hil_log "capped: broadcast cgroup peak $peak_mib MiB, oom_kill $oom; daemon leaf peak $(awk '{ printf "%.1f", $1 / 1048576 }' $UNIT/daemon/memory.peak) MiB"
reported=$(status_field "$CONF" broadcast_memory_max)
hil_check "capped: the broadcast reported memory.max $reported over itself" test "$reported" = 52428800
hil_log "capped: status: $(status_field "$CONF" broadcast_cap)"

# The cap is real: with the leaf's limit lowered to 8 MiB the kernel kills the next
# broadcast (no swap to hide in), the daemon lives on, and status says what happened.
echo 8M >$UNIT/broadcast/memory.max
out=$("$KIOSKCAM" broadcast-start --config "$CONF" --to library 2>&1)
victim=$(sed -n 's/.*(pid \([0-9]*\).*/\1/p' <<<"$out")
hil_log "over the cap: $out"
# The stop above must have let the daemon reap the first broadcast: a start refused as
# "already running" here once made the next checks watch a process long gone.
hil_check "over the cap: broadcast-start right after a stop starts a new broadcast" contains "$out" "broadcast started"
broadcast_ended() { [[ ! -e /proc/$1 ]] || grep -q '^State:[[:space:]]*Z' "/proc/$1/status"; }
hil_check "over the cap: the kernel ended the broadcast (pid ${victim:-?})" hil_wait_for 120 broadcast_ended "${victim:-0}"
oom=$(sed -n 's/^oom_kill //p' $UNIT/broadcast/memory.events)
hil_check "over the cap: memory.events oom_kill ${oom:-?}" test "${oom:-0}" -ge 1
hil_check "over the cap: the daemon lives on" kill -0 $DAEMON
hil_check "over the cap: status counts it: broadcast_oom_kills $(status_field "$CONF" broadcast_oom_kills)" \
    test "$(status_field "$CONF" broadcast_oom_kills)" = "${oom:-x}"
cap=$(status_field "$CONF" broadcast_cap)
hil_check "over the cap: status says: ${cap##*; }" contains "$cap" "the kernel killed a broadcast ${oom:-x} time(s) for going over it"
echo 52428800 >$UNIT/broadcast/memory.max
stop_daemon $DAEMON capped
rmdir $UNIT/broadcast $UNIT/daemon $UNIT 2>/dev/null
hil_check "capped: the unit's cgroup is empty and removed" test ! -e $UNIT

# --- 2. not delegated: a read-only cgroup file system (ProtectControlGroups=yes) ----------
UNIT=$CGROUP/kioskcam-readonly.service
write_config readonly
CONF=$WORK/readonly/kioskcam.toml
mkdir -p $UNIT
# shellcheck disable=SC2016  # expanded by the inner sh
unshare --mount --propagation private sh -c 'echo $$ >"$1/cgroup.procs" && mount -o remount,bind,ro "$2" && shift 2 && exec "$@"' \
    sh "$UNIT" $CGROUP "$KIOSKCAM" run --config "$CONF" >"$WORK/readonly/daemon.log" 2>&1 &
DAEMON=$!
if hil_wait_for 240 daemon_is_running "$WORK/readonly/daemon.log"; then
    hil_pass "read-only: kioskcam run started in /kioskcam-readonly.service"
else
    hil_fail "read-only: kioskcam run started" "$(tail -5 "$WORK/readonly/daemon.log")"
fi
hil_check "read-only: the daemon stayed in its cgroup" test "$(cgroup_of $DAEMON)" = /kioskcam-readonly.service
hil_check "read-only: the daemon logged the missing cap once" test "$(grep -c 'broadcast: memory cap NOT enforced' "$WORK/readonly/daemon.log")" = 1
cap=$(status_field "$CONF" broadcast_cap)
hil_check "read-only: status: broadcast cap: ${cap:0:150}…" starts_with "$cap" "NOT enforced (the daemon's cgroup $UNIT is not delegated to it: "
hil_check "read-only: status names the fix" contains "$cap" "fix: run the daemon as kioskcam.service, whose Delegate=memory"
broadcast_once read-only "$CONF"
hil_check "read-only: broadcast-start said: $BROADCAST_OUT" contains "$BROADCAST_OUT" "memory NOT capped"
hil_check "read-only: the broadcast ran uncapped next to the daemon" test "$BROADCAST_CGROUP" = /kioskcam-readonly.service
hil_check "read-only: the broadcast reported no memory.max over itself" test -z "$(status_field "$CONF" broadcast_memory_max)"
stop_daemon $DAEMON read-only
rmdir $UNIT 2>/dev/null
hil_check "read-only: the cgroup is empty and removed" test ! -e $UNIT

# --- 3. shared: the cgroup of whatever started the daemon (a shell's scope) --------------
# Writable and with the memory controller, but other processes live in it: it is no unit
# of the daemon's own, so it is left as it is.
UNIT=$CGROUP/session-1.scope
write_config shared
CONF=$WORK/shared/kioskcam.toml
mkdir -p $UNIT
# shellcheck disable=SC2016  # expanded by the inner sh
sh -c 'echo $$ >"$1/cgroup.procs" && exec sleep 600' sh "$UNIT" &
NEIGHBOUR=$!
hil_wait_for 10 grep -qx "$NEIGHBOUR" $UNIT/cgroup.procs
sh -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' sh "$UNIT" "$KIOSKCAM" run --config "$CONF" >"$WORK/shared/daemon.log" 2>&1 &
DAEMON=$!
if hil_wait_for 240 daemon_is_running "$WORK/shared/daemon.log"; then
    hil_pass "shared: kioskcam run started in /session-1.scope beside another process"
else
    hil_fail "shared: kioskcam run started" "$(tail -5 "$WORK/shared/daemon.log")"
fi
hil_check "shared: the daemon stayed in its cgroup" test "$(cgroup_of $DAEMON)" = /session-1.scope
hil_check "shared: nothing was made in the shared cgroup" test ! -e $UNIT/daemon -a ! -e $UNIT/broadcast
cap=$(status_field "$CONF" broadcast_cap)
hil_check "shared: status: broadcast cap: ${cap:0:160}…" contains "$cap" "other processes share it (pid $NEIGHBOUR)"
stop_daemon $DAEMON shared
kill $NEIGHBOUR 2>/dev/null
wait $NEIGHBOUR 2>/dev/null
rmdir $UNIT 2>/dev/null
hil_check "shared: the cgroup is empty and removed" test ! -e $UNIT

cp -r "$WORK" "$HIL_RESULTS/work" 2>/dev/null
hil_summary
