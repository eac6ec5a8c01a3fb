# Clickstream stand. `make up` brings the stand up and creates the world; `make test` runs the tests.
# `make help` lists every target.
SHELL := /bin/bash
TSX := node --import tsx

.DEFAULT_GOAL := help
.PHONY: help install stand-up stand-down clean test lint typecheck config-test check-services bench

help: ## list the targets
	@grep -hE '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-18s %s\n", $$1, $$2}'

install: ## install what is missing: npm packages, Debian packages (ClickHouse, ZooKeeper, PostgreSQL), Kafka jars
	bash scripts/install-deps.sh

stand-up: install ## start Postgres, ZooKeeper, two ClickHouse nodes and Kafka under .stand/ (idempotent)
	$(TSX) src/stand/cli.ts up

stand-down: ## stop the stand's processes (by pid file)
	$(TSX) src/stand/cli.ts down

check-services: ## health of every stand service
	$(TSX) src/stand/cli.ts status

clean: ## stop the stand and remove all its state (.stand/)
	$(TSX) src/stand/cli.ts clean

test: ## typecheck, lint and every test, against the running stand (make stand-up first)
	bash scripts/run-tests.sh

lint: ## eslint with type-aware rules
	npx eslint .

typecheck: ## tsc --noEmit
	npx tsc -p tsconfig.json --noEmit

config-test: ## docker-compose.yml and its ClickHouse configs, checked without any service
	bash scripts/run-tests.sh test/config/compose.test.ts
