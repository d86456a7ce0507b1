# sentinel: build, test, lint, bench, demo and the local control plane.
SHELL := bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := help

KUBE_VERSION := v1.37.2
CACHE        := $(CURDIR)/.cache
export SENTINEL_KUBE_BINS := $(CACHE)/kube/$(KUBE_VERSION)
VERSION      ?= $(shell git describe --always --dirty 2>/dev/null || echo dev)
LDFLAGS      := -X github.com/sentinel-go/sentinel/plumbing/command.version=$(VERSION)
# Static binaries (no libc, no cgo threads) without urfave/cli's man and
# markdown generators (their markdown library's init is the biggest at
# start-up): a few milliseconds off every invocation of a short-lived tool.
BUILDFLAGS   := -tags urfave_cli_no_docs -ldflags "$(LDFLAGS)"
MODULES       = $(shell go list -m -f '{{.Dir}}')
STATICCHECK  := honnef.co/go/tools/cmd/staticcheck@v0.8.2
CONTROLLER_GEN_VERSION := v0.23.0
CONTROLLER_GEN := $(CACHE)/tools/controller-gen-$(CONTROLLER_GEN_VERSION)
# k8s.io/code-generator as pinned in maintd/tools/go.mod (keep the two equal):
# client-gen, lister-gen and informer-gen, built into CODE_GEN.
CODE_GENERATOR_VERSION := v0.37.2
CODE_GEN     := $(CACHE)/tools/code-generator-$(CODE_GENERATOR_VERSION)
# The generated MaintenancePlan client (typed client and its fake, lister,
# informer): maintd/client is generated (but its staticcheck.conf), and made anew each time.
CLIENT_PKG   := github.com/sentinel-go/sentinel/maintd/client
API_PKG      := github.com/sentinel-go/sentinel/maintd/api/v1alpha1
BOILERPLATE  := tools/boilerplate.go.txt
# make test fuzzes each target for TEST_FUZZTIME, make fuzz for FUZZTIME;
# FUZZPARALLEL is go test's -parallel for the fuzzers: workers per target
# (1 keeps a shared machine usable; $$(nproc) is Go's default);
# FUZZMINIMIZETIME is -fuzzminimizetime: Go's default, 60s for every new
# input, left FuzzForNodes 60 executions in 5 minutes (2s: 38,000 in 40s).
SEEDS        ?= 1000
TEST_FUZZTIME ?= 10s
FUZZTIME     ?= 5m
FUZZPARALLEL ?= 1
FUZZMINIMIZETIME ?= 5s
TOOLS        := k8s-snapshot k8s-analyze k8s-cordon k8s-evict maintd kubectl-maint meminfo-exporter sentinel-cluster
NODES        ?= 4

.PHONY: help
help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-10s %s\n", $$1, $$2}'

.PHONY: build
build: ## build every tool into ./bin
	@mkdir -p bin
	@for m in $(MODULES); do (cd $$m && CGO_ENABLED=0 go build $(BUILDFLAGS) -o $(CURDIR)/bin/ ./...); done
	@install -m 0755 maintd/cmd/kubectl-maint/kubectl_complete-maint bin/   # kubectl's plugin completion: kubectl maint <TAB>
	@ls bin

.PHONY: kube-bins
kube-bins: ## build etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kubectl, kwok into .cache (once)
	@plumbing/kubebuild/build.sh $(CACHE)/kube

.PHONY: deps
deps: ## install the Debian packages the tests need (prometheus, wrk, tmux, ...)
	@.ci/deps.sh

.PHONY: generate
generate: $(CONTROLLER_GEN) $(CODE_GEN)/client-gen $(CODE_GEN)/lister-gen $(CODE_GEN)/informer-gen ## the MaintenancePlan CRD, deep-copy code, client, lister and informer from maintd's API types (pinned generators)
	@cd maintd && $(CONTROLLER_GEN) object paths=./api/... && \
		$(CONTROLLER_GEN) crd:crdVersions=v1 paths=./api/... output:crd:stdout > deploy/crd.yaml
	@cd maintd && rm -rf client/clientset client/listers client/informers && \
		$(CODE_GEN)/client-gen --go-header-file $(BOILERPLATE) --clientset-name versioned \
			--input-base github.com/sentinel-go/sentinel/maintd --input api/v1alpha1 \
			--output-dir client/clientset --output-pkg $(CLIENT_PKG)/clientset && \
		$(CODE_GEN)/lister-gen --go-header-file $(BOILERPLATE) \
			--output-dir client/listers --output-pkg $(CLIENT_PKG)/listers $(API_PKG) && \
		$(CODE_GEN)/informer-gen --go-header-file $(BOILERPLATE) --single-directory \
			--versioned-clientset-package $(CLIENT_PKG)/clientset/versioned --listers-package $(CLIENT_PKG)/listers \
			--output-dir client/informers --output-pkg $(CLIENT_PKG)/informers $(API_PKG)

.PHONY: check-generated
check-generated: generate ## fail when a generated file differs from what is committed
	@git diff --exit-code -- maintd/deploy/crd.yaml maintd/api maintd/client || { echo "generated files are stale: run make generate and commit" >&2; exit 1; }
	@untracked=$$(git ls-files --others --exclude-standard -- maintd/client); if [[ -n "$$untracked" ]]; then echo "generated files are not committed: $$untracked" >&2; exit 1; fi

