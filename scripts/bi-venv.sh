#!/usr/bin/env bash
# Superset and the ClickHouse driver that speaks 18.16 (clickhouse-sqlalchemy over the native
# protocol), pinned in deploy/bi/requirements.txt, in a project-local virtualenv, .venv-bi, for
# `make bi` (docs/stand.md "A BI tool"). About 3 minutes the first time; seconds when up to date.
set -euo pipefail
cd "$(dirname "$0")/.."
exec bash scripts/python-venv.sh bi-venv .venv-bi deploy/bi/requirements.txt gunicorn
