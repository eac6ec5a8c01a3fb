#!/usr/bin/env bash
# The official Airflow clients (apache-airflow-client, apache-airflow-ctl; pinned in
# test/clients/requirements.txt) in a project-local virtualenv, .venv-airflow, for the client tests
# (test/clients/). Seconds when it is up to date: a stamp holds the requirements' checksum.
set -euo pipefail
cd "$(dirname "$0")/.."

venv=.venv-airflow
requirements=test/clients/requirements.txt
say() { echo "airflow-venv: $*"; }

want=$(sha256sum "$requirements" | cut -d' ' -f1)
if [ -f "$venv/.requirements-sha256" ] && [ "$(cat "$venv/.requirements-sha256")" = "$want" ] && [ -x "$venv/bin/airflowctl" ]; then
  say "Airflow clients present in $venv"
  exit 0
fi
python=$(command -v python3 || true)
if [ -z "$python" ] || ! "$python" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else 1)'; then
  say "python3 >= 3.10 is needed for apache-airflow-ctl (found: ${python:-none})"
  exit 1
fi
if ! "$python" -c 'import venv, ensurepip' 2>/dev/null; then
  say "python3 has no venv/ensurepip module: apt-get install python3-venv"
  exit 1
fi
say "creating $venv with $("$python" --version) and installing $requirements"
rm -rf "$venv"
"$python" -m venv "$venv"
"$venv/bin/pip" install --quiet --disable-pip-version-check --no-deps -r "$requirements"
"$venv/bin/pip" check >/dev/null
echo "$want" > "$venv/.requirements-sha256"
say "installed $("$venv/bin/pip" list --format=freeze 2>/dev/null | grep -E '^apache-airflow' | tr '\n' ' ')"
