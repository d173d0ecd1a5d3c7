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
hil_wait_for() {
    local deadline=$((SECONDS + $1))
    shift
    until "$@" >/dev/null 2>&1; do
        ((SECONDS < deadline)) || return 1
        sleep 0.1
    done
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
