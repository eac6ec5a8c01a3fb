#!/usr/bin/env bash
# The official Airflow clients (apache-airflow-client, apache-airflow-ctl; pinned in
# test/clients/requirements.txt) in a project-local virtualenv, .venv-airflow, for the client tests
# (test/clients/). Seconds when it is up to date (scripts/python-venv.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
exec bash scripts/python-venv.sh airflow-venv .venv-airflow test/clients/requirements.txt airflowctl
