# LoreKeeper. `make run` starts everything on the embedded default;
# `make test` runs every module's tests. Both install what they need first,
# idempotently: Debian packages, Go modules, the ONNX Runtime library and
# the embedding model.

SHELL       := /bin/bash
SUDO        := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
.SHELLFLAGS := -eu -o pipefail -c
MODULES     := proto ingest embedder query mcpserver deploy cmd/lorekeeper
PKGS        := $(addprefix ./,$(addsuffix /...,$(MODULES)))
BIN         := bin/lorekeeper
# Where `make model` puts the runtime library and the model (also the
# binary's default, overridable with LOREKEEPER_MODEL_DIR).
MODEL_DIR   ?= $(CURDIR)/.models
export LOREKEEPER_MODEL_DIR ?= $(MODEL_DIR)
GOLANGCI_LINT_VERSION := v2.15.0
TEST_TIMEOUT ?= 15m
RUN_FLAGS   ?=

.PHONY: all run build test test-short bench proto lint tools model clean help

all: build

help: ## This list.
	@grep -hE '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed -E 's/:.*## /\t/' | expand -t14

build: $(BIN) ## Build bin/lorekeeper.

$(BIN): FORCE
	go build -o $(BIN) ./cmd/lorekeeper
FORCE:

run: tools model build ## Start LoreKeeper on the embedded default (data in ./data).
	$(BIN) up $(RUN_FLAGS)

test: tools model ## Every module's tests, with the race detector.
	go test -race -count=1 -timeout $(TEST_TIMEOUT) $(PKGS)

bench: tools model ## Benchmarks; they print their figures.
	go test -run '^$$' -bench . -benchmem -timeout 30m $(PKGS)

proto: tools ## Regenerate the committed Go code from proto/.
	cd proto && go generate ./...

lint: tools ## go vet and golangci-lint.
	go vet $(PKGS)
	go run github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION) run $(PKGS)

tools: ## Debian packages the build and tests need: protoc, npm, promtool.
	@missing=""; \
	{ command -v protoc >/dev/null && [ -f /usr/include/google/protobuf/timestamp.proto ]; } || missing="$$missing protobuf-compiler libprotobuf-dev"; \
	command -v npm >/dev/null || missing="$$missing nodejs npm"; \
	command -v promtool >/dev/null || missing="$$missing prometheus"; \
	if [ -n "$$missing" ]; then \
		echo "installing Debian packages:$$missing"; \
		$(SUDO) apt-get update -qq && $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing >/dev/null; \
	fi

model: ## Fetch the ONNX Runtime library and the default model, verified.
	@scripts/model.sh "$(LOREKEEPER_MODEL_DIR)"

clean: ## Remove build output (not ./data, not the models).
	rm -rf bin
