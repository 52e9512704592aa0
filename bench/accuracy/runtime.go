package main

import (
	"fmt"
	"math"
	"runtime/metrics"
)

// rtSnap is a reading of the runtime's own account of what delays a
// goroutine: how long runnable goroutines waited for a processor, and the
// collector's stop-the-world pauses.
type rtSnap struct{ s []metrics.Sample }

func rtRead() rtSnap {
	s := []metrics.Sample{{Name: "/sched/latencies:seconds"}, {Name: "/gc/pauses:seconds"}, {Name: "/gc/cycles/total:gc-cycles"}}
	metrics.Read(s)
	return rtSnap{s}
}

// since says, for the span between two readings, the p99 and max of the
// scheduling latency, the GC cycles and the longest pause, in ms (a
// bucket's upper bound: the runtime's buckets are about 13% wide).
func (b rtSnap) since(a rtSnap) string {
	p99, mx, _ := histDelta(a.s[0].Value.Float64Histogram(), b.s[0].Value.Float64Histogram())
	_, pmax, _ := histDelta(a.s[1].Value.Float64Histogram(), b.s[1].Value.Float64Histogram())
	return fmt.Sprintf("runtime: goroutine scheduling latency p99 %.3f max %.3f, GC cycles %d, GC pause max %.3f",
		p99*1000, mx*1000, b.s[2].Value.Uint64()-a.s[2].Value.Uint64(), pmax*1000)
}

func histDelta(a, b *metrics.Float64Histogram) (p99, mx float64, n uint64) {
	counts := make([]uint64, len(b.Counts))
	for i := range counts {
		counts[i] = b.Counts[i] - a.Counts[i]
		n += counts[i]
	}
	var acc uint64
	p99 = math.NaN()
	for i, c := range counts {
		acc += c
		hi := b.Buckets[i+1]
		if math.IsInf(hi, 1) {
			hi = b.Buckets[i]
		}
		if math.IsNaN(p99) && float64(acc) >= 0.99*float64(n) {
			p99 = hi
		}
		if c > 0 {
			mx = hi
		}
	}
	return p99, mx, n
}
