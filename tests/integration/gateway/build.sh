#!/usr/bin/env bash
# build.sh PROTO_DIR TOOLS_DIR OUT_DIR: builds the grpc-gateway of integration.gateway into
# TOOLS_DIR/gateway. The protoc plugins (protoc-gen-go, -go-grpc, -grpc-gateway) are Go
# modules installed into TOOLS_DIR; the Go code for deltad's protos is generated into
# OUT_DIR (not committed: it is the gateway's, not deltad's), then main.go links it.
set -euo pipefail
proto=$(cd "$1" && pwd); tools=$(mkdir -p "$2" && cd "$2" && pwd); out=$(mkdir -p "$3" && cd "$3" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
export GOBIN="$tools" GOFLAGS=-mod=mod
go install google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.6
go install google.golang.org/grpc/cmd/protoc-gen-go-grpc@v1.5.1
go install github.com/grpc-ecosystem/grpc-gateway/v2/protoc-gen-grpc-gateway@v2.26.3
rm -rf "$out/pb" && mkdir -p "$out/pb"
cp "$here/main.go" "$here/go.mod" "$here/go.sum" "$out/"
cd "$proto"
files=$(find deltad delta spark -name '*.proto' | LC_ALL=C sort)
# Every proto file's Go package: ddgw/pb/<its folder>; google/api from genproto.
m="Mgoogle/api/annotations.proto=google.golang.org/genproto/googleapis/api/annotations"
m="$m,Mgoogle/api/http.proto=google.golang.org/genproto/googleapis/api/annotations"
for f in $files; do m="$m,M$f=ddgw/pb/$(dirname "$f")"; done
PATH="$tools:$PATH" protoc -I. -I/usr/include \
  --go_out="$out/pb" --go_opt="module=ddgw/pb,$m" \
  --go-grpc_out="$out/pb" --go-grpc_opt="module=ddgw/pb,$m" \
  --grpc-gateway_out="$out/pb" --grpc-gateway_opt="module=ddgw/pb,$m" $files
cd "$out" && go build -o "$tools/gateway" .
