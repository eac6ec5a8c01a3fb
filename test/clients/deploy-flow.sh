#!/usr/bin/env bash
# The flow Airflow deployment scripts use, with curl and jq: a token from POST /auth/token, GET the
# DAG, POST a run with logical_date null, poll its state until it ends. Prints the final state;
# exits 0 on success, 1 when the run failed, 2 on any refusal. Usage: deploy-flow.sh <base-url> <dag_id>
# (AIRFLOW_USER, AIRFLOW_PASSWORD in the environment).
set -euo pipefail
base=$1 dag=$2

token=$(curl -sf -X POST "$base/auth/token" -H 'Content-Type: application/json' \
  -d "$(jq -n --arg u "$AIRFLOW_USER" --arg p "$AIRFLOW_PASSWORD" '{username: $u, password: $p}')" | jq -r .access_token) || exit 2
auth=(-H "Authorization: Bearer $token")

curl -sf "${auth[@]}" "$base/api/v2/dags/$dag" | jq -e --arg d "$dag" '.dag_id == $d and .is_paused == false' >/dev/null || exit 2
run_id=$(curl -sf -X POST "${auth[@]}" -H 'Content-Type: application/json' "$base/api/v2/dags/$dag/dagRuns" \
  -d '{"logical_date": null, "conf": {}}' | jq -r .dag_run_id) || exit 2

for _ in $(seq 1 300); do
  state=$(curl -sf "${auth[@]}" "$base/api/v2/dags/$dag/dagRuns/$run_id" | jq -r .state) || exit 2
  case $state in
    success) echo "$run_id $state"; exit 0 ;;
    failed) echo "$run_id $state"; exit 1 ;;
  esac
  sleep 0.2
done
echo "$run_id still $state"
exit 2
