#!/bin/sh
# Rebuilds otlp-logs.binpb: a protobuf FileDescriptorSet of opentelemetry-proto v1.4.0
# `collector/logs/v1/logs_service.proto` and its imports, taken from the .proto files shipped in
# the devDependency @elastic/mockotlpserver 0.10.0, built with the devDependency @bufbuild/buf 1.75.0.
# Usage: sh test/encoders/otlp-proto/regenerate.sh [OUT]   (from anywhere; OUT defaults to the committed file)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
src="$root/node_modules/@elastic/mockotlpserver"
out="${1:-$here/otlp-logs.binpb}"
cd "$src"
"$root/node_modules/.bin/buf" build . \
  --path opentelemetry/proto/collector/logs/v1/logs_service.proto \
  --exclude-source-info -o "$out"
