#!/usr/bin/env bash
# Runs the shared live-stream benchmark (../../../shared/bench/clients, see its
# README) with two clients of this project added: "streamprobe" (resumeclient,
# the shared bench's own entry) and "probe" (the whole probe.Run path,
# ./probe/main.go). Any arguments go to the bench's run.sh (S, the number of
# streams). Environment as for run.sh: CLIENTS, OUT, E, R, ROUNDS; and
# LIVE_AT (a duration): each Go client then runs a full GC that long after
# it starts and reports its live heap and stacks (./live/live.go), and the
# run ends with their medians in KiB per stream. A forced GC changes the
# run, so its lag and RSS figures are not the bench's.
#
#   bench/peers/run.sh 500
#   LIVE_AT=2s CLIENTS="probe streamprobe naive" bench/peers/run.sh 500
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
if [ -n "${LIVE_AT:-}" ]; then
  for d in "$src"/cmd/*/; do
    [ "$(basename "$d")" = server ] || [ "$(basename "$d")" = table ] || cp "$here/live/live.go" "$d/live.go"
  done
fi
cd "$src"
go mod edit -require=github.com/streamprobe/streamprobe@v0.0.0 -replace=github.com/streamprobe/streamprobe="$proj"
GOFLAGS=-mod=mod go mod tidy >/dev/null 2>&1 || true
export GOFLAGS="-mod=mod -tags=streamprobe"
./run.sh "$@"
[ -n "${LIVE_AT:-}" ] || exit 0
# The live figures per client: medians over the rounds, in KiB per stream.
S=${1:-500}
echo
echo "| client | live heap KiB/stream | stacks KiB/stream | heap + stacks KiB/stream | goroutines |"
echo "| --- | --- | --- | --- | --- |"
for c in $CLIENTS; do
  { cat "$OUT/s$S/$c".*.err 2>/dev/null || true; } | awk -v c="$c" -v s="$S" '
    /^live at / { h[n] = $5; k[n] = $7; t[n] = $5 + $7; g[n] = $9; n++ }
    function med(a,   i, j, x) {
      for (i = 0; i < n; i++) for (j = i + 1; j < n; j++) if (a[j] < a[i]) { x = a[i]; a[i] = a[j]; a[j] = x }
      return a[int((n - 1) / 2)]
    }
    END {
      if (n == 0) { printf "| %s | - | - | - | - |\n", c; exit }
      printf "| %s | %.1f | %.1f | %.1f | %d |\n", c, med(h) / 1024 / s, med(k) / 1024 / s, med(t) / 1024 / s, med(g)
    }'
done
