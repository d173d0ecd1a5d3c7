#!/usr/bin/env bash
# shellcheck disable=SC2016  # the board's stubs are written in single quotes on purpose
# Runs the maintainer scripts (scripts/kioskcam-*) against a local "board": ssh is
# Tests/scripts/ssh-shim (runs the remote command here with bash -c), the board's
# systemctl/journalctl/kioskcam/sudo are logging stubs, its media library and root
# are temp folders, and rsync is the real one. Then scripts/check-rootfs.
# Usage: Tests/scripts/test-maintainer-scripts.sh     (root needed for the udev check)
# KIOSKCAM_BUILD_DIR: where the kioskcam binary that deploy installs is (default .build/debug).
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
scripts=$repo/scripts
build_dir=${KIOSKCAM_BUILD_DIR:-$repo/.build/debug}
case "$build_dir" in /*) ;; *) build_dir=$repo/$build_dir ;; esac

# The real tools the checks use: a missing one fails here, naming its package, rather
# than quietly leaving checks out (scripts/install-deps --test installs them all).
absent=()
for entry in rsync:rsync readelf:binutils dpkg:dpkg dpkg-deb:dpkg tar:tar cmp:diffutils awk:mawk \
  /usr/bin/systemctl:systemd /usr/bin/systemd-sysusers:systemd /usr/bin/systemd-tmpfiles:systemd; do
  command -v "${entry%%:*}" >/dev/null || absent+=("${entry%%:*} (apt-get install ${entry#*:})")
done
if [ ${#absent[@]} -gt 0 ]; then
  printf 'test-maintainer-scripts: missing: %s\n' "${absent[@]}" >&2
  exit 1
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
board=$work/board
stubs=$work/board-bin
mkdir -p "$board" "$stubs"

export KIOSKCAM_SSH="$repo/Tests/scripts/ssh-shim -p 22 -o BatchMode=yes"
export KIOSKCAM_TEST_SSH_LOG=$work/ssh.log
export KIOSKCAM_TEST_BOARD_BIN=$stubs
export STUB_LOG=$work/stub.log STUB_ENV_LOG=$work/env.log STUB_PIN_FILE=$board/pin-received
unset KIOSKCAM_RSYNC STUB_UID STUB_UNAME STUB_CONFIG_STATUS STUB_RESTART_STATUS STUB_PIN_STATUS

# --- the board's commands: each logs its name and arguments (one per line, "  "-indented)
stub() {
  local name=$1 body=$2
  cat >"$stubs/$name" <<EOF
#!/usr/bin/env bash
{ printf '%s\n' "$name"; printf '  %s\n' "\$@"; } >>"\$STUB_LOG"
env >>"\$STUB_ENV_LOG"
$body
EOF
  chmod +x "$stubs/$name"
}
stub kioskcam '
case "$1 ${2-}" in
  "status --json") echo "{\"recording\":false}" ;;
  "status ") echo "kioskcam: idle; PIN set; device 3f2a" ;;
  "pin set")
    [ "${3-}" = --stdin ] || exit 64
    IFS= read -r pin
    # Every ancestor'"'"'s command line, to prove the PIN is on none of them.
    p=$$; while [ "$p" -gt 1 ]; do tr "\0" " " </proc/$p/cmdline >>"$STUB_LOG"; echo >>"$STUB_LOG"; p=$(awk "/^PPid:/ {print \$2}" /proc/$p/status); done
    [ "${STUB_PIN_STATUS:-0}" = 0 ] || { echo "kioskcam: error: the PIN was refused" >&2; exit "$STUB_PIN_STATUS"; }
    printf "%s" "$pin" >"$STUB_PIN_FILE"; echo "PIN changed" ;;
  "pin status") echo "PIN: set by the maintainer" ;;
  "config check") exit "${STUB_CONFIG_STATUS:-0}" ;;
  "clip "*)
    # As the daemon answers: a clip written under the media root'"'"'s exports/tmp.
    [ -n "${STUB_CLIP_PATH:-}" ] && { echo "$STUB_CLIP_PATH"; exit 0; }
    [ "${STUB_CLIP_STATUS:-0}" = 0 ] || { echo "kioskcam: error: the daemon refused clip.export: --from 9 s is beyond the end" >&2; exit 1; }
    mkdir -p "$STUB_MEDIA/exports/tmp"
    echo "clip: $*" >"$STUB_MEDIA/exports/tmp/video-20261103-100000_1500-4000.mp4"
    echo "$STUB_MEDIA/exports/tmp/video-20261103-100000_1500-4000.mp4" ;;
  *) echo "kioskcam stub: unexpected: $*" >&2; exit 70 ;;
esac'
stub systemctl '
case "$*" in *--root=*) exec /usr/bin/systemctl "$@" ;; esac
case " $* " in
  *" status "*) printf "● kioskcam.service - KioskCam camera appliance\n     Active: active (running)\n" ;;
  *" restart "*) exit "${STUB_RESTART_STATUS:-0}" ;;
esac'
stub journalctl 'echo "2026-11-22T08:00:00+0000 board kioskcam[412]: recording started"'
stub udevadm ':'
stub systemd-sysusers 'case "$*" in *--root=*) exec /usr/bin/systemd-sysusers "$@" ;; esac'
stub systemd-tmpfiles 'case "$*" in *--root=*) exec /usr/bin/systemd-tmpfiles "$@" ;; esac'
stub uname '[ -n "${STUB_UNAME:-}" ] && [ "${1-}" = -m ] && { echo "$STUB_UNAME"; exit 0; }; exec /usr/bin/uname "$@"'
stub id '[ -n "${STUB_UID:-}" ] && [ "${1-}" = -u ] && { echo "$STUB_UID"; exit 0; }; exec /usr/bin/id "$@"'
stub sudo '
[ "$1" = -n ] || exit 1
shift
[ "$1" = true ] && exit "${STUB_SUDO_STATUS:-0}"
[ "$1" = -- ] && shift
exec "$@"'
cat >"$work/rsync-stub" <<'EOF'
#!/usr/bin/env bash
{ printf 'rsync\n'; printf '  %s\n' "$@"; } >>"$STUB_LOG"
EOF
chmod +x "$work/rsync-stub"

# --- checks
passes=0
failures=0
pass() { passes=$((passes + 1)); }
fail() { failures=$((failures + 1)); printf 'FAIL: %s\n' "$*"; [ -s "$work/err" ] && sed 's/^/      stderr: /' "$work/err" | head -8; return 0; }
# run STATUS COMMAND…: runs it (stdin from $work/in when present), keeps stdout/stderr.
run() {
  local want=$1 got=0
  shift
  : >"$STUB_LOG"
  : >"$KIOSKCAM_TEST_SSH_LOG"
  : >"$STUB_ENV_LOG"
  if [ -f "$work/in" ]; then "$@" <"$work/in" >"$work/out" 2>"$work/err" || got=$?; rm -f "$work/in"
  else "$@" </dev/null >"$work/out" 2>"$work/err" || got=$?; fi
  if [ "$got" = "$want" ]; then pass; else fail "$* exited $got, expected $want"; fi
}
has() { if grep -qF -- "$2" "$1"; then pass; else fail "$(basename "$1") lacks '$2'"; fi; }
lacks() { if grep -qF -- "$2" "$1"; then fail "$(basename "$1") contains '$2'"; else pass; fi; }
exists() { if [ -e "$1" ] || [ -L "$1" ]; then pass; else fail "missing: ${1#"$work"/}"; fi; }
absent() { if [ -e "$1" ] || [ -L "$1" ]; then fail "should not exist: ${1#"$work"/}"; else pass; fi; }
# owned_by_kioskcam ROOT PATH…: each PATH (not following links) belongs to ROOT's user
# and group kioskcam, by the numbers in ROOT/etc/passwd and ROOT/etc/group.
owned_by_kioskcam() {
  local root=$1 uid gid path got
  shift
  uid=$(awk -F: '$1 == "kioskcam" { print $3 }' "$root/etc/passwd" 2>/dev/null)
  gid=$(awk -F: '$1 == "kioskcam" { print $3 }' "$root/etc/group" 2>/dev/null)
  for path in "$@"; do
    got=$(stat -c '%u:%g' "$path" 2>&1)
    if [ -n "$uid" ] && [ "$got" = "$uid:$gid" ]; then pass; else fail "${path#"$work"/} is owned by '$got', not kioskcam (${uid:-no user}:${gid:-no group})"; fi
  done
}
# The daemon's user as sysusers.d made it below ROOT: a system user, primary group
# kioskcam, home /var/lib/kioskcam, no login shell, in the device groups.
kioskcam_user() {
  local root=$1 entry group
  entry=$(grep '^kioskcam:' "$root/etc/passwd" 2>/dev/null || true)
  if [[ "$entry" =~ ^kioskcam:x:([0-9]+):([0-9]+):[^:]*:/var/lib/kioskcam:/usr/sbin/nologin$ ]] && [ "${BASH_REMATCH[1]}" -lt 1000 ] \
    && grep -q "^kioskcam:x:${BASH_REMATCH[2]}:" "$root/etc/group"; then pass; else fail "no system user kioskcam (group kioskcam, home /var/lib/kioskcam, nologin) below ${root#"$work"/}: '$entry'"; fi
  for group in video audio input render gpio; do
    if grep -Eq "^$group:[^:]*:[0-9]+:(.*,)?kioskcam(,|$)" "$root/etc/group"; then pass; else fail "kioskcam is not in group $group below ${root#"$work"/}"; fi
  done
}
# as_older_root_install ROOT: /var/lib/kioskcam as a package from before the user left it
# (the daemon ran as root): all root's, a device ID, footage, and a link to a root file
# outside that handing the tree over must not touch; and a metrics file a crash left in
# node_exporter's folder, which the new daemon could not replace there.
as_older_root_install() {
  local state=$1/var/lib/kioskcam
  mkdir -p "$state/media/video/20261101" "$1/var/lib/prometheus/node-exporter"
  echo "kioskcam_recording 0" >"$1/var/lib/prometheus/node-exporter/kioskcam.prom"
  echo 3f2a >"$state/device-id"
  chmod 600 "$state/device-id"
  echo footage >"$state/media/video/20261101/070000.mp4"
  echo "not the state folder's" >"$work/outside-$(basename "$1")"
  ln -sfn "$work/outside-$(basename "$1")" "$state/media/link-outside"
  chown -R -h 0:0 "$state" "$work/outside-$(basename "$1")"
}

# The stub calls, in order: "before" must come before "after".
in_order() {
  local a b
  a=$(grep -nxF -- "$1" "$STUB_LOG" | head -1 | cut -d: -f1)
  b=$(grep -nxF -- "$2" "$STUB_LOG" | head -1 | cut -d: -f1)
  if [ -n "$a" ] && [ -n "$b" ] && [ "$a" -lt "$b" ]; then pass; else fail "'$1' (line ${a:-none}) should come before '$2' (line ${b:-none})"; fi
}

echo "== --help and bad command lines"
for name in kioskcam-status kioskcam-logs kioskcam-pull kioskcam-set-pin kioskcam-deploy check-rootfs package-deb; do
  run 0 "$scripts/$name" --help
  has "$work/out" "Usage:"
done
for name in kioskcam-status kioskcam-logs kioskcam-pull kioskcam-set-pin kioskcam-deploy; do
  run 64 "$scripts/$name"
  has "$work/err" "give user@board as the first argument"
  run 64 "$scripts/$name" --bogus
  run 64 "$scripts/$name" root@board --bogus
  has "$work/err" "unknown option '--bogus'"
done

echo "== kioskcam-status"
run 0 "$scripts/kioskcam-status" root@board
has "$work/out" "Active: active (running)"
has "$work/out" "kioskcam: idle; PIN set"
has "$KIOSKCAM_TEST_SSH_LOG" "BatchMode=yes"
run 0 "$scripts/kioskcam-status" root@board --json
if [ "$(cat "$work/out")" = '{"recording":false}' ]; then pass; else fail "status --json printed more than the JSON: $(cat "$work/out")"; fi

echo "== kioskcam-logs"
run 0 "$scripts/kioskcam-logs" root@board -n 50 --since "1 hour ago" -p warning -g 'it'\''s $HOME; rm -rf /'
has "$work/out" "recording started"
for arg in --unit=kioskcam.service --lines=50 "1 hour ago" --priority warning "it's \$HOME; rm -rf /" --no-pager; do
  has "$STUB_LOG" "  $arg"
done
run 0 "$scripts/kioskcam-logs" root@board -f -b -1
has "$STUB_LOG" "  --follow"
has "$STUB_LOG" "  -1"
run 64 "$scripts/kioskcam-logs" root@board -n lots
run 64 "$scripts/kioskcam-logs" root@board --since

echo "== kioskcam-pull"
media=$board/media
for path in video/20261101/070000.mp4 video/20261102/080000.mp4 video/20261102/090000.mp4 video/20261102/.index \
  video/20261103/100000.mp4 "photo/20261102/080001 copy.jpg" audio/20261103/101010.m4a audio/20261103/101010.png \
  video/lost+found/junk video/2026110/short.mp4 .incoming/video-20261103-110000.mp4.part; do
  mkdir -p "$media/$(dirname "$path")"
  echo "content of $path" >"$media/$path"
done
pulled=$work/pulled
run 0 "$scripts/kioskcam-pull" root@board --from 2026-11-02 --to 20261103 -d "$pulled" --remote-media "$media"
for path in video/20261102/080000.mp4 video/20261102/090000.mp4 video/20261102/.index video/20261103/100000.mp4 \
  "photo/20261102/080001 copy.jpg" audio/20261103/101010.m4a audio/20261103/101010.png; do
  exists "$pulled/$path"
done
for path in video/20261101 video/lost+found video/2026110 .incoming; do absent "$pulled/$path"; done
has "$work/err" "copied 7 new or changed file(s)"
if cmp -s "$media/video/20261102/080000.mp4" "$pulled/video/20261102/080000.mp4"; then pass; else fail "pulled file differs"; fi
run 0 "$scripts/kioskcam-pull" root@board --from 20261102 --to 20261103 -d "$pulled" --remote-media "$media"
has "$work/err" "copied 0 new or changed file(s)"
run 0 "$scripts/kioskcam-pull" root@board --date 20261101 --kind photo,audio -d "$pulled" --remote-media "$media"
has "$work/err" "nothing to pull"
run 0 "$scripts/kioskcam-pull" root@board --dry-run -d "$work/dry" --remote-media "$media"
has "$work/out" "video/20261101/070000.mp4"
has "$work/err" "would copy 8 file(s)"
absent "$work/dry"
# Deleting: without --yes only a report; with it only the pulled days go.
run 0 "$scripts/kioskcam-pull" root@board --date 20261102 --delete-after-pull -d "$pulled" --remote-media "$media"
has "$work/err" "would now remove 4 file(s) in 2 day folder(s)"
has "$work/err" "add --yes"
exists "$media/video/20261102/080000.mp4"
run 0 "$scripts/kioskcam-pull" root@board --date 20261102 --delete-after-pull --yes -d "$pulled" --remote-media "$media" -q
has "$work/err" "deleted the pulled files"
absent "$media/video/20261102"
absent "$media/photo/20261102"
exists "$media/video/20261101/070000.mp4"
exists "$media/video/20261103/100000.mp4"
exists "$media/.incoming/video-20261103-110000.mp4.part"
exists "$pulled/photo/20261102/080001 copy.jpg"
run 64 "$scripts/kioskcam-pull" root@board --yes
run 64 "$scripts/kioskcam-pull" root@board --from 20261399
run 64 "$scripts/kioskcam-pull" root@board --from 20261105 --to 20261101
run 64 "$scripts/kioskcam-pull" root@board --kind movies
run 1 "$scripts/kioskcam-pull" root@board --remote-media "$work/no-such-media" -d "$pulled"
has "$work/err" "no media library at $work/no-such-media"
# Through sudo (a non-root ssh user): rsync's far end runs under sudo -n.
STUB_UID=1000 run 0 "$scripts/kioskcam-pull" pi@board --date 20261103 -d "$work/pulled-sudo" --remote-media "$media"
exists "$work/pulled-sudo/video/20261103/100000.mp4"
has "$STUB_LOG" "  rsync"
STUB_UID=1000 STUB_SUDO_STATUS=1 run 1 "$scripts/kioskcam-pull" pi@board -d "$work/pulled-sudo" --remote-media "$media"
has "$work/err" "needs passwordless sudo"

echo "== kioskcam-pull --clip"
export STUB_MEDIA=$media
run 0 "$scripts/kioskcam-pull" root@board --clip video/20261103/100000.mp4 --from 1.5 --to 0:04 --reencode --size 320x180 -d "$work/clips"
has "$work/out" "$work/clips/video-20261103-100000_1500-4000.mp4"
has "$work/clips/video-20261103-100000_1500-4000.mp4" "clip: clip video/20261103/100000.mp4 --from 1.5 --to 0:04 --reencode --size 320x180"
absent "$media/exports/tmp/video-20261103-100000_1500-4000.mp4"
run 64 "$scripts/kioskcam-pull" root@board --clip /etc/shadow
run 64 "$scripts/kioskcam-pull" root@board --clip video/20261103/../../x.mp4
run 64 "$scripts/kioskcam-pull" root@board --clip video/20261103/100000.mp4 --delete-after-pull
run 64 "$scripts/kioskcam-pull" root@board --reencode --date 20261103
has "$work/err" "--reencode only goes with --clip"
run 64 "$scripts/kioskcam-pull" root@board --from 1.5
STUB_CLIP_STATUS=1 run 1 "$scripts/kioskcam-pull" root@board --clip video/20261103/100000.mp4 --from 9 -d "$work/clips"
has "$work/err" "beyond the end"
has "$work/err" "could not cut the clip"
# A board that answers a path outside its exports area: nothing is fetched or removed.
STUB_CLIP_PATH=$media/video/20261103/100000.mp4 run 1 "$scripts/kioskcam-pull" root@board --clip video/20261103/100000.mp4 -d "$work/clips"
has "$work/err" "not a clip under exports/tmp"
exists "$media/video/20261103/100000.mp4"
# Or one that climbs out of it, or is no clip: refused the same way, nothing removed.
for answer in "$media/exports/tmp/../../video/20261103/100000.mp4" "$media/exports/tmp/../video.mp4" \
  "$media/exports/tmp/shadow" "$media/exports/tmp/.hidden.mp4" "exports/tmp/x.mp4"; do
  STUB_CLIP_PATH=$answer run 1 "$scripts/kioskcam-pull" root@board --clip video/20261103/100000.mp4 -d "$work/clips"
  has "$work/err" "not a clip under exports/tmp"
done
exists "$media/video/20261103/100000.mp4"
unset STUB_MEDIA

echo "== kioskcam-set-pin"
pin=4711
printf '%s\n' "$pin" >"$work/in"
run 0 "$scripts/kioskcam-set-pin" root@board
if [ "$(cat "$STUB_PIN_FILE")" = "$pin" ]; then pass; else fail "the board received '$(cat "$STUB_PIN_FILE" 2>/dev/null)', not the PIN"; fi
has "$STUB_LOG" "  --stdin"
has "$work/out" "PIN: set by the maintainer"
lacks "$KIOSKCAM_TEST_SSH_LOG" "$pin"
lacks "$STUB_LOG" "$pin"
lacks "$STUB_ENV_LOG" "$pin"
has "$STUB_LOG" "kioskcam-set-pin root@board"
# Through sudo: the PIN is not on sudo's command line either.
rm -f "$STUB_PIN_FILE"
printf '%s\n' 2580 >"$work/in"
STUB_UID=1000 run 0 "$scripts/kioskcam-set-pin" pi@board
if [ "$(cat "$STUB_PIN_FILE")" = 2580 ]; then pass; else fail "through sudo the board did not receive the PIN"; fi
has "$STUB_LOG" "sudo"
lacks "$STUB_LOG" 2580
lacks "$KIOSKCAM_TEST_SSH_LOG" 2580
# Refused before anything is sent.
for bad in 12a4 123 12345 ""; do
  printf '%s\n' "$bad" >"$work/in"
  run 64 "$scripts/kioskcam-set-pin" root@board
  if [ -s "$KIOSKCAM_TEST_SSH_LOG" ]; then fail "a bad PIN '$bad' reached ssh"; else pass; fi
done
run 64 "$scripts/kioskcam-set-pin" root@board 1234
has "$work/err" "never an argument"
printf '1234\n' >"$work/in"
STUB_PIN_STATUS=1 run 1 "$scripts/kioskcam-set-pin" root@board
has "$work/err" "the old PIN still applies"

echo "== kioskcam-deploy"
binary=$build_dir/kioskcam
if [ ! -x "$binary" ]; then
  fail "no kioskcam binary at $binary to deploy (build first, or set KIOSKCAM_BUILD_DIR)"
else
  root=$work/board-root
  # Offline install into a board root: real rsync, sysusers, tmpfiles, systemctl --root,
  # and the real binary checking the real default config.
  run 0 "$scripts/kioskcam-deploy" root@board --binary "$binary" --remote-root "$root" --force
  if readelf -d "$binary" 2>/dev/null | grep -q 'libswiftCore\.so'; then has "$work/err" "links the Swift runtime dynamically"; fi
  if cmp -s "$binary" "$root/usr/bin/kioskcam"; then pass; else fail "the binary did not arrive intact"; fi
  if cmp -s "$(dirname "$binary")/kioskcam-camera" "$root/usr/bin/kioskcam-camera"; then pass; else fail "the camera helper did not arrive beside kioskcam"; fi
  if [ "$(stat -c %a "$root/usr/bin/kioskcam")" = 755 ]; then pass; else fail "binary mode $(stat -c %a "$root/usr/bin/kioskcam")"; fi
  for path in usr/lib/systemd/system/kioskcam.service usr/lib/udev/rules.d/70-kioskcam.rules usr/lib/tmpfiles.d/kioskcam.conf \
    usr/lib/sysusers.d/kioskcam.conf etc/kioskcam/kioskcam.toml etc/systemd/system/multi-user.target.wants/kioskcam.service; do
    exists "$root/$path"
  done
  has "$root/etc/group" "kioskcam:x:"
  # The daemon runs as its own user, which exists once deployed and owns the state.
  kioskcam_user "$root"
  has "$root/usr/lib/systemd/system/kioskcam.service" "User=kioskcam"
  if [ "$(stat -c %a "$root/var/lib/kioskcam")" = 700 ]; then pass; else fail "state folder mode $(stat -c %a "$root/var/lib/kioskcam")"; fi
  owned_by_kioskcam "$root" "$root/var/lib/kioskcam" "$root/var/lib/kioskcam/media"
  # A board whose state folder is root's (the daemon ran as root): handed over once,
  # links changed themselves and never what they point to.
  as_older_root_install "$root"
  # The board's config is kept, unless --config (then backed up).
  echo "# edited on the board" >>"$root/etc/kioskcam/kioskcam.toml"
  run 0 "$scripts/kioskcam-deploy" root@board --binary "$binary" --remote-root "$root" --force
  has "$root/etc/kioskcam/kioskcam.toml" "# edited on the board"
  has "$work/err" "handing $root/var/lib/kioskcam to the user kioskcam"
  owned_by_kioskcam "$root" "$root/var/lib/kioskcam" "$root/var/lib/kioskcam/device-id" "$root/var/lib/kioskcam/media/video/20261101/070000.mp4" \
    "$root/var/lib/kioskcam/media/link-outside"
  if [ "$(stat -c %u "$work/outside-board-root")" = 0 ]; then pass; else fail "deploy's hand-over followed a link out of the state folder"; fi
  absent "$root/var/lib/prometheus/node-exporter/kioskcam.prom"
  if [ "$(stat -c %a "$root/var/lib/prometheus/node-exporter")" = 1775 ]; then pass; else fail "textfile folder mode $(stat -c %a "$root/var/lib/prometheus/node-exporter")"; fi
  if [ "$(stat -c %a "$root/var/lib/kioskcam/device-id")" = 600 ]; then pass; else fail "device-id mode $(stat -c %a "$root/var/lib/kioskcam/device-id") after the hand-over"; fi
  run 0 "$scripts/kioskcam-deploy" root@board --binary "$binary" --remote-root "$root" --force --config
  lacks "$work/err" "handing"
  lacks "$root/etc/kioskcam/kioskcam.toml" "# edited on the board"
  has "$root/etc/kioskcam/kioskcam.toml.bak" "# edited on the board"
  # Safety: wrong CPU, dynamic Swift runtime, dry run.
  STUB_UNAME=aarch64 run 1 "$scripts/kioskcam-deploy" root@board --binary "$binary" --remote-root "$work/root-arm"
  has "$work/err" "but root@board is aarch64"
  absent "$work/root-arm"
  if readelf -d "$binary" 2>/dev/null | grep -q 'libswiftCore\.so'; then
    run 1 "$scripts/kioskcam-deploy" root@board --binary "$binary" --remote-root "$work/root-dyn"
    has "$work/err" "--static-swift-stdlib"
  fi
  run 0 "$scripts/kioskcam-deploy" root@board --binary "$binary" --remote-root "$work/root-dry" --force --dry-run
  has "$work/out" "usr/lib/systemd/system/kioskcam.service"
  absent "$work/root-dry"
  # On the live board (/): rsync stubbed, so only the command sequence is checked.
  export KIOSKCAM_RSYNC=$work/rsync-stub
  run 0 "$scripts/kioskcam-deploy" root@board --binary "$binary" --force
  has "$STUB_LOG" "  root@board:/"
  in_order "systemd-sysusers" "systemctl"
  in_order "  daemon-reload" "  check"
  in_order "  check" "  enable"
  in_order "  enable" "  restart"
  in_order "  restart" "  status"
  has "$work/out" "Active: active (running)"
  STUB_CONFIG_STATUS=78 run 78 "$scripts/kioskcam-deploy" root@board --binary "$binary" --force
  has "$work/err" "the config is not valid for the new binary"
  lacks "$STUB_LOG" "  restart"
  run 0 "$scripts/kioskcam-deploy" root@board --binary "$binary" --force --no-restart
  lacks "$STUB_LOG" "  restart"
  has "$STUB_LOG" "  enable"
  STUB_RESTART_STATUS=1 run 1 "$scripts/kioskcam-deploy" root@board --binary "$binary" --force
  has "$STUB_LOG" "journalctl"
  unset KIOSKCAM_RSYNC
fi

echo "== package-deb (a stand-in binary: layout, control, maintainer scripts)"
# /usr/bin/true: a small ELF without the Swift runtime, so the package logic is tested
# in seconds; the real release .deb is built the same way (docs/board.md).
run 0 "$scripts/package-deb" --arch "$(dpkg --print-architecture)" --binary /usr/bin/true --broadcast-binary /usr/bin/false \
  --camera-binary /usr/bin/yes --output "$work/deb" --compression none --version 1.2.3
deb=$work/deb/kioskcam_1.2.3_$(dpkg --print-architecture).deb
exists "$deb"
dpkg-deb --info "$deb" >"$work/info"
for field in "Package: kioskcam" "Version: 1.2.3" "libcurl4" "libgpiod2" "libevdev2" "libcairo2" "libsystemd0" "fonts-dejavu-core" "libc6"; do
  has "$work/info" "$field"
done
# Both programs ship their own FFmpeg (scripts/build-release): Debian's is no dependency.
lacks "$work/info" "libavcodec"
dpkg-deb --contents "$deb" >"$work/contents"
for path in ./usr/bin/kioskcam ./usr/bin/kioskcam-broadcast ./usr/bin/kioskcam-camera ./usr/lib/systemd/system/kioskcam.service ./usr/lib/udev/rules.d/70-kioskcam.rules \
  ./usr/lib/tmpfiles.d/kioskcam.conf ./usr/lib/sysusers.d/kioskcam.conf ./etc/kioskcam/kioskcam.toml ./usr/share/doc/kioskcam/copyright ./usr/share/doc/kioskcam/docs/timelapse.md ./usr/share/doc/kioskcam/docs/api.yaml; do
  has "$work/contents" " $path"
done
dpkg-deb --ctrl-tarfile "$deb" | tar -xO ./conffiles >"$work/conffiles"
has "$work/conffiles" /etc/kioskcam/kioskcam.toml
run 1 "$scripts/package-deb" --arch arm64 --binary /usr/bin/true --broadcast-binary /usr/bin/false --output "$work/deb"
has "$work/err" "not arm64"
run 1 "$scripts/package-deb" --binary /usr/bin/true --broadcast-binary "$work/no-such-broadcast" --output "$work/deb"
has "$work/err" "scripts/build-release"
if [ -x "$binary" ] && kc_binary_dynamic=$(readelf -d "$binary" 2>/dev/null) && grep -q libswiftCore <<<"$kc_binary_dynamic"; then
  run 1 "$scripts/package-deb" --binary "$binary" --broadcast-binary /usr/bin/false --output "$work/deb"
  has "$work/err" "--static-swift-stdlib"
fi
# Install into a temp root with the real maintainer scripts (DPKG_ROOT), upgrade, purge.
droot=$work/dpkg-root
mkdir -p "$droot/var/lib/dpkg/updates" "$droot/var/lib/dpkg/info"
touch "$droot/var/lib/dpkg/status"
dpkg_in_root() { dpkg --root="$droot" --force-script-chrootless --force-depends --log=/dev/null "$@"; }
run 0 dpkg_in_root -i "$deb"
exists "$droot/usr/bin/kioskcam"
exists "$droot/usr/bin/kioskcam-broadcast"
exists "$droot/usr/bin/kioskcam-camera"
exists "$droot/etc/systemd/system/multi-user.target.wants/kioskcam.service"
has "$droot/etc/group" "kioskcam:x:"
kioskcam_user "$droot"
has "$droot/usr/lib/systemd/system/kioskcam.service" "User=kioskcam"
has "$droot/usr/lib/udev/rules.d/70-kioskcam.rules" 'KERNEL=="gpiochip[0-9]*", GROUP="gpio", MODE="0660"'
if [ "$(stat -c %a "$droot/var/lib/kioskcam")" = 700 ]; then pass; else fail "dpkg install: state folder mode $(stat -c %a "$droot/var/lib/kioskcam")"; fi
owned_by_kioskcam "$droot" "$droot/var/lib/kioskcam" "$droot/var/lib/kioskcam/media"
# An upgrade from a package whose daemon ran as root: the tree is handed over once.
as_older_root_install "$droot"
echo "# local edit" >>"$droot/etc/kioskcam/kioskcam.toml"
echo footage >"$droot/var/lib/kioskcam/media/keep.mp4"
chown 0:0 "$droot/var/lib/kioskcam/media/keep.mp4"
run 0 dpkg_in_root -i "$deb"
has "$droot/etc/kioskcam/kioskcam.toml" "# local edit"
has "$work/err" "now belongs to the user kioskcam"
owned_by_kioskcam "$droot" "$droot/var/lib/kioskcam" "$droot/var/lib/kioskcam/device-id" "$droot/var/lib/kioskcam/media/keep.mp4" \
  "$droot/var/lib/kioskcam/media/video/20261101/070000.mp4" "$droot/var/lib/kioskcam/media/link-outside"
if [ "$(stat -c %u "$work/outside-dpkg-root")" = 0 ]; then pass; else fail "the postinst's hand-over followed a link out of the state folder"; fi
absent "$droot/var/lib/prometheus/node-exporter/kioskcam.prom"
if [ "$(stat -c %a "$droot/var/lib/prometheus/node-exporter")" = 1775 ]; then pass; else fail "dpkg: textfile folder mode $(stat -c %a "$droot/var/lib/prometheus/node-exporter")"; fi
run 0 dpkg_in_root -i "$deb"
lacks "$work/err" "now belongs to the user kioskcam"
run 0 dpkg_in_root --purge kioskcam
absent "$droot/usr/bin/kioskcam"
absent "$droot/etc/systemd/system/multi-user.target.wants/kioskcam.service"
absent "$droot/etc/kioskcam/kioskcam.toml"
exists "$droot/var/lib/kioskcam/media/keep.mp4"
# The user stays with the files it owns.
has "$droot/etc/passwd" "kioskcam:x:"

echo "== hardware/pinmap.toml agrees with the default config"
config=$repo/rootfs/etc/kioskcam/kioskcam.toml
pinmap=$repo/hardware/pinmap.toml
for pair in record_button:record_line snapshot_button:snapshot_line status_led:led_line; do
  gpio=$(sed -n "/^\[${pair%%:*}\]/,/^\[/s/^gpio = \([0-9]*\)/\1/p" "$pinmap")
  has "$config" "${pair#*:} = $gpio"
done

echo "== check-rootfs"
# The daemon listens on the network (the web server): its unit's exposure stays at or
# below 2.0, it runs as kioskcam, and udev gives the GPIO chips to group gpio.
run 0 "$scripts/check-rootfs" --max-exposure 2.0
has "$work/out" "exposure"
has "$work/out" "kioskcam.service runs as User=kioskcam"
has "$work/out" "system user kioskcam"
has "$work/out" "/var/lib/kioskcam and its media folder 0700 kioskcam:kioskcam"
has "$work/out" "gives /dev/gpiochip* to group gpio"
sed -n 's/^\(check-rootfs: .*\)/   \1/p; s/^  \(ok\|skip\|FAIL\) .*/   &/p' "$work/out"
broken=$work/broken-rootfs
cp -a "$repo/rootfs" "$broken"
sed -i 's/^Type=notify$/Type=notifyy/' "$broken/usr/lib/systemd/system/kioskcam.service"
run 1 "$scripts/check-rootfs" --rootfs "$broken" --skip-shellcheck
has "$work/out" "Failed to parse service type"

echo "maintainer scripts: $passes checks passed, $failures failed"
[ "$failures" -eq 0 ]
