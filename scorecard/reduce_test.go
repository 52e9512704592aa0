package scorecard

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/streamprobe/streamprobe/dialect"
	"github.com/streamprobe/streamprobe/probe"
)

// synthetic is run i of a deterministic stream of records: TFC 200 ms to
// 3 s, ten gaps from 0 to 400 ms (a few of them zero), tail, close, tokens
// and rates, a connection setup every fourth run, a failed run in 50
// (HTTP 503 or 429), a burst-buffered run in 40.
func synthetic(rng *rand.Rand, i int) probe.Record {
	f := func(lo, hi float64) *float64 { v := math.Round((lo+rng.Float64()*(hi-lo))*1e3) / 1e3; return &v }
	r := probe.Record{RequestID: fmt.Sprintf("run-%07d", i), Target: "api", Sample: "short", Drill: "none", Outcome: probe.Success,
		TFCMs: f(200, 3000), TailMs: f(100, 5000), CloseMs: f(1, 50), VisibleTPS: f(5, 80), Chunks: 11,
		Tokens: &dialect.Tokens{Prompt: 14, Completion: 10 + rng.IntN(500)}}
	for k := range 10 {
		g := *f(0, 400)
		if k == 3 {
			g = 0
		}
		r.Gaps.Values = append(r.Gaps.Values, g)
	}
	if i%4 == 0 {
		r.DNSMs, r.ConnectMs, r.TLSMs = f(0, 5), f(1, 20), f(5, 40)
	}
	if i%40 == 7 {
		r.Gaps.Values = []float64{0.1, 0.2, 0.1, 900, 0.3, 0.2, 0.1}
		r.Stalls = 1
	}
	if i%50 == 3 {
		r.Outcome, r.HTTPStatus, r.Error = probe.UpstreamError, 503+(i%100/50)*-74, "HTTP 503"
	}
	return r
}

// feed builds the class of n synthetic runs and keeps every TFC and gap
// it was fed, for the exact percentiles.
func feed(n int) (*ClassBuilder, []float64, []float64) {
	rng := rand.New(rand.NewPCG(1, 2))
	b := NewClassBuilder("short")
	var tfc, gaps []float64
	for i := range n {
		r := synthetic(rng, i)
		b.Add(r)
		if r.Intended() {
			tfc = append(tfc, *r.TFCMs)
			gaps = append(gaps, r.Gaps.Values...)
		}
	}
	return b, tfc, gaps
}

// A class holds no more with ten times the runs: ExactValues exact values
// at most, the folded rows' bucket counts, the first and last KeptIDs
// request ids and a few ways of failing; and its percentiles, from the
// buckets, stay within HistResolution of the exact percentiles of every
// value pooled, each in the bucket the card names.
func TestClassBuilderMemoryIsBounded(t *testing.T) {
	const n = 20_000
	small, _, _ := feed(n)
	big, tfc, gaps := feed(10 * n)
	bound := ExactValues + len(big.rows())*(maxIdx-minIdx+1) + 2*KeptIDs + 2*6*501 + MaxKinds + 1
	t.Logf("retained: %d entries for %d runs, %d for %d runs (bound %d)", small.retained(), n, big.retained(), 10*n, bound)
	if big.retained() > bound {
		t.Errorf("retained %d entries, over the bound %d", big.retained(), bound)
	}
	if big.retained() > small.retained()*11/10 {
		t.Errorf("retained %d entries for %d runs, %d for %d: it grows with the runs", big.retained(), 10*n, small.retained(), n)
	}
	if big.exact > ExactValues {
		t.Errorf("%d exact values, over ExactValues %d", big.exact, ExactValues)
	}
	cl := big.Class()
	if cl.Runs != 10*n || cl.Good+cl.Failed != cl.Runs || !cl.Gap.ranked || !cl.TFC.ranked {
		t.Fatalf("runs %d good %d failed %d, gap folded %v, tfc folded %v", cl.Runs, cl.Good, cl.Failed, cl.Gap.ranked, cl.TFC.ranked)
	}
	c := BuildClasses("api", []Class{cl}, nil, nil)
	if !strings.Contains(c.Resolution, "short TFC, short gap") || !strings.Contains(c.Resolution, "0.1%") {
		t.Errorf("resolution %q does not name the folded cells", c.Resolution)
	}
	for _, tt := range []struct {
		row  string
		vals []float64
	}{{"tfc", tfc}, {"gap", gaps}} {
		slices.Sort(tt.vals)
		ce := c.cell(tt.row, "short")
		if ce.N != len(tt.vals) {
			t.Errorf("%s: n %d, want %d", tt.row, ce.N, len(tt.vals))
		}
		for _, p := range []struct {
			q      float64
			got    *float64
			bucket *[2]float64
		}{{50, ce.Timing.P50, ce.Timing.P50Bucket}, {95, ce.Timing.P95, ce.Timing.P95Bucket}} {
			want, _ := probe.Percentile(tt.vals, p.q)
			if p.got == nil || p.bucket == nil {
				t.Fatalf("%s p%.0f: no value or no bucket", tt.row, p.q)
			}
			if math.Abs(*p.got-want) > HistResolution*want*(1+1e-9) {
				t.Errorf("%s p%.0f %v, exact %v: off by more than %.1f%%", tt.row, p.q, *p.got, want, HistResolution*100)
			}
			if want < p.bucket[0]*(1-1e-12) || want > p.bucket[1]*(1+1e-12) {
				t.Errorf("%s p%.0f: the exact %v lies outside the bucket %v", tt.row, p.q, want, *p.bucket)
			}
		}
	}
	// The zero gaps (one a run, but in the buffered runs) share the
	// bucket from 0 ms.
	if g := cl.Gap.Buckets[0]; g.Lo != 0 || g.Hi != histFloor || g.Count < float64(cl.Good)*9/10 {
		t.Errorf("first gap bucket %+v, want the zero gaps from 0 ms", g)
	}
	if cl.FailedRun == nil || cl.FailedRun.Like != cl.Failed/2 || cl.FailedRun.RequestID != "run-0000003" {
		t.Errorf("failed run %+v of %d failed", cl.FailedRun, cl.Failed)
	}
}

