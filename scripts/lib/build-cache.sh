# shellcheck shell=bash
# Build folders kept per machine, not per clone (sourced by scripts/test, scripts/fuzz
# and scripts/build-release).
#
# CI starts from a new clone each run, and SwiftPM rebuilds every dependency (SwiftNIO,
# two copies of BoringSSL, Hummingbird …) into a new .build: minutes of a 2-core
# machine. SwiftPM reuses what a scratch folder holds when it is named by the same path
# — not through a symlink, which it does not resolve — so a clean clone gets NAME as a
# symlink into ~/.cache/kioskcam/NAME-<key>, for the tools that read NAME/debug/…, and
# every swift command is given the real path (`--scratch-path "$(kc_scratch NAME)"`).
# The key is Package.swift's hash and the toolchain's version: another dependency list
# or compiler gets a folder of its own, and only the newest three of each NAME are kept.
# A checkout that already has NAME as a real folder keeps using it.
#
# Our own modules would still be rebuilt in every clone: SwiftPM knows a source by its
# path and its stat (inode, time), and a clone's are all new. So the test command runs a
# clean clone in a copy kept per machine (kc_enter_stable_copy below), where only the
# files whose content changed get a new stat.

# kc_scratch NAME: prints the real path of the build folder NAME (.build, .build-fuzz, …),
# making the per-machine folder and the symlink first when the clone has none.
kc_scratch() {
  local name=$1 root cache key target
  root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
  if [ ! -e "$root/$name" ] && [ ! -L "$root/$name" ]; then
    cache=${XDG_CACHE_HOME:-$HOME/.cache}/kioskcam/swiftpm
    key=$({ cat "$root/Package.swift"; swift --version 2>/dev/null; } | sha256sum | cut -c1-16)
    target=$cache/${name#.}-$key
    mkdir -p "$target"
    touch "$target"   # newest first, for the pruning below
    ln -s "$target" "$root/$name"
    # Older folders of the same name (another Package.swift or toolchain) go, but the
    # three newest, so that a branch switched back and forth keeps its builds.
    find "$cache" -mindepth 1 -maxdepth 1 -type d -regextype posix-extended \
      -regex ".*/${name#.}-[0-9a-f]{16}" -printf '%T@ %p\n' 2>/dev/null |
      sort -rn | tail -n +4 | cut -d' ' -f2- | while read -r old; do rm -rf "$old"; done
  fi
  if [ -L "$root/$name" ]; then readlink -f "$root/$name"; else echo "$root/$name"; fi
}

# kc_enter_stable_copy: when this checkout has no build folder of its own (a clean clone,
# as CI makes), brings ~/.cache/kioskcam/checkout to exactly this checkout's files —
# tracked and untracked, not .git, not what .gitignore names (the copy's own build
# folders and venvs stay) — and sets KC_STABLE_COPY to it; else returns 1. `rsync -c`
# compares contents and, without -t, leaves an unchanged file's stat alone, so SwiftPM in
# the copy rebuilds only the modules whose sources changed since the last run: the same
# files, tested at a path that lasts. The copy is locked (fd 9) for as long as the caller
# runs; a second run meanwhile (or a process the first left behind, holding the lock)
# is told so and tests in place, rebuilding every module, rather than wait or rewrite
# files under a running build.
kc_enter_stable_copy() {
  local root cache
  root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
  if [ -d "$root/.build" ] && [ ! -L "$root/.build" ]; then return 1; fi
  cache=${XDG_CACHE_HOME:-$HOME/.cache}/kioskcam
  KC_STABLE_COPY=$cache/checkout
  [ "$root" = "$KC_STABLE_COPY" ] && return 1
  mkdir -p "$KC_STABLE_COPY"
  exec 9>"$cache/checkout.lock"
  if ! flock -n 9; then
    echo "== $KC_STABLE_COPY is locked by another run ($cache/checkout.lock): testing in place, every module rebuilds"
    exec 9>&-
    return 1
  fi
  rsync -rlpc --delete --filter=':- .gitignore' --exclude=/.git "$root/" "$KC_STABLE_COPY/"
}
