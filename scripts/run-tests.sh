#!/usr/bin/env bash
# The test command, in two tiers (docs/stand.md, "Tests apart"):
#   make test       TEST_TIER=gate: every test file; each fault and rerun matrix runs the sample its
#                   seed draws (testkit/matrix.ts), sized from the matrix's share of the 10 minutes
#   make test-full  TEST_TIER=full: every point of every matrix
# Three lanes side by side:
#   - service-free: typecheck, lint and the files of test/service-free.txt (two at a time) on
#     test/stand.none.yaml, whose ports nothing listens on;
#   - stand a and stand b: the other files, split by their measured times (test/file-times.json,
#     scripts/test-lanes.ts plan) between the test stand (test/stand.test.yaml) and a second test
#     stand (its ports + 100, .stand-test-b), the two stands at once. In a lane the world files run
#     one at a time, the files that stop Postgres last; beside them, one at a time, the files that
#     use only Postgres through databases of their own (test/stand-beside.txt).
# The run prints TEST_SEED first (TEST_SEED=… make test draws the same sample again), fails if any
# lane fails, and ends with the budget table. Pass file paths to run a subset (typecheck and lint,
# then those files on the test stand alone); --fast runs the service-free lane alone, no stand.
set -euo pipefail
cd "$(dirname "$0")/.."
tsx=(node --import tsx)
launch=(node scripts/launch.mjs) # our programs from their bundles (scripts/launch.mjs)
BUDGET_SECONDS=${TEST_BUDGET_SECONDS:-600}

# the test files a list names (test/service-free.txt, test/stand-beside.txt, …): one a line, # comments
list_file() { grep -v '^#' "$1" | grep . || true; }
service_free_files() { list_file test/service-free.txt; }

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

# node's test runner on some files: spec on stdout, TAP and per-file times into test-output/
run_files() {
  local name=$1 concurrency=$2; shift 2
  "${tsx[@]}" --test --test-concurrency="$concurrency" --test-reporter=spec --test-reporter-destination=stdout \
    --test-reporter=tap --test-reporter-destination="test-output/tests-$name.tap" \
    --test-reporter=./scripts/file-times-reporter.mjs --test-reporter-destination="test-output/times-$name.jsonl" "$@"
}