$(CONTROLLER_GEN):
	@mkdir -p $(dir $@)
	@cd maintd/tools && GOWORK=off CGO_ENABLED=0 go build -o $@ sigs.k8s.io/controller-tools/cmd/controller-gen

$(CODE_GEN)/%:
	@mkdir -p $(dir $@)
	@cd maintd/tools && GOWORK=off CGO_ENABLED=0 go build -o $@ k8s.io/code-generator/cmd/$*

.PHONY: test
test: deps kube-bins build check-generated ## unit, golden, control-plane e2e (-race), fuzz (bounded), demo
	@# A module's own package (its control-plane e2e tests, some of which
	@# time a drain against another) runs alone, after the module's others:
	@# a timing shares the two CPUs with no other test binary.
	@for m in $(MODULES); do echo "== go test $$m"; (cd $$m && root=$$(go list -e -f '{{if or .TestGoFiles .XTestGoFiles}}{{.ImportPath}}{{end}}' .) && \
	  go test -race -count=1 -timeout 45m $$(go list ./... | grep -vxF "$${root:-none}") && \
	  if [[ -n "$$root" ]]; then go test -race -count=1 -timeout 45m .; fi); done
	@echo "== maintd simulation, $(SEEDS) seeds"; $(MAKE) --no-print-directory sim SEEDS=$(SEEDS)
	@FUZZPARALLEL=$(FUZZPARALLEL) FUZZMINIMIZETIME=$(FUZZMINIMIZETIME) .ci/fuzz.sh $(TEST_FUZZTIME) $(MODULES)
	@$(MAKE) --no-print-directory demo

.PHONY: fuzz
fuzz: ## every fuzz target for FUZZTIME (default 5m) with FUZZPARALLEL workers (default 1); failing inputs stay in testdata/fuzz
	@FUZZPARALLEL=$(FUZZPARALLEL) FUZZMINIMIZETIME=$(FUZZMINIMIZETIME) .ci/fuzz.sh $(FUZZTIME) $(MODULES)

.PHONY: sim
sim: ## maintd's deterministic simulation over SEEDS seeds (default 1000, also in make test); a failing seed prints the schedule that replays it
	@cd maintd && go test -count=1 -timeout 30m -run 'TestSim$$' ./sim -seeds $(SEEDS) -v

# make forecast-accuracy runs 50 seeds unless SEEDS is given.
FORECAST_SEEDS = $(if $(filter command line environment,$(origin SEEDS)),$(SEEDS),50)

.PHONY: forecast-accuracy
forecast-accuracy: kube-bins build ## maintd's drain forecast against SEEDS seeded drains on the local control plane (default 50; make test runs 10); the table goes to docs/benchmarks.md
	@out=$$(mktemp); sec=$$(mktemp); \
		(cd maintd && go test -count=1 -timeout 60m -run 'TestForecastAccuracy$$' . -forecast-seeds $(FORECAST_SEEDS) -forecast-report $$out -v | grep -E '^(---|ok|FAIL)|seed [0-9]+:'); \
		{ echo "## Forecast accuracy"; echo; \
		  echo "\`make forecast-accuracy SEEDS=$(FORECAST_SEEDS)\` ($$(date -u +%Y-%m-%d), $$(nproc) cores): each seed draws 4-12 kwok nodes and 10-150 pods in"; \
		  echo "Deployments and StatefulSets (time to Ready 2-8 s, each pod's up to 30% more; grace 1-8 s; exits drawn per pod: at once in 2 of 5"; \
		  echo "workloads, the whole grace in 1, 20-80% of it in 2; PDBs maxUnavailable 1-3 or minAvailable), lets maintd drain nodes 2 and 3"; \
		  echo "and learn, then drains node 1 and compares the forecast its plan carried at the cordon with the time from the cordon to Drained."; \
		  echo; cat $$out; } > $$sec; \
		python3 plumbing/bench/section.py docs/benchmarks.md "## Forecast accuracy" $$sec; rm -f $$out $$sec

.PHONY: docs
docs: build ## docs/tools/<tool>.md, each tool's manual page, from its help (tests fail when they are stale)
	@mkdir -p docs/tools
	@for t in $(TOOLS); do bin/$$t manual > docs/tools/$$t.md; done
	@ls docs/tools

.PHONY: lint
lint: ## go vet and staticcheck on every module
	@for m in $(MODULES); do echo "== lint $$m"; (cd $$m && go vet ./... && go run $(STATICCHECK) ./...); done

.PHONY: bench
bench: deps kube-bins build ## every tool's benchmark against its peer; figures go to docs/benchmarks.md
	@failed=(); for b in */bench/run.sh; do echo "== $$b"; bash $$b || failed+=("$$b"); done; \
	if [[ $${#failed[@]} -gt 0 ]]; then echo "bench: missed a target or failed: $${failed[*]}"; exit 1; fi

.PHONY: cluster
cluster: kube-bins build ## the local control plane in the foreground with NODES kwok nodes (Ctrl-C stops it)
	@bin/sentinel-cluster --nodes $(NODES)

.PHONY: demo
demo: kube-bins build ## local control plane, the demo scenario, then each tool's step
	@testdata/demo/run.sh

.PHONY: tidy
tidy: ## go mod tidy in every module
	@for m in $(MODULES); do (cd $$m && go mod tidy); done

.PHONY: clean
clean: ## remove ./bin (the control-plane cache in .cache stays)
	rm -rf bin
