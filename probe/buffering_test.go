package probe

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/streamprobe/streamprobe/dialect"
	"github.com/streamprobe/streamprobe/internal/refserver"
	"github.com/streamprobe/streamprobe/internal/testenv/reftest"
)

// A buffering proxy's stream over loopback: 100 chunks in 4 bursts, 1.4 s
// apart, the first 300 ms after the headers. The gap percentiles are near
// zero, and Buffering names the 4 bursts and 3 freezes.
func TestBufferingFromBursts(t *testing.T) {
	t.Parallel()
	srv := reftest.Serve(t, refserver.NewUnstarted(refserver.Bursts(100, refserver.Ms(300, 1700, 3100, 4500)...)))
	res := runProbe(t, dialect.Target{Name: "t", URL: srv.URL, Dialect: "sse", EndData: "[DONE]"}, "long", 20*time.Second)
	rec, tl := res.Record, res.Timeline
	if rec.Outcome != Success || rec.Chunks != 100 || tl.ChunkCount() != 100 {
		t.Fatalf("outcome %s, %d chunks: %s", rec.Outcome, rec.Chunks, rec.Error)
	}
	if *rec.Gaps.P95Ms >= NearZeroGapMs {
		t.Errorf("gap p95 %v ms: the freezes should hide in the percentiles (3 of 99 gaps)", *rec.Gaps.P95Ms)
	}
	b, ok := rec.Buffering()
	if !ok || b.Bursts != 4 || b.Freezes != 3 || b.Gaps != 99 {
		t.Fatalf("buffering %+v, suspected %v; want 4 bursts, 3 freezes", b, ok)
	}
	// Each freeze runs from the last chunk of a burst to the first of the
	// next. The client read the last no earlier than its burst was due and
	// the first no earlier than the next burst was due: bounds on each
	// freeze, from the schedule and the client's own readings, that hold
	// however late a busy machine read either burst.
	c := reftest.ClosedConn(t, srv, 0)
	var lo, hi float64
	for k := range 3 {
		last, first := tl.Chunks()[25*k+24], tl.Chunks()[25*(k+1)]
		lo = max(lo, reftest.MsSince(last, reftest.Due(srv, c, k+1)))
		hi = max(hi, reftest.MsSince(reftest.Due(srv, c, k), first))
	}
	if b.LongestFreezeMs < lo-0.002 || b.LongestFreezeMs > hi+0.002 {
		t.Errorf("longest freeze %v ms, want %.3f to %.3f ms (the schedule's 1.4 s pauses, as the client read them)", b.LongestFreezeMs, lo, hi)
	}
	// The first chunk came 300 ms after the headers on the schedule; the
	// client read it no earlier, however late it read the headers.
	if h := b.HeadersToFirstChunkMs; h == nil || *h < reftest.MsSince(tl.Headers, reftest.Due(srv, c, 0))-0.002 {
		t.Errorf("headers to first chunk %v, the first burst was due %.3f ms after the client read the headers", reftest.Shown(h), reftest.MsSince(tl.Headers, reftest.Due(srv, c, 0)))
	}
}

// A whole answer released at once over loopback (40 chunks in one write a
// second after the headers) is named as one burst; a stream at the
// reference server's 40 ms, a fast one at 5 ms and a 2-chunk answer are
// not flagged.
func TestBufferingOneBurst(t *testing.T) {
	t.Parallel()
	evenly := func(n int, first, step float64) []refserver.Step {
		at := make([]float64, n)
		for i := range at {
			at[i] = first + step*float64(i)
		}
		return refserver.Events(refserver.Ms(at...), time.Duration(first+step*float64(n))*time.Millisecond)
	}
	for _, tt := range []struct {
		name     string
		schedule []refserver.Step
		chunks   int
		want     bool
	}{
		{"40 chunks in one write", refserver.Bursts(40, time.Second), 40, true},
		{"the reference server's 40 ms gaps", refserver.DrillEvents(), 12, false},
		{"a fast real stream, 5 ms gaps", evenly(40, 50, 5), 40, false},
		{"a 2-chunk answer in one write", refserver.Bursts(2, 100*time.Millisecond), 2, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := reftest.Serve(t, refserver.NewUnstarted(tt.schedule))
			res := runProbe(t, dialect.Target{Name: "t", URL: srv.URL, Dialect: "sse", EndData: "[DONE]"}, "long", 10*time.Second)
			rec, tl := res.Record, res.Timeline
			if rec.Outcome != Success || rec.Chunks != tt.chunks {
				t.Fatalf("outcome %s (%s), %d chunks, want %d", rec.Outcome, rec.Error, rec.Chunks, tt.chunks)
			}
			b, ok := rec.Buffering()
			if ok && !tt.want {
				if why := starved(srv, reftest.ClosedConn(t, srv, 0), tl); why != "" {
					// The client itself read the stream in bursts: the
					// flag is right for what it saw.
					t.Logf("flagged, as a busy machine made the client read it: %s (%s)", b, why)
					return
				}
			}
			if ok != tt.want {
				t.Fatalf("suspected %v, want %v: %s (gaps %v)", ok, tt.want, b, rec.Gaps.Values)
			}
			// (39 of 39 gaps under 2 ms on a quiet machine; a read of the
			// write cut in two by the scheduler makes one gap longer.)
			if ok && (b.Bursts != 1 || !strings.HasPrefix(b.String(), "one burst: the chunks came together; ") || !strings.Contains(b.String(), " of 39 gaps under 2 ms")) {
				t.Errorf("bursts %d, %q", b.Bursts, b)
			}
		})
	}
}

