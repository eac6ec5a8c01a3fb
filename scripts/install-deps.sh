#!/usr/bin/env bash
# Installs what the local stand needs and is missing, and says what it did; seconds when all is there.
#  - npm packages (npm ci) when node_modules is missing or older than package-lock.json
#  - Debian packages: PostgreSQL, ClickHouse server+client, ZooKeeper, Java, Maven, Chromium (web view
#    tests), kcat, Prometheus (a stand service: src/addons/prometheus.ts)
#  - the Kafka jars (kafka_2.13 + runtime dependencies) for the version in stand.yaml, via Maven,
#    into <state_dir>/kafka/libs, and its command-line tools' (kafka-tools) into <state_dir>/kafka/tools
#    (git-ignored; `stand up` writes the scripts that run them into <state_dir>/bin)
#  - the official Airflow clients for the client tests, in .venv-airflow (scripts/airflow-venv.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
started=$(date +%s)

say() { echo "install-deps: $*"; }

# --- npm -------------------------------------------------------------------------------------
# npm writes node_modules/.package-lock.json on every install: older than package-lock.json = stale.
# npm ci's postinstall applies patches/ (patch-package), so a patch newer than the install means a
# clean npm ci too: the new patch goes onto the package as published, not onto the old patch.
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  say "npm ci (node_modules missing or older than package-lock.json)"
  npm ci --no-audit --no-fund
elif [ -n "$(find patches -name '*.patch' -newer node_modules/.package-lock.json 2>/dev/null)" ]; then
  say "npm ci (patches/ changed since the install)"
  npm ci --no-audit --no-fund
else
  say "npm packages up to date"
fi

# --- Debian packages -------------------------------------------------------------------------
installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
wanted=(postgresql clickhouse-server clickhouse-client zookeeper chromium kcat prometheus)
command -v java >/dev/null || wanted+=(openjdk-17-jre-headless)
command -v mvn >/dev/null || wanted+=(maven)
missing=()
for pkg in "${wanted[@]}"; do installed "$pkg" || missing+=("$pkg"); done
if [ "${#missing[@]}" -gt 0 ]; then
  say "apt-get install ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  # the packages' own start scripts need an init system we do not have: the stand starts servers itself
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  say "Debian packages present: ${wanted[*]}"
fi

# --- Kafka jars ------------------------------------------------------------------------------
read -r kafka_version libs_dir tools_dir < <(node --import tsx src/stand/cli.ts kafka-libs)

# fetch_jars <what> <dir> <pom dependencies>: the runtime closure of the dependencies, with Maven,
# into <dir> (through <dir>.partial, then a stamp with the Kafka version: a stamped dir is complete)
fetch_jars() {
  local what=$1 dir=$2 dependencies=$3
  local stamp="$dir/.fetched-version" fetch_dir="$dir.fetch"
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$kafka_version" ]; then
    say "Kafka $kafka_version $what present in $dir"
    return
  fi
  mkdir -p "$fetch_dir"
  cat > "$fetch_dir/pom.xml" <<POM
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>local.stand</groupId>
  <artifactId>$(basename "$dir")</artifactId>
  <version>1</version>
  <packaging>pom</packaging>
  <dependencies>
$dependencies
  </dependencies>
</project>
POM
  say "fetching Kafka $kafka_version $what with Maven into $dir"
  rm -rf "$dir.partial"
  # Maven's own output goes to a log (it is noisy even with -q); shown only when the fetch fails
  if ! mvn -B -f "$fetch_dir/pom.xml" dependency:copy-dependencies \
    -DincludeScope=runtime -DoutputDirectory="$dir.partial" > "$fetch_dir/mvn.log" 2>&1; then
    tail -40 "$fetch_dir/mvn.log"
    say "Maven could not fetch Kafka $kafka_version $what (full log: $fetch_dir/mvn.log)"
    exit 1
  fi
  rm -rf "$dir"
  mv "$dir.partial" "$dir"
  echo "$kafka_version" > "$stamp"
  say "fetched $(ls "$dir"/*.jar | wc -l) jars ($(du -sh "$dir" | cut -f1))"
}

# --- Airflow clients (test/clients/), beside the Kafka jars: pip and Maven each wait on the network
# more than on the CPU (Maven's fetches stay one at a time: they share ~/.m2)
bash scripts/airflow-venv.sh &
venv_pid=$!

# kafka_2.13 brings the broker, controller (raft), storage tool and clients; log4j-slf4j-impl routes
# the broker's slf4j logging into log4j2 (without it the broker logs nothing)
fetch_jars "jars" "$libs_dir" "    <dependency><groupId>org.apache.kafka</groupId><artifactId>kafka_2.13</artifactId><version>$kafka_version</version></dependency>
    <dependency><groupId>org.apache.logging.log4j</groupId><artifactId>log4j-slf4j-impl</artifactId><version>2.24.3</version></dependency>"

# Kafka's command-line tools (src/addons/field-tools.ts): kafka-tools holds kafka-topics, the console
# consumer and producer, consumer-groups and get-offsets; connect-runtime (Kafka Connect's worker, for
# connect-plugin-path only) is left out
fetch_jars "tools' jars" "$tools_dir" "    <dependency>
      <groupId>org.apache.kafka</groupId><artifactId>kafka-tools</artifactId><version>$kafka_version</version>
      <exclusions><exclusion><groupId>org.apache.kafka</groupId><artifactId>connect-runtime</artifactId></exclusion></exclusions>
    </dependency>"

if ! wait "$venv_pid"; then say "the Airflow clients' virtualenv failed (scripts/airflow-venv.sh, its output above)"; exit 1; fi

say "done in $(( $(date +%s) - started )) s"
