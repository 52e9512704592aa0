//go:build streamprobe

// File live.go is added to each Go client of the shared live-stream bench
// by ../run.sh when LIVE_AT is set (a duration, e.g. 2s): that long after
// the client starts, it runs a full garbage collection and prints to
// standard error what stays: the live heap, the goroutines' stacks and the
// goroutine count. A forced collection changes the run (its lag and peak
// RSS figures are not comparable with a run without LIVE_AT), so it is a
// separate run. Like ../probe/main.go it builds only inside a copy of the
// shared bench.
package main

import (
	"fmt"
	"os"
	"runtime"
	"runtime/metrics"
	"time"
)

func init() {
	at, err := time.ParseDuration(os.Getenv("LIVE_AT"))
	if err != nil || at <= 0 {
		return
	}
	time.AfterFunc(at, func() {
		runtime.GC()
		s := []metrics.Sample{
			{Name: "/gc/heap/live:bytes"},
			{Name: "/memory/classes/heap/stacks:bytes"},
			{Name: "/memory/classes/os-stacks:bytes"},
			{Name: "/sched/goroutines:goroutines"},
		}
		metrics.Read(s)
		fmt.Fprintf(os.Stderr, "live at %s: heap %d stacks %d goroutines %d\n", at,
			s[0].Value.Uint64(), s[1].Value.Uint64()+s[2].Value.Uint64(), s[3].Value.Uint64())
	})
}
