# Builds go through the repository (pinned modules, gocql replace directive);
# never `go install ...@latest`.
GO       ?= go
FUZZTIME ?= 60s
export TESTCONTAINERS_RYUK_DISABLED = true
# One build configuration for everything: the image doubles need a static
# binary (CGO_ENABLED=0, provision/docker/dockertest), nothing here needs
# cgo, and a test run that also built with cgo compiled every package twice
# (the second, static build took 67 s on a cold cache here).
export CGO_ENABLED ?= 0

.PHONY: all build test acceptance lint bench bench-client bench-emulator e2e e2e-docker fuzz emulator-image clean

all: lint build

# bin/elasticity-loader is the load generator alone (`elasticity-loader stress`):
# remote loaders get it instead of the whole runner when it is next to it.
build:
	$(GO) build -o bin/elasticity ./cmd/elasticity
	$(GO) build -o bin/elasticity-loader ./cmd/elasticity-loader

# What .ci/run calls.
test:
	$(GO) vet ./... && $(GO) test -p 1 -timeout 60m ./...
	$(MAKE) acceptance

# The load generator's acceptance (about 2 min): 2,000 ops/s for 30 s within
# 1% against three node processes and three emulated nodes, one of them
# SIGSTOPped for 2 s; behind flags because they are slow.
acceptance:
	$(GO) test -p 1 -count 1 -timeout 15m -run 'TestAcceptance' ./stress/ -args -acceptance -acceptance-emulator

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	@$(GO) mod tidy -diff || { echo "go.mod/go.sum are not tidy: run go mod tidy"; exit 1; }

bench:
	$(GO) test -p 1 -run '^$$' -bench . -benchtime 2s ./...

# The load generator's own cost against nullcql (../shared/tools/nullcql or
# NULLCQL_SRC): ops per client CPU-second, server CPU per operation, RSS and
# fixed-rate accuracy at 100..50,000 op/s, concurrency 64 and 1,000 (~2 min);
# elasticity-loader by default, BENCH_CLIENT=elasticity for the whole runner.
bench-client:
	bash scripts/bench-client.sh

# The emulated node's cost (issue 17): three i4i.4xlarge node processes,
# mixed 1:1 at RF=3 QUORUM with 1 KiB values at fixed rates; prints node CPU
# per client operation, RSS and P50/P99 per rate (BENCH_EMU_RATES,
# BENCH_EMU_SECONDS; ~1 min on an idle machine).
bench-emulator:
	$(GO) test -p 1 -count 1 -timeout 20m -run '^$$' -bench '^BenchmarkNodeCost$$' -benchtime 1x ./emulator/localcluster/

e2e:
	$(GO) test -p 1 -v -count 1 -timeout 30m ./e2e/

# Fuzz targets, one at a time (go test -fuzz takes one package).
fuzz:
	$(GO) test -run '^$$' -fuzz '^FuzzLoad$$' -fuzztime $(FUZZTIME) ./scenarios/

# The docker backend against the local engine with the emulator image
# (built by the tests as elasticity-emulator:VERSION; skips with no engine).
e2e-docker:
	$(GO) test -p 1 -v -count 1 -timeout 30m ./provision/docker/... ./e2e/docker/

# The versions the image double is built as (provision/docker/dockertest.Versions),
# each tagged elasticity-emulator:<version> and, as upstream's floating tags,
# elasticity-emulator:<year.minor> for the last one listed of that branch.
EMULATOR_VERSIONS ?= 2025.1.0 2025.4.0 2025.4.5 2026.1.0 2026.3.0
emulator-image:
	mkdir -p build/emulator
	CGO_ENABLED=0 $(GO) build -o build/emulator/elasticity ./cmd/elasticity
	mkdir -p build/emulator/rootfs/usr/bin
	for p in scylla supervisorctl df; do ln -sfn /elasticity build/emulator/rootfs/usr/bin/$$p; done
	for v in $(EMULATOR_VERSIONS); do \
	  docker build -f Dockerfile.emulator --build-arg SCYLLA_VERSION=$$v -t elasticity-emulator:$$v build/emulator || exit 1; \
	  docker tag elasticity-emulator:$$v elasticity-emulator:$${v%.*} || exit 1; \
	done

clean:
	rm -rf bin build
