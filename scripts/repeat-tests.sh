#!/usr/bin/env bash
# Runs test files several rounds in a row on the test stand (started once, stopped at the end) and
# prints, per test, how many rounds failed and the time it took (min / median / max):
#   bash scripts/repeat-tests.sh [--rounds N] [--load] test/faults/*.test.ts
# --load keeps both cores busy with two spinning processes (started and stopped here, by pid) for
# the whole run, to show a test does not depend on an idle machine. Each round's TAP report is kept
# in test-output/repeat/round-<n>.tap. Exit 1 when any round failed.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=10
load=0
while [ "$#" -gt 0 ]; do
  case "$1" in
    --rounds) rounds="$2"; shift 2 ;;
    --load) load=1; shift ;;
    *) break ;;
  esac
done
if [ "$#" -eq 0 ]; then echo "usage: scripts/repeat-tests.sh [--rounds N] [--load] <test files...>" >&2; exit 2; fi
if [ "${1:-}" != "--on-test-stand" ]; then
  exec bash scripts/test-stand.sh bash scripts/repeat-tests.sh --rounds "$rounds" $([ "$load" = 1 ] && echo --load) --on-test-stand "$@"
fi
shift
out=test-output/repeat
rm -rf "$out"; mkdir -p "$out"
spinners=()
stop_load() { for pid in "${spinners[@]}"; do kill "$pid" 2>/dev/null || true; done; }
trap stop_load EXIT
if [ "$load" = 1 ]; then
  for _ in 1 2; do node -e 'for (;;) {}' & spinners+=("$!"); done
  echo "== load: both cores kept busy by pids ${spinners[*]}"
fi
failed=0
for round in $(seq 1 "$rounds"); do
  started=$(date +%s)
  status=0
  node --import tsx --test --test-concurrency=1 --test-reporter=dot --test-reporter-destination=stdout \
    --test-reporter=tap --test-reporter-destination="$out/round-$round.tap" "$@" > "$out/round-$round.log" 2>&1 || status=$?
  echo "== round $round of $rounds: exit $status in $(( $(date +%s) - started )) s ($out/round-$round.log)"
  [ "$status" = 0 ] || failed=$((failed + 1))
done
node --import tsx scripts/repeat-summary.ts "$out"/round-*.tap
echo "== $failed of $rounds rounds failed$([ "$load" = 1 ] && echo ", both cores kept busy")"
[ "$failed" = 0 ]
