package probe

import (
	"math"
	"slices"
)

// StallThresholdMs is the gap above which a gap counts as a stall.
const StallThresholdMs = 250

// Percentile returns the p-th percentile of sorted by the scorecard
// article's method: idx = min(n-1, round(p/100*(n-1))), with round half to
// even as in the article's Python reduction. It returns false for no values.
func Percentile(sorted []float64, p float64) (float64, bool) {
	n := len(sorted)
	if n == 0 {
		return 0, false
	}
	idx := int(math.RoundToEven((p / 100) * float64(n-1)))
	idx = min(n-1, max(0, idx))
	return sorted[idx], true
}

// Scores is the reduction of one request's chunk arrival times.
type Scores struct {
	TFC     *float64
	Gaps    []float64 // in arrival order
	GapP50  *float64
	GapP95  *float64
	GapMax  *float64
	Last5   []float64
	Tail    *float64
	Close   *float64
	Stalls  int
	Chunks  int
	Exclude int // gaps left out because a reconnect lies between them
}

// Reduce computes the scorecard of one request, all values in milliseconds
// from the request start: TFC is the first chunk; the gaps are the intervals
// between consecutive chunks, excluding request -> first chunk and last chunk
// -> end marker; tail is last chunk - first chunk; close is last chunk -> end
// marker. end may be nil (no end marker). Each entry of breaks is the index
// of a chunk that was the first after a reconnect: the interval that ends on
// it is a resume stall, not a gap. Absent values stay nil.
func Reduce(chunks []float64, end *float64, breaks ...int) Scores {
	s := Scores{Chunks: len(chunks)}
	if len(chunks) == 0 {
		return s
	}
	s.TFC = ptr(chunks[0])
	s.Gaps = make([]float64, 0, len(chunks)-1)
	for i := 1; i < len(chunks); i++ {
		if slices.Contains(breaks, i) {
			s.Exclude++
			continue
		}
		s.Gaps = append(s.Gaps, chunks[i]-chunks[i-1])
	}
	if len(s.Gaps) > 0 {
		sorted := slices.Clone(s.Gaps)
		slices.Sort(sorted)
		p50, _ := Percentile(sorted, 50)
		p95, _ := Percentile(sorted, 95)
		s.GapP50, s.GapP95, s.GapMax = ptr(p50), ptr(p95), ptr(sorted[len(sorted)-1])
		s.Last5 = slices.Clone(s.Gaps[max(0, len(s.Gaps)-5):])
		for _, g := range s.Gaps {
			if g > StallThresholdMs {
				s.Stalls++
			}
		}
	}
	last := chunks[len(chunks)-1]
	s.Tail = ptr(last - chunks[0])
	if end != nil {
		s.Close = ptr(*end - last)
	}
	return s
}

func ptr(v float64) *float64 { return &v }
