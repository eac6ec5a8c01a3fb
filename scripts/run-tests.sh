#!/usr/bin/env bash
# The test command: typecheck, lint, then node's test runner over every *.test.ts file, on the test
# stand (scripts/test-stand.sh: its own ports and state, the user's world checked untouched after).
# Pass file paths to run a subset.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = "--fast" ]; then
  # make test-fast: typecheck, lint and the files of test/service-free.txt (scripts/classify-tests.ts),
  # two at a time, with no stand started (STAND_CONFIG names test/stand.none.yaml: ports nothing listens on)
  shift
  started=$(date +%s)
  echo "== typecheck"; npx tsc -p tsconfig.json --noEmit; npx tsc -p src/web/browser/tsconfig.json --noEmit
  echo "== lint"; npx eslint .
  mapfile -t files < <(grep -v '^#' test/service-free.txt | grep .)
  echo "== service-free tests (${#files[@]} files of test/service-free.txt, two at a time, no stand)"
  STAND_CONFIG=test/stand.none.yaml node --import tsx --test --test-concurrency=2 --test-reporter=dot "${files[@]}"
  echo "== make test-fast took $(( $(date +%s) - started )) s wall"
  exit 0
fi
if [ "${1:-}" != "--on-test-stand" ]; then
  export TEST_WALL_STARTED="${TEST_WALL_STARTED:-$(date +%s)}"
  exec bash scripts/test-stand.sh bash scripts/run-tests.sh --on-test-stand "$@"
fi
shift
echo "== typecheck"; npx tsc -p tsconfig.json --noEmit; npx tsc -p src/web/browser/tsconfig.json --noEmit
echo "== lint"; npx eslint .
if [ "$#" -gt 0 ]; then files=("$@"); else mapfile -t files < <(find test -name '*.test.ts' | sort); fi
echo "== tests (${#files[@]} files, stand $STAND_CONFIG)"
mkdir -p test-output
started=$(date +%s)
status=0
node --import tsx --test --test-concurrency=1 --test-reporter=spec --test-reporter-destination=stdout \
  --test-reporter=tap --test-reporter-destination=test-output/tests.tap "${files[@]}" || status=$?
echo "== slowest top-level suites (of $(( $(date +%s) - started )) s; all in test-output/tests.tap)"
node --import tsx scripts/test-durations.ts 12 test-output/tests.tap || true
wall=$(( $(date +%s) - ${TEST_WALL_STARTED:-$started} ))
echo "== make test wall time so far: $((wall / 60)) m $((wall % 60)) s (test stand start, typecheck, lint and tests; the stand's stop and the world guard follow)"
if [ "$wall" -gt 600 ]; then echo "== make test took more than the 10 minutes it is meant to (issue 23: docs/stand.md, Tests apart)"; fi
exit "$status"
