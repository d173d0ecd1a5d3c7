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
XCTEST=$BUILD/kioskcamPackageTests.xctest
WORK=/tmp/hil-buttons
mkdir -p "$WORK"
export HOME=$WORK   # nothing of the host's home is writable here

# --- gpio-sim: one chip, one bank of 8 lines ------------------------------------------
setup_gpio_sim() {
    hil_modprobe configfs 2>/dev/null || true   # may be built in
    if ! mountpoint -q /sys/kernel/config; then
        mount -t configfs configfs /sys/kernel/config || { hil_fail "gpio-sim: mount configfs" "mount failed"; return 1; }
    fi
    if [[ -z ${HIL_GPIO_SIM_KO:-} || ! -f $HIL_GPIO_SIM_KO ]]; then
        hil_fail "gpio-sim: insmod" "HIL_GPIO_SIM_KO='${HIL_GPIO_SIM_KO:-}' not found (run scripts/hil/prepare)"
        return 1
    fi
    if ! insmod "$HIL_GPIO_SIM_KO" 2>"$WORK/insmod.err"; then
        hil_fail "gpio-sim: insmod" "$(tail -n 1 "$WORK/insmod.err")"
        return 1
    fi
    local cfg=/sys/kernel/config/gpio-sim/chip0
    if ! { mkdir "$cfg" && mkdir "$cfg/bank0" && echo 8 >"$cfg/bank0/num_lines" \
            && mkdir "$cfg/bank0/line5" && echo KIOSK_REC >"$cfg/bank0/line5/name" \
            && echo 1 >"$cfg/live"; } 2>"$WORK/gpio-cfg.err"; then
        hil_fail "gpio-sim: configfs chip0/bank0 live" "$(tail -n 1 "$WORK/gpio-cfg.err")"
        return 1
    fi
    CHIP=$(cat "$cfg/bank0/chip_name")
    SIM=/sys/devices/platform/$(cat "$cfg/dev_name")/$CHIP
    if [[ -n $CHIP ]] && hil_wait_for 10 test -c "/dev/$CHIP"; then
        hil_pass "gpio-sim: /dev/$CHIP ($(gpiodetect | grep "^$CHIP" || true))"
    else
        hil_fail "gpio-sim: /dev/$CHIP" "no character device after 10 s"
        return 1
    fi
    # Every button starts released: active low, pulled up.
    for n in 0 1 4 5 6 7; do echo pull-up >"$SIM/sim_gpio$n/pull"; done
}

# --- the GPIO test class in the guest -------------------------------------------------
run_gpio_tests() {
    local out=$WORK/xctest-gpio.log rc summary
    (cd "$WORK" && KIOSKCAM_HIL_GPIO=1 KIOSKCAM_HIL_GPIO_CHIP="$CHIP" KIOSKCAM_HIL_GPIO_SIM="$SIM" \
        "$XCTEST" KioskGPIOTests.GPIOHILTests) >"$out" 2>&1
    rc=$?
    grep -E "^HIL" "$out" | sed 's/^HIL:/HIL: gpio:/; s/^HIL message:/HIL: message:/'
    summary=$(grep -E "Executed [0-9]+ tests" "$out" | tail -n 1 | sed 's/^[[:space:]]*//')
    if ((rc == 0)) && [[ $summary == *"Executed"* && $summary != *"skipped"* ]]; then
        hil_pass "KioskGPIOTests.GPIOHILTests against gpio-sim: $summary"
    else
        hil_fail "KioskGPIOTests.GPIOHILTests against gpio-sim" \
            "exit $rc: ${summary:-no summary}; $(grep -E 'error:' "$out" | head -n 3 | tr '\n' ' ')"
    fi
    # Each test by name, so a failure says which.
    grep -E "^Test Case .* (passed|failed)" "$out" | while read -r _ _ name verdict _; do
        name=${name//[\'\[\]-]/}
        if [[ $verdict == passed ]]; then hil_pass "gpio: $name"; else hil_fail "gpio: $name" "see $out"; fi
    done
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
if [[ ! -x $XCTEST ]]; then
    hil_fail "GPIO test class" "$XCTEST missing: run swift build --build-tests first"
elif setup_gpio_sim; then
    run_gpio_tests
    check_lines_released
fi
cp -r "$WORK" "$HIL_RESULTS/work" 2>/dev/null
hil_summary
