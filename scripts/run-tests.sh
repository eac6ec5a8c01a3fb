#!/usr/bin/env bash
# The test command. Two lanes side by side:
#   - the service-free lane: typecheck, lint and the files of test/service-free.txt (two at a time)
#     on test/stand.none.yaml, whose ports nothing listens on; it starts at once, while
#     scripts/test-stand.sh starts the test stand;
#   - the stand lane: every other *.test.ts file, one at a time, on the test stand (its own ports
#     and state; the user's world checked untouched after), as soon as it serves.
# The run fails if either lane fails. Pass file paths to run a subset (typecheck and lint in the
# service-free lane, those files on the stand); --fast runs the service-free lane alone, no stand.
set -euo pipefail
cd "$(dirname "$0")/.."
tsx=(node --import tsx)

service_free_files() { grep -v '^#' test/service-free.txt | grep . || true; }

# a skipped test proved nothing: every skip in a TAP file is listed and fails the lane that ran it
# (a service-free file that skips without a service is a stand file: scripts/classify-tests.ts)
no_skips() {
  local tap=$1 what=$2 skipped
  skipped=$(grep '# SKIP' "$tap" 2>/dev/null || true)
  if [ -z "$skipped" ]; then return 0; fi
  echo "== $(grep -c . <<< "$skipped") test(s) of $what skipped; a skipped test proves nothing, so the lane fails:"
  sed 's/^ */   /' <<< "$skipped"
  return 1
}

# typecheck, lint and (with --with-files) the service-free files, all three at once (the machine's
# two cores stay busy), with no stand; their output printed in turn
service_free_lane() {
  local logs typecheck=0 lint=0 tests=0 typecheck_pid lint_pid
  logs=$(mktemp -d -t service-free.XXXXXX)
  { npx tsc -p tsconfig.json --noEmit && npx tsc -p src/web/browser/tsconfig.json --noEmit; } > "$logs/typecheck" 2>&1 &
  typecheck_pid=$!
  npx eslint . > "$logs/lint" 2>&1 &
  lint_pid=$!
  if [ "${1:-}" = "--with-files" ]; then
    mapfile -t free < <(service_free_files)
    echo "== service-free tests (${#free[@]} files of test/service-free.txt, two at a time, no stand: test/stand.none.yaml)" > "$logs/tests"
    STAND_CONFIG=test/stand.none.yaml "${tsx[@]}" --test --test-concurrency=2 --test-reporter=spec --test-reporter-destination=stdout \
      --test-reporter=tap --test-reporter-destination=test-output/tests-free.tap "${free[@]}" >> "$logs/tests" 2>&1 || tests=$?
    no_skips test-output/tests-free.tap "the service-free files" >> "$logs/tests" || tests=1
  fi
  wait "$typecheck_pid" || typecheck=$?
  wait "$lint_pid" || lint=$?
  echo "== typecheck (exit $typecheck)"; cat "$logs/typecheck"
  echo "== lint (exit $lint)"; cat "$logs/lint"
  if [ -f "$logs/tests" ]; then cat "$logs/tests"; echo "== service-free tests (exit $tests)"; fi
  rm -rf "$logs"
  if [ "$typecheck" != 0 ] || [ "$lint" != 0 ] || [ "$tests" != 0 ]; then echo "== the service-free lane failed: typecheck $typecheck, lint $lint, tests $tests"; return 1; fi
}

if [ "${1:-}" = "--fast" ]; then
  # make test-fast: the service-free lane alone (scripts/classify-tests.ts writes its list)
  shift
  started=$(date +%s)
  mkdir -p test-output
  service_free_lane --with-files
  echo "== make test-fast took $(( $(date +%s) - started )) s wall"
  exit 0
fi

if [ "${1:-}" = "--check-skips" ]; then # the skip check alone, on one TAP file (test/structure/run-tests.test.ts)
  no_skips "$2" "$3"
  exit $?
fi

if [ "${1:-}" = "--service-free-lane" ]; then
  shift
  service_free_lane "$@"
  exit 0
fi

if [ "${1:-}" != "--on-test-stand" ]; then
  export TEST_WALL_STARTED="${TEST_WALL_STARTED:-$(date +%s)}"
  mkdir -p test-output
  rm -f test-output/service-free.status test-output/tests-free.tap
  lane_args=()
  if [ "$#" -eq 0 ]; then lane_args=(--with-files); fi
  # the service-free lane, in the background from now on; the stand lane waits for it at its end
  ( status=0; bash scripts/run-tests.sh --service-free-lane "${lane_args[@]}" > test-output/service-free.log 2>&1 || status=$?
    echo "$status" > test-output/service-free.status ) &
  export SERVICE_FREE_LANE=started
  exec bash scripts/test-stand.sh bash scripts/run-tests.sh --on-test-stand "$@"
fi
shift

if [ "${SERVICE_FREE_LANE:-}" != started ]; then # called on the stand directly: the lane runs here first
  mkdir -p test-output; rm -f test-output/tests-free.tap
  status=0; service_free_lane > test-output/service-free.log 2>&1 || status=$?; echo "$status" > test-output/service-free.status
fi
if [ "$#" -gt 0 ]; then files=("$@"); else
  # every file the service-free lane does not take: they share the test stand, one at a time
  mapfile -t files < <(find test -name '*.test.ts' | sort | grep -vxF -f <(service_free_files) || true)
  if [ "${#files[@]}" -eq 0 ]; then echo "== no test file left for the stand: is test/service-free.txt right?"; exit 1; fi
fi
echo "== tests on the test stand (${#files[@]} files, one at a time, stand $STAND_CONFIG; the service-free lane runs beside: test-output/service-free.log)"
started=$(date +%s)
status=0
"${tsx[@]}" --test --test-concurrency=1 --test-reporter=spec --test-reporter-destination=stdout \
  --test-reporter=tap --test-reporter-destination=test-output/tests.tap "${files[@]}" || status=$?
no_skips test-output/tests.tap "the stand lane" || status=1
stand_seconds=$(( $(date +%s) - started ))

waited=0
until [ -f test-output/service-free.status ]; do
  if (( waited % 15 == 0 )); then echo "== waiting for the service-free lane ($waited s; $(grep -c '^# Subtest' test-output/tests-free.tap 2>/dev/null || echo 0) suites done so far)"; fi
  sleep 1; waited=$((waited + 1))
done
echo "== the service-free lane (typecheck, lint, service-free files; test-output/service-free.log):"
cat test-output/service-free.log
lane_status=$(cat test-output/service-free.status)
if [ "$lane_status" != 0 ]; then echo "== the service-free lane FAILED (exit $lane_status): typecheck, lint or a service-free test; its log is above"; status=1; fi

echo "== slowest top-level suites (the stand lane took ${stand_seconds} s; all in test-output/tests.tap and tests-free.tap)"
"${tsx[@]}" scripts/test-durations.ts 12 test-output/tests.tap test-output/tests-free.tap || true
wall=$(( $(date +%s) - ${TEST_WALL_STARTED:-$started} ))
echo "== make test wall time so far: $((wall / 60)) m $((wall % 60)) s (test stand start, both lanes; the stand's stop and the world guard follow)"
if [ "$wall" -gt 600 ]; then echo "== make test took more than the 10 minutes it is meant to (issue 23: docs/stand.md, Tests apart)"; fi
exit "$status"
