package probe

import (
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/streamprobe/streamprobe/internal/testenv/reftest"
)

// The scorecard article's worked example: chunks at these offsets, the end
// event at 1051 ms. TFC 412, gap p50 46, gap p95 259, tail 632, close 7.
func TestReduceWorkedExample(t *testing.T) {
	chunks := []float64{412, 452, 497, 541, 588, 634, 691, 950, 998, 1044}
	end := 1051.0
	s := Reduce(chunks, &end)
	f := func(name string, got *float64, want float64) {
		t.Helper()
		if got == nil || *got != want {
			t.Errorf("%s = %v, want %v", name, reftest.Shown(got), want)
		}
	}
	f("tfc", s.TFC, 412)
	f("gap p50", s.GapP50, 46)
	f("gap p95", s.GapP95, 259)
	f("gap max", s.GapMax, 259)
	f("tail", s.Tail, 632)
	f("close", s.Close, 7)
	if s.Stalls != 1 {
		t.Errorf("stalls = %d, want 1", s.Stalls)
	}
	if len(s.Gaps) != 9 {
		t.Errorf("gap count = %d, want 9", len(s.Gaps))
	}
	if want := []float64{57, 259, 48, 46}; !slices.Equal(s.Last5[1:], want) || len(s.Last5) != 5 {
		t.Errorf("last5 = %v", s.Last5)
	}
}

func TestPercentileMethod(t *testing.T) {
	tests := []struct {
		name string
		vals []float64
		p    float64
		want float64
	}{
		{"one value", []float64{5}, 95, 5},
		// round(0.5) is 0 with half to even, as in the article's Python.
		{"two values p50 rounds half to even", []float64{1, 2}, 50, 1},
		{"four values p50", []float64{1, 2, 3, 4}, 50, 3}, // round(1.5) = 2
		{"eleven values p95", []float64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 95, 10},
		{"twenty values p95", seq(20), 95, 18}, // round(18.05) = 18
		{"p0", []float64{3, 4, 5}, 0, 3},
		{"p100", []float64{3, 4, 5}, 100, 5},
	}
	for _, tt := range tests {
		got, ok := Percentile(tt.vals, tt.p)
		if !ok || got != tt.want {
			t.Errorf("%s: Percentile = %v, %v; want %v", tt.name, got, ok, tt.want)
		}
	}
	if _, ok := Percentile(nil, 50); ok {
		t.Error("Percentile(nil) reported a value")
	}
}

func seq(n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = float64(i)
	}
	return out
}

func TestReduceAbsentIsNotZero(t *testing.T) {
	s := Reduce(nil, nil)
	if s.TFC != nil || s.GapP50 != nil || s.Tail != nil || s.Close != nil {
		t.Errorf("no chunks gave values: %+v", s)
	}
	one := Reduce([]float64{100}, nil)
	if one.TFC == nil || *one.TFC != 100 || one.GapP50 != nil || one.Close != nil {
		t.Errorf("one chunk, no end: %+v", one)
	}
	if one.Tail == nil || *one.Tail != 0 {
		t.Errorf("one chunk: tail = %v, want 0", reftest.Shown(one.Tail))
	}
}

func TestReduceBreaksExcludeReconnect(t *testing.T) {
	// Chunk 3 is the first after a reconnect: the 2 s interval is not a gap.
	s := Reduce([]float64{100, 150, 200, 2200, 2250}, nil, 3)
	if len(s.Gaps) != 3 || *s.GapMax != 50 || s.Stalls != 0 || s.Exclude != 1 {
		t.Errorf("gaps %v max %v stalls %d excluded %d", s.Gaps, reftest.Shown(s.GapMax), s.Stalls, s.Exclude)
	}
}

// Reduce leaves its input as it was (the percentiles are selected, not
// sorted in place); the run's reduction over its timeline's own chunk
// times gives the same scores.
func TestReduceLeavesChunksAlone(t *testing.T) {
	chunks := []float64{120, 180, 260, 290, 940, 950, 1440}
	end := ptr(1500.0)
	want := slices.Clone(chunks)
	a := Reduce(chunks, end, 5)
	if !slices.Equal(chunks, want) {
		t.Fatalf("Reduce changed its input: %v", chunks)
	}
	if !slices.Equal(a.Gaps, []float64{60, 80, 30, 650, 490}) || *a.GapP50 != 80 || *a.GapP95 != 650 || *a.GapMax != 650 ||
		*a.Tail != 1320 || *a.Close != 60 || a.Exclude != 1 || !slices.Equal(a.Last5, a.Gaps) {
		t.Errorf("scores %+v", a)
	}
	var tl Timeline
	tl.Start = time.Unix(1000, 0)
	for _, c := range chunks {
		tl.chunks.append(time.Duration(c * 1e6))
	}
	tl.End = tl.Start.Add(1500 * time.Millisecond)
	tl.Breaks = []int{5}
	b := tl.scores()
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("over the timeline: %+v\nReduce: %+v", b, a)
	}
}

// kth selects what a sorted copy holds at each index, for values of
// every sign and size, ties included.
func TestKthIsTheSortedValue(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 200 {
		n := 1 + rng.IntN(300)
		v := make([]float64, n)
		for i := range v {
			switch rng.IntN(4) {
			case 0:
				v[i] = float64(rng.IntN(5)) // ties
			case 1:
				v[i] = -rng.Float64() * 1e3
			case 2:
				v[i] = rng.ExpFloat64() * 50
			default:
				v[i] = math.Round(rng.Float64()*1e6) / 1e3
			}
		}
		sorted := slices.Clone(v)
		slices.Sort(sorted)
		before := slices.Clone(v)
		for k := range n {
			if got := kth(v, k); got != sorted[k] {
				t.Fatalf("round %d: kth(%d) = %v, sorted holds %v", round, k, got, sorted[k])
			}
		}
		if !slices.Equal(v, before) {
			t.Fatalf("round %d: kth reordered its input", round)
		}
	}
	if got := kth([]float64{math.Inf(1), 0, math.Inf(-1), math.MaxFloat64}, 2); got != math.MaxFloat64 {
		t.Errorf("with infinities: %v", got)
	}
}
