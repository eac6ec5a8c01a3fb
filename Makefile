# Clickstream stand. `make up` brings the stand up and creates the world; `make test` runs the tests.
# `make help` lists every target. Shell here only starts things and calls DAGs through the REST API:
# it never applies DDL, runs the generator for the world, or edits world_position.
SHELL := /bin/bash
TSX := node --import tsx
# our command-line programs run from a bundle rebuilt when their sources change (scripts/launch.mjs)
LAUNCH := node scripts/launch.mjs
STAND := $(LAUNCH) src/stand/cli.ts
WORLD := $(LAUNCH) src/world-ops/cli.ts

.DEFAULT_GOAL := help
.PHONY: help runner-schema install up down clean rebuild-storage stand-up stand-down runner-start runner-stop \
	snapshot restore snapshots snapshot-rm ch psql kafka-lag bi bi-down smoke check-clickhouse check-services loader-reload doctor config-test lint typecheck test test-full test-fast generate-batch generate-live bench dq

help: ## list the targets
	@grep -hE '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-18s %s\n", $$1, $$2}'

install: ## install what is missing: npm packages, Debian packages (PostgreSQL, ZooKeeper, ClickHouse, Chromium, kcat, Prometheus), Kafka jars and its tools' jars, the Airflow clients (.venv-airflow)
	bash scripts/install-deps.sh

up: install ## stand + runner + world_initialize through the REST API (waited for), then the web address and a world summary
	$(WORLD) up

down: ## stop the runner, then the stand, the loader first (data kept)
	$(WORLD) down

clean: ## stop everything and remove all stand state (.stand/), world snapshots included (it says how many)
	-$(WORLD) runner stop
	$(STAND) clean

rebuild-storage: ## world_recreate through the REST API: drop and recreate the world (waits for a running world DAG to end); first brings the stand up and refuses in seconds, naming it, if a service cannot serve
	$(WORLD) rebuild-storage

snapshot: ## world_snapshot NAME=…: save the whole world (both nodes, ZooKeeper, Kafka and its group offsets, world_position) under the state dir
	@test -n "$(NAME)" || { echo "make snapshot: say which name: make snapshot NAME=day12"; exit 2; }
	$(WORLD) snapshot "$(NAME)"

restore: ## world_restore NAME=…: put a saved world back (position -1 while it runs), then the summary
	@test -n "$(NAME)" || { echo "make restore: say which snapshot: make restore NAME=day12 (make snapshots lists them)"; exit 2; }
	$(WORLD) restore "$(NAME)"

snapshots: ## list the snapshots: name, position, taken at, disk, schema; and the last restores
	$(WORLD) snapshots

snapshot-rm: ## remove the snapshot NAME=… (its files; refused while a snapshot or restore runs)
	@test -n "$(NAME)" || { echo "make snapshot-rm: say which snapshot: make snapshot-rm NAME=day12"; exit 2; }
	$(WORLD) snapshot-rm "$(NAME)"

stand-up: install ## only the infrastructure: Postgres, ZooKeeper, two ClickHouse nodes, Kafka, then the loader (idempotent)
	$(STAND) up

stand-down: ## stop the infrastructure processes, the loader first (by pid file)
	$(STAND) down

runner-start: ## start the runner (API, web view, workers) as a stand service and wait for its health
	$(WORLD) runner start

runner-stop: ## stop the runner service
	$(WORLD) runner stop

ch: ## clickhouse-client on the stand: ACCOUNT=reader|etl|lifecycle|admin (reader), NODE=ch1|ch2 (ch1), Q='SELECT …' runs one query
	@$(STAND) ch --account "$(or $(ACCOUNT),reader)" $(if $(NODE),--node "$(NODE)") $(if $(Q),-- --query "$(Q)")

psql: ## psql on the stand's Postgres: DB=runner|stand (runner), C='select …' runs one command
	@$(STAND) psql --database "$(or $(DB),runner)" $(if $(C),-- -c "$(C)")

