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
