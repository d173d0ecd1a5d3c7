#!/usr/bin/env bash
# Checks the web app against its contract, docs/api.yaml, with schemathesis: a live daemon
# (test camera and tone microphone, everything in a temp dir, a free loopback port), an
# admin and a viewer logged in, then schemathesis runs every operation and checks that no
# answer is a server error (5xx), and that every status code, Content-Type and JSON body is
# one the contract documents.
#
# Usage: Tests/scripts/web-schemathesis.sh PATH/TO/kioskcam [MAX_EXAMPLES]
#   MAX_EXAMPLES: test cases per operation and phase (default 20; the run takes about a minute)
# Needs: schemathesis in .build-tools/schemathesis (scripts/install-deps --test), curl, python3.
#
# Three runs, each with its own credentials:
#   admin   every operation with the admin's session cookie. POST /api/logout gets a
#           session of its own, so the other operations keep theirs. DELETE and PUT
#           /api/settings run too: the library and the state directory are throwaway ones.
#   viewer  the admin-only operations with a viewer's cookie (403 forbidden).
#   nobody  every operation without a session (401, or Basic credentials schemathesis makes up).
# Then: the admin's session still works, the one logged out does not, the daemon still runs.
# The last line is "N passed, M failed" (operations and checks); the exit status is 0 only
# when nothing failed.
set -euo pipefail

root="$(cd "$(dirname "$0")/../.." && pwd)"
kioskcam="${1:-}"
examples="${2:-20}"
[ -n "$kioskcam" ] || { echo "usage: $0 PATH/TO/kioskcam [MAX_EXAMPLES]" >&2; exit 64; }
[ -x "$kioskcam" ] || { echo "web-schemathesis: $kioskcam is not an executable" >&2; exit 64; }
kioskcam="$(cd "$(dirname "$kioskcam")" && pwd)/$(basename "$kioskcam")"
st="$root/.build-tools/schemathesis/bin/st"
[ -x "$st" ] || { echo "web-schemathesis: ERROR: $st missing: run scripts/install-deps --test" >&2; exit 1; }
for command in curl python3; do
  command -v "$command" >/dev/null || { echo "web-schemathesis: ERROR: $command is not on PATH (scripts/install-deps --test)" >&2; exit 1; }
done
spec="$root/docs/api.yaml"

