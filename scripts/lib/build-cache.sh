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
# Our own modules are rebuilt anyway (their sources are at the clone's new path). A
# checkout that already has NAME as a real folder keeps using it.

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
