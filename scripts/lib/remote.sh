# shellcheck shell=bash
# shellcheck disable=SC2034  # KC_SSH, KC_RSYNC: set here for the scripts that source this
# Shared helpers for the maintainer scripts (kioskcam-status, -logs, -pull, -set-pin,
# -deploy). Sourced, not run. Bash only.
#
# Environment:
#   KIOSKCAM_SSH    the ssh command, split on spaces (default "ssh"), e.g.
#                   "ssh -p 2222 -i ~/.ssh/board". Tests point it at a local shim.
#   KIOSKCAM_RSYNC  the rsync command (default "rsync"); its -e uses KIOSKCAM_SSH.
#
# On the board every command runs as root: directly when the ssh user is root, else
# through `sudo -n` (passwordless sudo; the scripts say so when it is missing). The
# remote side decides, so "board" from ~/.ssh/config works as well as "root@board".

# Options parsed in $(…) exit the script on a bad value too.
shopt -s inherit_errexit

# The script's name for messages, e.g. "kioskcam-pull".
KC_NAME=${KC_NAME:-$(basename "$0")}

kc_die() {
  printf '%s: error: %s\n' "$KC_NAME" "$*" >&2
  exit 1
}

# A bad command line: the message, then where to read about it; exit 64 (EX_USAGE).
kc_usage_error() {
  printf '%s: error: %s\n' "$KC_NAME" "$*" >&2
  printf 'Try: %s --help\n' "$KC_NAME" >&2
  exit 64
}

# kc_value OPTION VALUE…: the value after an option, or a usage error naming it.
kc_value() {
  if [ $# -lt 2 ] || [ -z "$2" ]; then kc_usage_error "$1 needs a value"; fi
  printf '%s' "$2"
}

kc_info() {
  printf '%s: %s\n' "$KC_NAME" "$*" >&2
}

# Checks the first argument is a host ("user@board" or "board"), not an option.
kc_check_host() {
  local host=${1-}
  [ -n "$host" ] || kc_usage_error "the board is missing: give user@board as the first argument"
  case "$host" in
    -*) kc_usage_error "the first argument must be the board (user@board), not the option '$host'" ;;
    *[[:space:]]*) kc_usage_error "'$host' is not a host name" ;;
  esac
}

# The ssh command as an array, from KIOSKCAM_SSH.
kc_ssh_command() {
  local -a words
  read -r -a words <<<"${KIOSKCAM_SSH:-ssh}"
  [ ${#words[@]} -gt 0 ] || words=(ssh)
  KC_SSH=("${words[@]}")
}

# The rsync command as an array, from KIOSKCAM_RSYNC.
kc_rsync_command() {
  local -a words
  read -r -a words <<<"${KIOSKCAM_RSYNC:-rsync}"
  [ ${#words[@]} -gt 0 ] || words=(rsync)
  KC_RSYNC=("${words[@]}")
}

# Quotes each argument for a POSIX shell ('…', with ' as '\''), joined by spaces:
# ssh hands the remote side one string, which its shell splits again.
kc_quote() {
  local quoted="" arg
  for arg in "$@"; do
    quoted+="'${arg//\'/\'\\\'\'}' "
  done
  printf '%s' "${quoted% }"
}

# Run as root on the board: exec directly when already root, else through sudo -n,
# with a clear message when sudo would ask for a password. $0 is the program.
# shellcheck disable=SC2016  # expanded by the board's shell, not here
KC_AS_ROOT='if [ "$(id -u)" -ne 0 ]; then
  if ! sudo -n true 2>/dev/null; then
    echo "kioskcam: $(id -un)@$(hostname) needs passwordless sudo for this (or connect as root@)" >&2
    exit 77
  fi
  exec sudo -n -- "$0" "$@"
fi
exec "$0" "$@"'

# kc_remote HOST [--tty] [--] PROGRAM ARGS…: runs PROGRAM as root on the board, with
# this script's stdin/stdout/stderr. Arguments are passed quoted, never re-parsed.
# --tty asks for a terminal when we have one (so Ctrl-C stops e.g. journalctl -f).
kc_remote() {
  local host=$1
  shift
  local -a ssh_options=()
  if [ "${1-}" = --tty ]; then
    shift
    if [ -t 0 ] && [ -t 1 ]; then ssh_options+=(-t); fi
  fi
  [ "${1-}" = -- ] && shift
  kc_ssh_command
  "${KC_SSH[@]}" "${ssh_options[@]}" "$host" "$(kc_quote sh -c "$KC_AS_ROOT" "$@")"
}

# kc_remote_script HOST SCRIPT [ARGS…]: runs a POSIX sh SCRIPT as root on the board;
# ARGS become $1…; $0 is "kioskcam-remote".
kc_remote_script() {
  local host=$1 script=$2
  shift 2
  kc_remote "$host" sh -c "$script" kioskcam-remote "$@"
}

# The --rsync-path that runs the board's rsync as root (same rule as kc_remote).
kc_rsync_path() {
  kc_quote sh -c "$KC_AS_ROOT" rsync
  # rsync appends its own arguments (--server …) after this string.
}

# Normalises a date (YYYYMMDD or YYYY-MM-DD) to YYYYMMDD; fails on anything else.
kc_date_stamp() {
  local text=${1//-/}
  [[ "$text" =~ ^[0-9]{8}$ ]] || return 1
  local month=${text:4:2} day=${text:6:2}
  [ "$((10#$month))" -ge 1 ] && [ "$((10#$month))" -le 12 ] || return 1
  [ "$((10#$day))" -ge 1 ] && [ "$((10#$day))" -le 31 ] || return 1
  printf '%s' "$text"
}

# The CPU an ELF binary is for, from its header's e_machine, as `uname -m` names it
# (x86_64, aarch64, armv7l); "not-elf" for anything else.
kc_elf_machine() {
  local magic machine
  magic=$(od -An -N4 -tx1 "$1" | tr -d ' \n')
  [ "$magic" = 7f454c46 ] || { printf 'not-elf'; return; }
  machine=$(od -An -j18 -N2 -tx1 "$1" | tr -d ' \n')
  case "$machine" in
    3e00) printf x86_64 ;;
    b700) printf aarch64 ;;
    2800) printf armv7l ;;
    *) printf 'elf-machine-%s' "$machine" ;;
  esac
}

# True when a binary needs the Swift runtime's shared libraries (built without
# --static-swift-stdlib), which a board does not have.
kc_needs_swift_runtime() {
  readelf -d "$1" 2>/dev/null | grep -q 'NEEDED.*libswiftCore\.so'
}
