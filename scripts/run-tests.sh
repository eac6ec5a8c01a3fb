#!/usr/bin/env bash
# The test command: typecheck, lint, then node's test runner over every *.test.ts file.
# Tests talk to the real stand (make stand-up); pass file paths to run a subset.
set -euo pipefail
cd "$(dirname "$0")/.."
echo "== typecheck"; npx tsc -p tsconfig.json --noEmit
echo "== lint"; npx eslint .
if [ "$#" -gt 0 ]; then files=("$@"); else mapfile -t files < <(find test -name '*.test.ts' | sort); fi
echo "== tests (${#files[@]} files)"
exec node --import tsx --test --test-concurrency=1 --test-reporter=spec "${files[@]}"
