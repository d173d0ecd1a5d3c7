#!/usr/bin/env bash
# HIL scenario: [overlay] and [privacy] on vivid's pictures — the recording, the HLS stream
# and a still, turned a quarter, each compared with the overlay kioskcam renders for the
# second the picture was taken, and the masks where they must be. Run on the host with:
#   scripts/hil/run-guest scripts/hil/scenarios/overlay.sh
# Needs the debug build (swift build) — the guest sees the host's files.
#
# Apart from capture.sh because it reads the clock to the second off a live stream: beside
# another guest or the host's tests the stream's first keyframe read +8 and +16 s (runs 5
# and 6 of 2026-11-29), alone +0 s. scripts/test runs it with the timing guests; the rest
# of the camera's checks, which bound no time that tight, run beside the host.
set -uo pipefail   # no -e: every check runs and reports PASS or FAIL

# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "${HIL_LIB:-$(dirname "${BASH_SOURCE[0]}")/../lib.sh}"

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
KIOSKCAM=${KIOSKCAM_PROGRAM:-${KIOSKCAM_BUILD_DIR:-$ROOT/.build/debug}/kioskcam}   # the shipped build when scripts/test names it
WORK=/tmp/hil-overlay
# vivid's native 320x180 with libx264's fastest preset, as in capture.sh: TCG is slow.
SIZE=320x180
mkdir -p "$WORK"
printf '[encoder]\npreset = "ultrafast"\n' >"$WORK/kioskcam.toml"
export HOME=$WORK   # nothing of the host's home is writable here

hil_need_kioskcam "$KIOSKCAM"

hil_vivid

# A booted appliance has its libraries paged in; the first run here pages them in over
# 9p under TCG (seconds), which would only measure the emulator. Not checked.
"$KIOSKCAM" record --config "$WORK/kioskcam.toml" --camera /dev/video0 --size "$SIZE" --mic none \
    --duration 1s --root "$WORK/warm-up" --quiet >/dev/null 2>&1

hil_overlay_checks vivid "$KIOSKCAM" "$WORK/kioskcam.toml" "$WORK/overlay" /dev/video0 "$SIZE" 30

# Keep logs and recordings for a person to look at (the guest's /tmp is its own).
cp -r "$WORK" "$HIL_RESULTS/work" 2>/dev/null
hil_summary
