#!/usr/bin/env bash
# Runs the shared live-stream benchmark (../../../shared/bench/clients, see its
# README) with two clients of this project added: "streamprobe" (resumeclient,
# the shared bench's own entry) and "probe" (the whole probe.Run path,
# ./probe/main.go). Any arguments go to the bench's run.sh (S, the number of
# streams). Environment as for run.sh: CLIENTS, OUT, E, R, ROUNDS.
#
#   bench/peers/run.sh 500
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
proj=$(cd "$here/../.." && pwd)
bench=${SHARED_BENCH:-$proj/../shared/bench/clients}
[ -f "$bench/run.sh" ] || { echo "bench/peers/run.sh: no shared bench at $bench (set SHARED_BENCH)" >&2; exit 2; }
export OUT=${OUT:-$(mktemp -d)}
export CLIENTS=${CLIENTS:-probe streamprobe naive tmaxmax r3labs node}
src="$OUT/src"
rm -rf "$src"; mkdir -p "$src/cmd/probe"
(cd "$bench" && tar --exclude=node/node_modules -cf - .) | tar -xf - -C "$src"
[ -d "$bench/node/node_modules" ] && ln -s "$bench/node/node_modules" "$src/node/node_modules"
cp "$here/probe/main.go" "$src/cmd/probe/main.go"
cd "$src"
go mod edit -require=github.com/streamprobe/streamprobe@v0.0.0 -replace=github.com/streamprobe/streamprobe="$proj"
GOFLAGS=-mod=mod go mod tidy >/dev/null 2>&1 || true
export GOFLAGS="-mod=mod -tags=streamprobe"
./run.sh "$@"
