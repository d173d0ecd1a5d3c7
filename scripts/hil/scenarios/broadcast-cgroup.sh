#!/usr/bin/env bash
# HIL scenario: the 50 MB cap of a broadcast the daemon starts, enforced by the guest's
# real cgroup v2 memory controller (the build machine has memory on cgroup v1 only).
# The scenario mounts cgroup2 and enables +memory below the root, as systemd does for
# kioskcam.service's Delegate=memory; kioskcamTests.BroadcastCgroupDaemonTests then starts
# `kioskcam run` in a cgroup of its own ("the unit's"), `kioskcam broadcast-start`, and
# checks: the daemon moved into <unit>/daemon, the broadcast runs in <unit>/broadcast with
# memory.max 52428800, memory.peak < 50 MiB, oom_kill 0, stop works and the library file
# plays; and, with the cgroup file system read-only for the daemon (ProtectControlGroups=yes),
# the broadcast still runs and status says it is uncapped and how to fix it.
# Run on the host with:
#   KIOSKCAM_BUILD_DIR=$PWD/.build/debug KIOSKCAM_HIL_TIMEOUT=1200 scripts/hil/run-guest scripts/hil/scenarios/broadcast-cgroup.sh
# Needs the debug build with tests (swift build --build-tests) — the guest sees the host's files.
set -uo pipefail   # no -e: every check runs and reports PASS or FAIL

# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "${HIL_LIB:-$(dirname "${BASH_SOURCE[0]}")/../lib.sh}"

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
BUILD=${KIOSKCAM_BUILD_DIR:-$ROOT/.build/debug}
KIOSKCAM=${KIOSKCAM:-$BUILD/kioskcam}
HIL_XCTEST=$BUILD/kioskcamPackageTests.xctest   # what hil_xctest runs
WORK=/tmp/hil-broadcast-cgroup
mkdir -p "$WORK"
export HOME=$WORK

for needed in "$KIOSKCAM" "$HIL_XCTEST"; do
    if [[ ! -e $needed ]]; then
        hil_fail "build products" "$needed missing: run swift build --build-tests first"
        hil_summary
        exit 1
    fi
done
hil_log "guest kernel $(uname -r), scenario $(basename "$0")"

CGROUP=/sys/fs/cgroup
if { mountpoint -q $CGROUP || mount -t cgroup2 none $CGROUP; } \
    && grep -qw memory $CGROUP/cgroup.controllers \
    && echo +memory >$CGROUP/cgroup.subtree_control; then
    hil_pass "cgroup v2 with the memory controller: $(cat $CGROUP/cgroup.subtree_control)"
else
    hil_fail "cgroup v2 memory controller in the guest" "could not mount cgroup2 on $CGROUP or enable +memory"
    hil_summary
    exit 1
fi

started=$SECONDS
hil_xctest --timeout 900 --dir "$WORK" broadcast-cgroup KIOSKCAM_HIL_EXPECT_CAP=1 -- kioskcamTests.BroadcastCgroupDaemonTests
hil_log "BroadcastCgroupDaemonTests took $((SECONDS - started)) s"

# Nothing may be left behind: every test cgroup was removed once its daemon ended.
if leftovers=$(find $CGROUP -maxdepth 1 -name 'kioskcam-test-*' | tr '\n' ' ') && [[ -z $leftovers ]]; then
    hil_pass "no test cgroup left behind"
else
    hil_fail "no test cgroup left behind" "$leftovers"
fi

cp -r "$WORK" "$HIL_RESULTS/work" 2>/dev/null
hil_summary