// Rows stay exact while the class holds fewer than ExactValues values,
// and the largest row folds first: the same percentiles as
// probe.Percentile over the values, no bucket and no resolution line.
func TestClassBuilderExactUnderTheCap(t *testing.T) {
	b, tfc, _ := feed(8_000)
	cl := b.Class()
	if cl.TFC.ranked || cl.TFC.Buckets != nil || len(cl.TFC.Values) != len(tfc) {
		t.Fatalf("tfc folded with %d values, under the cap", len(tfc))
	}
	c := BuildClasses("api", []Class{cl}, nil, nil)
	slices.Sort(tfc)
	want, _ := probe.Percentile(tfc, 95)
	if ce := c.cell("tfc", "short").Timing; *ce.P95 != want || ce.P95Bucket != nil {
		t.Errorf("p95 %v (bucket %v), want exactly %v", *ce.P95, ce.P95Bucket, want)
	}
	if c.cell("gap", "short").Timing.P95Bucket == nil || !strings.HasPrefix(c.Resolution, "short gap:") {
		t.Errorf("80,000 gaps and 44,000 other values: gap alone folds; resolution %q", c.Resolution)
	}
}

// Request ids: every one up to 2*KeptIDs runs, in order; past that the
// first and last KeptIDs, in order, and the count of the others.
func TestClassBuilderRequestIDs(t *testing.T) {
	for _, tt := range []struct{ runs, kept, omitted int }{{3, 3, 0}, {2 * KeptIDs, 2 * KeptIDs, 0}, {2*KeptIDs + 57, 2 * KeptIDs, 57}, {10_000, 2 * KeptIDs, 10_000 - 2*KeptIDs}} {
		b := NewClassBuilder("short")
		var all []string
		for i := range tt.runs {
			id := fmt.Sprintf("id-%05d", i)
			all = append(all, id)
			b.Add(probe.Record{RequestID: id, Sample: "short", Outcome: probe.Success})
		}
		c := BuildClasses("api", []Class{b.Class()}, nil, nil)
		got := c.RequestIDs["short"]
		want := all
		if len(all) > 2*KeptIDs {
			want = slices.Concat(all[:KeptIDs], all[len(all)-KeptIDs:])
		}
		if !slices.Equal(got, want) || len(got) != tt.kept || c.RequestIDsOmitted["short"] != tt.omitted {
			t.Errorf("%d runs: %d ids kept (%v...), %d omitted; want %d, %d", tt.runs, len(got), got[:min(3, len(got))], c.RequestIDsOmitted["short"], tt.kept, tt.omitted)
		}
	}
}

// Names from a log are bounded: a million runs with as many outcome
// names count at most MaxKinds of them apart (the rest as "other"), every
// run counted once.
func TestClassBuilderOutcomeNamesAreBounded(t *testing.T) {
	b := NewClassBuilder("short")
	const n = 100_000
	for i := range n {
		b.Add(probe.Record{RequestID: "r", Sample: "short", Outcome: probe.Outcome(fmt.Sprintf("odd-%d", i)), HTTPStatus: 1000 + i})
	}
	cl := b.Class()
	sum := 0
	for _, k := range cl.Outcomes {
		sum += k
	}
	if len(cl.Outcomes) > MaxKinds+1 || sum != n || cl.Outcomes["other"] != n-MaxKinds {
		t.Errorf("%d outcome names, %d runs counted, other %d", len(cl.Outcomes), sum, cl.Outcomes["other"])
	}
	if len(b.ways) != 1 || cl.FailedRun.Like != n || cl.FailedRun.Outcome != "odd-0" {
		t.Errorf("%d ways, failed run %+v: one way (other, invalid status) with the first run", len(b.ways), cl.FailedRun)
	}
}
