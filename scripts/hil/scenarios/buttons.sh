#!/usr/bin/env bash
# HIL scenario: kioskcam's GPIO buttons and status LED against the kernel's GPIO
# character device, on a gpio-sim chip (8 lines; line 5 named KIOSK_REC). Buttons are
# pressed by switching a line's simulated pull; the LED is read back from sysfs.
# Run on the host with:
#   scripts/hil/run-guest scripts/hil/scenarios/buttons.sh
# Needs the test build (swift build --build-tests) — the guest sees the host's files.
set -uo pipefail   # no -e: every check runs and reports PASS or FAIL

# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "${HIL_LIB:-$(dirname "${BASH_SOURCE[0]}")/../lib.sh}"

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
BUILD=${KIOSKCAM_BUILD_DIR:-$ROOT/.build/debug}
HIL_XCTEST=$BUILD/kioskcamPackageTests.xctest   # what hil_xctest runs
WORK=/tmp/hil-buttons
mkdir -p "$WORK"
export HOME=$WORK   # nothing of the host's home is writable here

# --- gpio-sim: one chip, one bank of 8 lines ------------------------------------------
setup_gpio_sim() {
    hil_gpio_sim 5=KIOSK_REC || return 1
    CHIP=$HIL_GPIO_CHIP
    SIM=$HIL_GPIO_SIM
    # Every button starts released: active low, pulled up.
    for n in 0 1 4 5 6 7; do echo pull-up >"$SIM/sim_gpio$n/pull"; done
}

# --- the GPIO test class in the guest -------------------------------------------------
run_gpio_tests() {
    hil_xctest --dir "$WORK" gpio KIOSKCAM_HIL_GPIO=1 KIOSKCAM_HIL_GPIO_CHIP="$CHIP" KIOSKCAM_HIL_GPIO_SIM="$SIM" \
        -- KioskGPIOTests.GPIOHILTests
    # Messages the tests print for a person to read.
    grep -E "^HIL message:" "$HIL_XCTEST_LOG" | sed 's/^HIL message:/HIL: message:/'
}

# --- after the tests: nothing of ours still holds a line -------------------------------
check_lines_released() {
    local held
    held=$(gpioinfo "$CHIP" 2>&1 | grep -c '"kioskcam"' || true)
    if ((held == 0)); then
        hil_pass "gpio: no line left held by \"kioskcam\" after the tests"
    else
        hil_fail "gpio: no line left held by \"kioskcam\"" "$(gpioinfo "$CHIP" | grep kioskcam | tr '\n' ' ')"
    fi
}

hil_log "guest kernel $(uname -r), scenario $(basename "$0")"
if [[ ! -x $HIL_XCTEST ]]; then
    hil_fail "GPIO test class" "$HIL_XCTEST missing: run swift build --build-tests first"
elif setup_gpio_sim; then
    run_gpio_tests
    check_lines_released
fi
cp -r "$WORK" "$HIL_RESULTS/work" 2>/dev/null
hil_summary