kafka-lag: ## every consumer group's offsets and lag per partition (Kafka's own kafka-consumer-groups.sh)
	@$(STAND) kafka-lag

bi: ## Superset on the marts (optional, not part of up): installs .venv-bi the first time (about 3 min), starts it at the bi port of stand.yaml with a starter dashboard, login from stand.yaml
	bash scripts/bi-venv.sh
	$(STAND) bi

bi-down: ## stop Superset (make down stops it too)
	$(STAND) bi-down

smoke: ## services healthy, runner healthy, world DAGs loaded, world position readable
	$(WORLD) smoke

loader-reload: ## make each running loader read loader.options of the stand config again (POST /reload on its port; SIGHUP and saving the file do the same): prints what changed, or why it refused the file and kept its options (exit 1)
	@$(LAUNCH) src/loader/reload-cli.ts

check-services: ## health of every stand service with its restarts and last exit (the keeper's records), the loader with its state or why it is degraded
	$(STAND) status

doctor: ## what is wrong (dead or crash-looping services, a degraded loader, the keeper, world_position -1, stuck runs) and the command for each
	$(WORLD) doctor

dq: ## dq_check through the REST API, waited for: the world's data-quality checks (results in dm.dq_summary_v); exit 1 when one is red
	$(LAUNCH) src/cli/main.ts trigger dq_check --wait

check-clickhouse: ## cluster topology, macros, cross-shard reads, and rows per layer against the passport
	$(WORLD) check-clickhouse

config-test: ## docker-compose.yml and its ClickHouse configs, checked without any service
	node --import tsx --test --test-reporter=spec test/config/compose.test.ts

lint: ## eslint with type-aware rules
	npx eslint .

typecheck: ## tsc --noEmit: the Node code, then the browser code (src/web/browser, DOM types)
	npx tsc -p tsconfig.json --noEmit
	npx tsc -p src/web/browser/tsconfig.json --noEmit

runner-schema: install ## write src/runner/schema.sql, the runner schema after its last migration (pg_dump on the test stand's Postgres): run it after adding a runner migration (docs/runner.md)
	bash scripts/test-stand.sh $(TSX) scripts/runner-schema.ts

test-fast: ## typecheck, lint and every test that needs no service (test/service-free.txt), all at once, no stand started (about 52 s here)
	bash scripts/run-tests.sh --fast

test: ## the gate: every test file, each fault and rerun matrix a sample drawn from TEST_SEED (printed first; TEST_SEED=… reruns it), on two test stands at once beside the service-free lane; ends with the budget table (10 min); your world is checked untouched
	TEST_TIER=gate bash scripts/run-tests.sh

test-full: ## the deep suite: every point of every matrix, and Superset (its virtualenv installed); run it before resolving work on the runner, loader, keeper, snapshots or world DAGs (about 14 min here)
	TEST_TIER=full TEST_BUDGET_SECONDS=2400 bash scripts/run-tests.sh

generate-batch: ## one batch generator run into the stand's Kafka (GENERATOR_DAY=0 GENERATOR_DAYS=1 GENERATOR_LIMIT=…)
	$(WORLD) generate batch

generate-live: ## one live generator run (GENERATOR_DAY, GENERATOR_SPEED)
	$(WORLD) generate live

bench: ## runner (and a pool of 2), generator, ingestion (latency, loader throughput and a group of 2 loaders, cold world_initialize), web (pages, and the REST run list across DAGs beside one DAG's), the DAG folder (a file served by a running runner beside a runner started again) and world snapshot (save, restore beside rebuild-storage) benchmarks on the test stand, each beside its baseline
	STAND_WORLD_SIZE=canonical bash scripts/test-stand.sh bash -c '$(TSX) bench/runner-bench.ts && $(TSX) bench/generator-bench.ts && $(TSX) bench/ingest-bench.ts && $(TSX) bench/loader-bench.ts && $(TSX) bench/world-init-bench.ts && $(TSX) bench/web-bench.ts && $(TSX) bench/dag-folder-bench.ts && $(TSX) bench/snapshot-bench.ts'