# typecheck, lint and (with --with-files) the service-free files, all three at once (the machine's
# two cores stay busy), with no stand; their output printed in turn
service_free_lane() {
  local logs typecheck=0 lint=0 tests=0 typecheck_pid lint_pid
  logs=$(mktemp -d -t service-free.XXXXXX)
  # incremental: tsc re-checks what changed since the last run here and stays sound (a fresh clone,
  # as in CI, checks everything); eslint's cache re-lints the files whose content changed: a type
  # that changed in another file can leave a cached result stale, so `make lint` and CI's fresh
  # clone lint every file uncached
  local cache=node_modules/.cache/gate
  mkdir -p "$cache"
  { npx tsc -p tsconfig.json --noEmit --incremental --tsBuildInfoFile "$cache/node.tsbuildinfo" &&
    npx tsc -p src/web/browser/tsconfig.json --noEmit --incremental --tsBuildInfoFile "$cache/browser.tsbuildinfo"; } > "$logs/typecheck" 2>&1 &
  typecheck_pid=$!
  npx eslint --cache --cache-strategy content --cache-location "$cache/eslint" . > "$logs/lint" 2>&1 &
  lint_pid=$!
  if [ "${1:-}" = "--with-files" ]; then
    mapfile -t free < <(service_free_files)
    echo "== service-free tests (${#free[@]} files of test/service-free.txt, two at a time, no stand: test/stand.none.yaml)" > "$logs/tests"
    STAND_CONFIG=test/stand.none.yaml run_files free 2 "${free[@]}" >> "$logs/tests" 2>&1 || tests=$?
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

# the machine's idle CPU between two readings of /proc/stat (idle + iowait over all), in percent
cpu_ticks() { awk '/^cpu /{ print $5 + $6, $2 + $3 + $4 + $5 + $6 + $7 + $8 + $9 }' /proc/stat; }
idle_percent() { # <idle0> <total0> <idle1> <total1>
  awk -v i0="$1" -v t0="$2" -v i1="$3" -v t1="$4" 'BEGIN { if (t1 > t0) printf "%.0f", 100 * (i1 - i0) / (t1 - t0); else print "?" }'
}

# the matrices' seed and tier, said first: the same TEST_SEED draws the same sample again
export TEST_TIER="${TEST_TIER:-gate}"
export TEST_SEED="${TEST_SEED:-$(( (RANDOM * 32768 + RANDOM) % 1000000000 ))}"

case "${1:-}" in
  --fast) # make test-fast: the service-free lane alone (scripts/classify-tests.ts writes its list)
    started=$(date +%s)
    mkdir -p test-output
    service_free_lane --with-files
    echo "== make test-fast took $(( $(date +%s) - started )) s wall"
    exit 0 ;;
  --check-skips) # the skip check alone, on one TAP file (test/structure/run-tests.test.ts)
    no_skips "$2" "$3"
    exit $? ;;
  --service-free-lane)
    shift
    service_free_lane "$@"
    exit 0 ;;
  --lane) # inside scripts/test-stand.sh: one stand lane's files on the stand of STAND_CONFIG, in two streams
    name=$2; shift 2
    # the lane's files in three groups: beside (test/stand-beside.txt: Postgres only, through
    # databases of their own), the files that stop Postgres (test/stand-stops-postgres.txt), the rest
    beside=(); stops=(); rest=()
    for file in "$@"; do
      if grep -qxF "$file" <(list_file test/stand-beside.txt); then beside+=("$file")
      elif grep -qxF "$file" <(list_file test/stand-stops-postgres.txt); then stops+=("$file")
      else rest+=("$file"); fi
    done
    echo "== stand lane $name on $STAND_CONFIG (TEST_SEED=$TEST_SEED TEST_TIER=$TEST_TIER): ${#rest[@]} files one at a time," \
      "then ${#stops[@]} that stop Postgres; beside them ${#beside[@]} files on databases of their own"
    started=$(date +%s)
    status=0
    lock="test-output/postgres-$name.lock"
    : > "$lock"
    # the beside stream holds the lane's Postgres lock shared; the files that stop Postgres take it exclusively
    beside_pid=""
    if [ "${#beside[@]}" -gt 0 ]; then
      ( set -o pipefail; flock -s 9; run_files "$name-beside" 1 "${beside[@]}" 2>&1 | sed -u 's/^/beside: /' ) 9< "$lock" &
      beside_pid=$!
    fi
    if [ "${#rest[@]}" -gt 0 ]; then run_files "$name-rest" 1 "${rest[@]}" || status=1; fi
    if [ "${#stops[@]}" -gt 0 ]; then
      ( flock -x 9; run_files "$name-stops" 1 "${stops[@]}" ) 9< "$lock" || status=1
    fi
    if [ -n "$beside_pid" ]; then wait "$beside_pid" || status=1; fi
    cat test-output/tests-"$name"-*.tap > "test-output/tests-$name.tap" 2>/dev/null || true
    cat test-output/times-"$name"-*.jsonl > "test-output/times-$name.jsonl" 2>/dev/null || true
    no_skips "test-output/tests-$name.tap" "stand lane $name" || status=1
    echo "$(( $(date +%s) - started ))" > "test-output/wall-$name"
    exit "$status" ;;
esac

echo "TEST_SEED=$TEST_SEED TEST_TIER=$TEST_TIER (rerun this sample: TEST_SEED=$TEST_SEED make test$([ "$TEST_TIER" = full ] && echo -full))"
export TEST_WALL_STARTED="${TEST_WALL_STARTED:-$(date +%s)}"
mkdir -p test-output
rm -f test-output/service-free.status test-output/tests-*.tap test-output/times-*.jsonl test-output/wall-* test-output/postgres-*.lock


stand_a=test/stand.test.yaml
stand_b=test-output/stand.test-b.yaml
# what the test stand needs first (npm packages, Debian packages, Kafka's jars): seconds when present
STAND_CONFIG="$stand_a" bash scripts/install-deps.sh | sed -u "s|^|[$stand_a] |"
lanes=()
if [ "$#" -gt 0 ]; then
  lanes=("a:$stand_a:$*")
