#!/usr/bin/env bash
# A project-local Python virtualenv from a pinned requirements file, installed with --no-deps (the
# file pins the whole closure, so pip resolves nothing) and checked with `pip check`. Seconds when it
# is up to date: a stamp in the venv holds the requirements' checksum.
#   scripts/python-venv.sh <name> <venv dir> <requirements file> <a program the venv must have>
# Used by scripts/airflow-venv.sh (.venv-airflow) and scripts/bi-venv.sh (.venv-bi).
set -euo pipefail
cd "$(dirname "$0")/.."

name=$1 venv=$2 requirements=$3 program=$4
say() { echo "$name: $*"; }

want=$(sha256sum "$requirements" | cut -d' ' -f1)
if [ -f "$venv/.requirements-sha256" ] && [ "$(cat "$venv/.requirements-sha256")" = "$want" ] && [ -x "$venv/bin/$program" ]; then
  say "present in $venv ($requirements)"
  exit 0
fi
python=$(command -v python3 || true)
if [ -z "$python" ] || ! "$python" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else 1)'; then
  say "python3 >= 3.10 is needed (found: ${python:-none})"
  exit 1
fi
if ! "$python" -c 'import venv, ensurepip' 2>/dev/null; then
  say "python3 has no venv/ensurepip module: apt-get install python3-venv"
  exit 1
fi
started=$(date +%s)
say "creating $venv with $("$python" --version) and installing $(grep -c '==' "$requirements") pinned packages of $requirements"
rm -rf "$venv"
"$python" -m venv "$venv"
"$venv/bin/pip" install --quiet --disable-pip-version-check --no-deps -r "$requirements"
"$venv/bin/pip" check >/dev/null
echo "$want" > "$venv/.requirements-sha256"
say "installed in $(( $(date +%s) - started )) s"
