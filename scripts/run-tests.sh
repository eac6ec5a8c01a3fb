#!/usr/bin/env bash
# The test command: typecheck, lint, then node's test runner over every *.test.ts file, on the test
# stand (scripts/test-stand.sh: its own ports and state, the user's world checked untouched after).
# Pass file paths to run a subset.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" != "--on-test-stand" ]; then exec bash scripts/test-stand.sh bash scripts/run-tests.sh --on-test-stand "$@"; fi
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
node --import tsx scripts/test-durations.ts test-output/tests.tap 12 || true
exit "$status"