else
  mapfile -t files < <(find test -name '*.test.ts' | sort | grep -vxF -f <(service_free_files) || true)
  if [ "${#files[@]}" -eq 0 ]; then echo "== no test file left for the stand: is test/service-free.txt right?"; exit 1; fi
  "${tsx[@]}" scripts/test-lanes.ts derive --out "$stand_b"
  "${launch[@]}" src/world-ops/guard.ts apart --config "$stand_a" --test-config "$stand_b"
  mapfile -t planned < <("${tsx[@]}" scripts/test-lanes.ts plan --lanes 2 "${files[@]}")
  lanes=("a:$stand_a:${planned[0]:-}" "b:$stand_b:${planned[1]:-}")
fi

# the second test stand's jars, before the stands start side by side (from the local Maven
# repository the first fetch filled)
for lane in "${lanes[@]}"; do
  IFS=: read -r _ config _ <<< "$lane"
  if [ "$config" != "$stand_a" ]; then STAND_CONFIG="$config" bash scripts/install-deps.sh | sed -u "s|^|[$config] |"; fi
done

# the service-free lane, in the background from now on (node_modules is in place); the stand lanes wait for it at their end.
# It runs niced: the stand lanes are the run's critical path and the CPUs are busy (about 10-17 %
# idle), so typecheck, lint and the service-free files take what the stand lanes leave; they have
# minutes to spare before the stand lanes end.
lane_args=()
if [ "$#" -eq 0 ]; then lane_args=(--with-files); fi
( status=0; nice -n 10 bash scripts/run-tests.sh --service-free-lane "${lane_args[@]}" > test-output/service-free.log 2>&1 || status=$?
  echo "$status" > test-output/service-free.status ) &

read -r idle_start total_start < <(cpu_ticks)
pids=()
for lane in "${lanes[@]}"; do
  IFS=: read -r name config lane_files <<< "$lane"
  read -r -a lane_files <<< "$lane_files"
  echo "== stand lane $name on $config: ${#lane_files[@]} files"
  ( set -o pipefail
    TEST_STAND_CONFIG="$config" TEST_STAND_INSTALLED=1 bash scripts/test-stand.sh bash scripts/run-tests.sh --lane "$name" "${lane_files[@]}" 2>&1 |
      sed -u "s/^/[$name] /" ) &
  pids+=("$!")
done
status=0
for pid in "${pids[@]}"; do wait "$pid" || status=1; done
read -r idle_end total_end < <(cpu_ticks)
stand_idle=$(idle_percent "$idle_start" "$total_start" "$idle_end" "$total_end")

waited=0
until [ -f test-output/service-free.status ]; do
  if (( waited % 15 == 0 )); then echo "== waiting for the service-free lane ($waited s; $(grep -c . test-output/times-free.jsonl 2>/dev/null || echo 0) files done so far)"; fi
  sleep 1; waited=$((waited + 1))
done
echo "== the service-free lane (typecheck, lint, service-free files; test-output/service-free.log):"
cat test-output/service-free.log
lane_status=$(cat test-output/service-free.status)
if [ "$lane_status" != 0 ]; then echo "== the service-free lane FAILED (exit $lane_status): typecheck, lint or a service-free test; its log is above"; status=1; fi

wall=$(( $(date +%s) - TEST_WALL_STARTED ))
budget_lanes=(service-free=test-output/times-free.jsonl)
for lane in "${lanes[@]}"; do
  IFS=: read -r name _ _ <<< "$lane"
  spec="stand-$name=test-output/times-$name.jsonl"
  if [ -f "test-output/wall-$name" ]; then spec="$spec=$(cat "test-output/wall-$name")"; fi
  budget_lanes+=("$spec")
done
"${tsx[@]}" scripts/test-lanes.ts budget --wall "$wall" --budget "$BUDGET_SECONDS" "${budget_lanes[@]}" || true
echo "   CPU idle while the stand lanes ran: ${stand_idle} % (/proc/stat, both cores)"
echo "TEST_SEED=$TEST_SEED TEST_TIER=$TEST_TIER: $([ "$status" = 0 ] && echo green || echo RED; ) (rerun this sample: TEST_SEED=$TEST_SEED make test$([ "$TEST_TIER" = full ] && echo -full))"
exit "$status"