// starved says how the scheduler made the client read an evenly paced
// stream (one event per step, then the end marker) in bursts: it read an
// event only once the next was due, or read the first one more than the
// stall threshold after the headers when it was due sooner. Empty when it
// read every event on its own, as sent.
func starved(srv *refserver.Server, c refserver.Conn, tl Timeline) string {
	if len(c.Sent) != tl.ChunkCount()+1 {
		return ""
	}
	if first := srv.Schedule[c.Sent[0].Index].At; reftest.MsSince(tl.Headers, tl.Chunks()[0]) > StallThresholdMs && first <= StallThresholdMs*time.Millisecond {
		return fmt.Sprintf("read the first chunk %.0f ms after the headers, due %v after the request", reftest.MsSince(tl.Headers, tl.Chunks()[0]), first)
	}
	for i := 0; i+1 < tl.ChunkCount(); i++ {
		if next := reftest.Due(srv, c, i+1); !tl.Chunks()[i].Before(next) {
			return fmt.Sprintf("read chunk %d %.1f ms after chunk %d was due", i+1, reftest.MsSince(next, tl.Chunks()[i]), i+2)
		}
	}
	return ""
}

func TestBufferingRule(t *testing.T) {
	rec := func(headers, tfc float64, gaps ...float64) Record {
		return Record{HeadersMs: &headers, TFCMs: &tfc, Gaps: Gaps{Count: len(gaps), Values: gaps}}
	}
	same := func(n int, g float64) []float64 {
		out := make([]float64, n)
		for i := range out {
			out[i] = g
		}
		return out
	}
	for _, tc := range []struct {
		name   string
		r      Record
		want   bool
		bursts int
	}{
		{"worked example: real gaps, one stall", rec(5, 412, 40, 45, 44, 47, 46, 57, 259, 48, 46), false, 2},
		{"one burst after a late first chunk", rec(5, 900, 0.1, 0.1, 0.2, 0.1), true, 1},
		{"one burst, first chunk right after the headers", rec(5, 40, 0.1, 0.1, 0.2, 0.1), false, 1},
		{"two bursts split by a freeze", rec(5, 40, 0.1, 0.1, 600, 0.1, 0.1), true, 2},
		{"near-zero gaps are a minority", rec(5, 900, 0.1, 30, 30, 30, 600), false, 2},
		{"too few gaps to tell", rec(5, 900, 0.1, 0.1), false, 1},
		{"no gap values (a record read back from JSON)", Record{Gaps: Gaps{Count: 9}}, false, 1},
		{"held whole, headers too (nginx's defaults)", rec(1052, 1052, same(9, 0)...), true, 1},
		{"one burst of 40, first chunk right after the headers", rec(5, 6, same(39, 0.01)...), true, 1},
		{"one burst with a few real gaps (36 of 39)", rec(5, 6, append(same(36, 0), 30, 30, 30)...), true, 1},
		{"too few gaps for one burst (7)", rec(5, 6, same(7, 0)...), false, 1},
		{"near-zero gaps under 90% (33 of 39)", rec(5, 6, append(same(33, 0), same(6, 30)...)...), false, 1},
		{"the reference server's 40 ms gaps", rec(5, 412, same(39, 40)...), false, 1},
		{"a fast real stream, 5 ms gaps", rec(5, 50, same(39, 5)...), false, 1},
		{"a 2-chunk answer", rec(5, 5, 0), false, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, ok := tc.r.Buffering()
			if ok != tc.want || b.Bursts != tc.bursts {
				t.Errorf("suspected %v with %d bursts, want %v with %d (%s)", ok, b.Bursts, tc.want, tc.bursts, b)
			}
		})
	}
}