tmp="$(mktemp -d /tmp/kioskcam-schemathesis.XXXXXX)"
daemon="" child=""
# Whether a child of ours still runs (kill -0 is true for one that exited and awaits its wait).
alive() { [ "$(cut -d' ' -f3 "/proc/$1/stat" 2>/dev/null)" = Z ] && return 1; [ -r "/proc/$1/stat" ]; }
cleanup() {
  local status=$?
  if [ -n "$child" ] && kill -0 "$child" 2>/dev/null; then
    kill "$child" 2>/dev/null || true
    wait "$child" 2>/dev/null || true
  fi
  if [ -n "$daemon" ]; then
    kill "$daemon" 2>/dev/null || true
    # A clean stop finishes the recording a fuzzed request may have started; give it time.
    for _ in $(seq 1 100); do alive "$daemon" || break; sleep 0.1; done
    kill -KILL "$daemon" 2>/dev/null || true
    wait "$daemon" 2>/dev/null || true
  fi
  rm -rf "$tmp"
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
base="https://127.0.0.1:$port"
mkdir -p "$tmp/media" "$tmp/state"
cat >"$tmp/kioskcam.toml" <<EOF
[storage]
media_root = "$tmp/media"
# The fixtures live in a fixed day (20260101, the examples in docs/api.yaml): keep it.
retention_days = 3650
[camera]
source = "test"
size = "640x360"
[microphone]
source = "tone"
[control]
state_directory = "$tmp/state"
socket = "$tmp/control.sock"
[screen]
framebuffer = "memory"
[events]
# Manual triggers only (POST /api/event), no motion on the test pattern.
mode = "both"
motion = false
pre_seconds = 1
post_seconds = 1
[web]
listen = "127.0.0.1:$port"
EOF
password="correct horse battery"
for user in alice:admin bob:viewer; do
  echo "$password" | "$kioskcam" web-user set "${user%:*}" --role "${user#*:}" --config "$tmp/kioskcam.toml" >/dev/null \
    || { echo "web-schemathesis: ERROR: \`$kioskcam web-user set ${user%:*}\` failed" >&2; exit 1; }
done

"$kioskcam" run --config "$tmp/kioskcam.toml" >"$tmp/daemon.log" 2>&1 &
daemon=$!
for _ in $(seq 1 300); do
  grep -q "web app listening on port" "$tmp/daemon.log" && break
  alive "$daemon" || break
  sleep 0.1
done
if ! grep -q "web app listening on port" "$tmp/daemon.log"; then
  echo "web-schemathesis: the daemon did not start its web app; its log:" >&2
  cat "$tmp/daemon.log" >&2
  exit 1
fi
echo "web-schemathesis: daemon $daemon listening on $base"

# The session cookie of a fresh login.
login() {
  local jar="$tmp/jar-$1-$RANDOM" code
  code=$(curl -sk -o /dev/null -w '%{http_code}' -c "$jar" -H 'Content-Type: application/json' \
    -d "{\"user\":\"$1\",\"password\":\"$password\"}" "$base/api/login")
  [ "$code" = 200 ] || { echo "web-schemathesis: login as $1 answered $code" >&2; return 1; }
  awk '$6 == "kioskcam_session" { print $7 }' "$jar"
}
admin=$(login alice)
logout_session=$(login alice)
viewer=$(login bob)

# An admin call with a JSON body; prints the answer, fails on anything but 200.
api() {
  local out="$tmp/answer" code body=()
  [ $# -lt 3 ] || body=(-d "$3")
  code=$(curl -sk -o "$out" -w '%{http_code}' -b "kioskcam_session=$admin" -H 'Content-Type: application/json' \
    -X "$1" "${body[@]}" "$base$2")
  [ "$code" = 200 ] || { echo "web-schemathesis: $1 $2 answered $code: $(cat "$out")" >&2; return 1; }
  cat "$out"
}
field() { python3 -c 'import json, sys; print(json.load(sys.stdin).get(sys.argv[1], ""))' "$1"; }
wait_idle() {
  for _ in $(seq 1 200); do
    [ "$(api GET /api/status | field state)" = idle ] && return 0
    sleep 0.1
  done
  echo "web-schemathesis: the recorder did not go idle" >&2
  return 1
}

# Fixtures, made by the daemon itself: a still, a 1 s video and a 1 s sound, copied to the
# names docs/api.yaml uses as examples (120500.* is what the DELETE example removes).
photo=$(api POST /api/snapshot | field path)
api POST /api/recording '{"action":"start","kind":"video","duration":1}' >/dev/null
sleep 1.2
wait_idle
api POST /api/recording '{"action":"start","kind":"audio","duration":1}' >/dev/null
sleep 1.2
wait_idle
newest() { find "$tmp/media/$1" -name "*.$2" -newer "$tmp/kioskcam.toml" -printf '%T@ %p\n' | sort -n | tail -1 | cut -d' ' -f2-; }
video=$(newest video mp4) audio=$(newest audio m4a)
if [ ! -f "$photo" ] || [ ! -f "$video" ] || [ ! -f "$audio" ]; then
  echo "web-schemathesis: fixtures missing (photo '$photo', video '$video', audio '$audio')" >&2
  exit 1
fi
for kind in video audio photo; do mkdir -p "$tmp/media/$kind/20260101"; done
for name in 120000 120500; do
  cp "$video" "$tmp/media/video/20260101/$name.mp4"
  cp "$audio" "$tmp/media/audio/20260101/$name.m4a"
  cp "$photo" "$tmp/media/photo/20260101/$name.jpg"
done

# POST /api/logout ends the session of its own; recording stops and exports may take a while.
cat >"$tmp/schemathesis.toml" <<EOF
[[operations]]
include-operation-id = "logout"
headers = { Cookie = "kioskcam_session=$logout_session" }

[[operations]]
include-path-regex = "^/api/(recording|export)$"
request-timeout = 60
EOF

checks=not_a_server_error,status_code_conformance,response_schema_conformance,content_type_conformance
passed=0 failed=0
# One schemathesis run: NAME, then st run's own options. Counts the cases of its JUnit report.
run() {
  local name=$1 status=0
  shift
  echo
  echo "web-schemathesis: run '$name'"
  # The request timeout is short for all but the slow calls (see schemathesis.toml): the
  # daemon answers no request head it cannot parse (it closes the connection after its
  # 30 s idle timeout), and schemathesis's first probe sends one (a NUL byte in a header),
  # then waits for the timeout. No NUL bytes in generated data for the same reason.
  # In the background, so that a TERM to this script stops it at once (bash runs traps
  # only between commands; `wait` is one). From the temp dir: schemathesis and hypothesis
  # keep their caches (.schemathesis, .hypothesis) in the working directory.
  (cd "$tmp" && exec "$st" --config-file "$tmp/schemathesis.toml" run "$spec" --url "$base" --tls-verify false --no-color \
    --checks "$checks" --max-examples "$examples" --request-timeout 10 --generation-allow-x00 false \
    --report junit --report-junit-path "$tmp/$name.xml" "$@") &
  child=$!
  wait "$child" || status=$?
  child=""
  local counts
  counts=$(python3 - "$tmp/$name.xml" <<'PY' || echo "0 1"
import sys, xml.etree.ElementTree as ET
cases = ET.parse(sys.argv[1]).getroot().iter("testcase")
ok = bad = 0
for case in cases:
    if case.find("failure") is not None or case.find("error") is not None:
        bad += 1
    else:
        ok += 1
print(ok, bad)
PY
)
  read -r ok bad <<<"$counts"
  [ "$status" -eq 0 ] || [ "$bad" -gt 0 ] || bad=1  # st failed without a failing case (an error in the run)
  passed=$((passed + ok)) failed=$((failed + bad))
  echo "web-schemathesis: run '$name': $ok passed, $bad failed (JUnit cases: an operation each, and the stateful tests; schemathesis exit $status)"
}
run admin -H "Cookie: kioskcam_session=$admin"
run viewer -H "Cookie: kioskcam_session=$viewer" --mode positive \
  --include-operation-id recording --include-operation-id snapshot --include-operation-id event \
  --include-operation-id export --include-operation-id deleteMedia --include-operation-id settingsPage \
  --include-operation-id settings --include-operation-id changeSettings
run nobody --max-examples 3

# The state after the runs.
expect() {
  local want=$1 what=$2 got
  shift 2
  got=$(curl -sk -o /dev/null -w '%{http_code}' "$@")
  if [ "$got" = "$want" ]; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    echo "web-schemathesis: FAIL: $what: $got, expected $want" >&2
  fi
}
echo
expect 200 "the admin's session after the runs" -b "kioskcam_session=$admin" "$base/api/me"
expect 200 "the viewer's session after the runs" -b "kioskcam_session=$viewer" "$base/api/me"
expect 401 "the session POST /api/logout ended" -b "kioskcam_session=$logout_session" "$base/api/me"
if alive "$daemon"; then passed=$((passed + 1)); else
  failed=$((failed + 1))
  echo "web-schemathesis: FAIL: the daemon died during the run; its log:" >&2
  tail -50 "$tmp/daemon.log" >&2
fi
if grep -E " (critical|error) kioskcam: \[KioskWeb\]" "$tmp/daemon.log" >&2; then
  failed=$((failed + 1))
  echo "web-schemathesis: FAIL: the web app logged errors (above)" >&2
else
  passed=$((passed + 1))
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
