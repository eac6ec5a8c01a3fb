#!/usr/bin/env bash
# Runs a command (the tests, the benchmarks) on the test stand, never on the user's stand:
#   bash scripts/test-stand.sh <command...>
# 1. refuses when the test stand's config (test/stand.test.yaml, or $TEST_STAND_CONFIG) shares a
#    port or the state directory with the user's (stand.yaml, or $USER_STAND_CONFIG);
# 2. installs what the test stand needs (unless TEST_STAND_INSTALLED=1 says it is done) and starts
#    it (own ports, own state in .stand-test/, or the config's state_dir);
# 3. snapshots the user's world when the user's stand is running (position, rows of every table,
#    topic end offsets, group offsets), runs the command with STAND_CONFIG pointing at the test
#    stand, then compares: a world the tests changed fails the run;
# 4. stops the test stand's runner and services (KEEP_TEST_STAND=1 keeps them for the next run).
set -euo pipefail
cd "$(dirname "$0")/.."
user_config="${USER_STAND_CONFIG:-stand.yaml}"
test_config="${TEST_STAND_CONFIG:-test/stand.test.yaml}"
launch=(node scripts/launch.mjs) # our programs from their bundles (scripts/launch.mjs)

"${launch[@]}" src/world-ops/guard.ts apart --config "$user_config" --test-config "$test_config"
snapshot="$(mktemp -t world-before.XXXXXX.json)"
rm -f "$snapshot"
"${launch[@]}" src/world-ops/guard.ts save --config "$user_config" --out "$snapshot"

export STAND_CONFIG="$test_config"
finish() {
  status=$?
  if [ "${KEEP_TEST_STAND:-0}" != 1 ]; then
    echo "== stopping the test stand ($test_config; KEEP_TEST_STAND=1 keeps it)"
    "${launch[@]}" src/world-ops/cli.ts down > /dev/null || echo "!! the test stand did not stop cleanly: node scripts/launch.mjs src/world-ops/cli.ts down with STAND_CONFIG=$test_config"
  fi
  if ! STAND_CONFIG="$user_config" "${launch[@]}" src/world-ops/guard.ts check --config "$user_config" --before "$snapshot"; then
    status=1
  fi
  rm -f "$snapshot"
  exit "$status"
}
trap finish EXIT

echo "== test stand ($test_config)"
# scripts/run-tests.sh installs once for both of its test stands before they start side by side
if [ "${TEST_STAND_INSTALLED:-0}" != 1 ]; then bash scripts/install-deps.sh; fi
"${launch[@]}" src/stand/cli.ts up
"$@"
