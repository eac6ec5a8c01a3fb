#!/usr/bin/env bash
# The test command: typecheck, lint and the service-free files (test/service-free.txt, two at a time)
# while scripts/test-stand.sh starts the test stand (its own ports and state, the user's world
# checked untouched after), then every other *.test.ts file on it, one at a time. Pass file paths to
# run a subset (typecheck and lint, then those files on the stand); --fast runs no stand at all.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = "--fast" ]; then
  # make test-fast: typecheck, lint and the files of test/service-free.txt (scripts/classify-tests.ts),
  # two at a time, with no stand started (STAND_CONFIG names the test stand, which they never reach)
  shift
  started=$(date +%s)
  echo "== typecheck"; npx tsc -p tsconfig.json --noEmit; npx tsc -p src/web/browser/tsconfig.json --noEmit
  echo "== lint"; npx eslint .
  mapfile -t files < <(grep -v '^#' test/service-free.txt | grep .)
  echo "== service-free tests (${#files[@]} files of test/service-free.txt, two at a time, no stand)"
  STAND_CONFIG=test/stand.test.yaml node --import tsx --test --test-concurrency=2 --test-reporter=dot "${files[@]}"
  echo "== make test-fast took $(( $(date +%s) - started )) s wall"
  exit 0
fi
if [ "${1:-}" = "--pre-stand" ]; then
  # what needs no stand, run while scripts/test-stand.sh starts it: typecheck, lint and (for the
  # whole suite) the service-free files, two at a time
  shift
  echo "== typecheck"; npx tsc -p tsconfig.json --noEmit; npx tsc -p src/web/browser/tsconfig.json --noEmit
  echo "== lint"; npx eslint .
  if [ "$#" -eq 0 ]; then
    mapfile -t free < <(grep -v '^#' test/service-free.txt | grep . || true)
    if [ "${#free[@]}" -gt 0 ]; then
      echo "== service-free tests (${#free[@]} files of test/service-free.txt, two at a time, beside the test stand's start)"
      node --import tsx --test --test-concurrency=2 --test-reporter=spec --test-reporter-destination=stdout \
        --test-reporter=tap --test-reporter-destination=test-output/tests-free.tap "${free[@]}"
    fi
  fi
  exit 0
fi
if [ "${1:-}" != "--on-test-stand" ]; then
  export TEST_WALL_STARTED="${TEST_WALL_STARTED:-$(date +%s)}"
  mkdir -p test-output
  rm -f test-output/pre-stand.status test-output/tests-free.tap
  ( status=0; bash scripts/run-tests.sh --pre-stand "$@" > test-output/pre-stand.log 2>&1 || status=$?; echo "$status" > test-output/pre-stand.status ) &
  export PRE_STAND_STARTED=1
  exec bash scripts/test-stand.sh bash scripts/run-tests.sh --on-test-stand "$@"
fi
shift
if [ "${PRE_STAND_STARTED:-0}" != 1 ]; then # called on the stand directly: do the pre-stand part here
  mkdir -p test-output; rm -f test-output/tests-free.tap
  status=0; bash scripts/run-tests.sh --pre-stand "$@" > test-output/pre-stand.log 2>&1 || status=$?; echo "$status" > test-output/pre-stand.status
fi
waited=0
until [ -f test-output/pre-stand.status ]; do
  if (( waited % 15 == 0 )); then echo "== waiting for typecheck, lint and the service-free tests ($waited s; test-output/pre-stand.log: $(grep -c '^# Subtest' test-output/tests-free.tap 2>/dev/null || echo 0) files done)"; fi
  sleep 1; waited=$((waited + 1))
done
cat test-output/pre-stand.log
pre_status=$(cat test-output/pre-stand.status)
if [ "$pre_status" != 0 ]; then echo "== typecheck, lint or a service-free test failed (exit $pre_status): the stand's tests are not run"; exit "$pre_status"; fi
if [ "$#" -gt 0 ]; then files=("$@"); else
  # every file the service-free run did not take, one at a time: they share the test stand
  mapfile -t files < <(find test -name '*.test.ts' | sort | grep -vxF -f <(grep -v '^#' test/service-free.txt | grep . || true) || true)
  if [ "${#files[@]}" -eq 0 ]; then echo "== no test file left for the stand: is test/service-free.txt right?"; exit 1; fi
fi
echo "== tests on the test stand (${#files[@]} files, stand $STAND_CONFIG)"
started=$(date +%s)
status=0
node --import tsx --test --test-concurrency=1 --test-reporter=spec --test-reporter-destination=stdout \
  --test-reporter=tap --test-reporter-destination=test-output/tests.tap "${files[@]}" || status=$?
echo "== slowest top-level suites (of $(( $(date +%s) - started )) s on the stand; all in test-output/tests.tap and tests-free.tap)"
node --import tsx scripts/test-durations.ts 12 test-output/tests.tap test-output/tests-free.tap || true
wall=$(( $(date +%s) - ${TEST_WALL_STARTED:-$started} ))
echo "== make test wall time so far: $((wall / 60)) m $((wall % 60)) s (test stand start, typecheck, lint and tests; the stand's stop and the world guard follow)"
if [ "$wall" -gt 600 ]; then echo "== make test took more than the 10 minutes it is meant to (issue 23: docs/stand.md, Tests apart)"; fi
exit "$status"
