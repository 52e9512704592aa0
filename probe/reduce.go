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
	if len(sorted) == 0 {
		return 0, false
	}
	return sorted[percentileIndex(len(sorted), p)], true
}

// percentileIndex is the index in n sorted values of the p-th percentile.
func percentileIndex(n int, p float64) int {
	idx := int(math.RoundToEven((p / 100) * float64(n-1)))
	return min(n-1, max(0, idx))
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
// it is a resume stall, not a gap. Absent values stay nil. The times are
// finite numbers (a NaN has no place in the order of the percentiles).
func Reduce(chunks []float64, end *float64, breaks ...int) Scores {
	return reduce(len(chunks), func(i int) float64 { return chunks[i] }, end, breaks)
}

// reduce is Reduce over n chunk times that at gives. It makes one slice,
// the gaps: the percentiles are selected in place (kth), not read from a
// sorted copy, so a run's reduction reads its timeline's own chunk times
// and leaves no copy of them behind.
func reduce(n int, at func(int) float64, end *float64, breaks []int) Scores {
	s := Scores{Chunks: n}
	if n == 0 {
		return s
	}
	first, last := at(0), at(n-1)
	s.TFC = ptr(first)
	s.Tail = ptr(last - first)
	if end != nil {
		s.Close = ptr(*end - last)
	}
	s.Gaps = make([]float64, 0, n-1)
	prev := first
	for i := 1; i < n; i++ {
		c := at(i)
		if slices.Contains(breaks, i) {
			s.Exclude++
		} else {
			s.Gaps = append(s.Gaps, c-prev)
		}
		prev = c
	}
	if g := s.Gaps; len(g) > 0 {
		s.GapP50 = ptr(kth(g, percentileIndex(len(g), 50)))
		s.GapP95 = ptr(kth(g, percentileIndex(len(g), 95)))
		s.GapMax = ptr(slices.Max(g))
		s.Last5 = slices.Clone(g[max(0, len(g)-5):])
		for _, v := range g {
			if v > StallThresholdMs {
				s.Stalls++
			}
		}
	}
	return s
}

// kth returns the k-th smallest of v (from 0), as v sorted would hold it
// at index k, without sorting or copying v: sixteen passes that each fix
// four more bits of the answer, counting the values that share the bits
// fixed so far (a radix select over the values' order-keeping bits).
func kth(v []float64, k int) float64 {
	var prefix, mask uint64
	for shift := 60; shift >= 0; shift -= 4 {
		var count [16]int
		for _, x := range v {
			if u := orderBits(x); u&mask == prefix {
				count[u>>shift&15]++
			}
		}
		d := 0
		for k >= count[d] {
			k -= count[d]
			d++
		}
		prefix |= uint64(d) << shift
		mask |= 15 << shift
	}
	if prefix>>63 != 0 {
		return math.Float64frombits(prefix &^ (1 << 63))
	}
	return math.Float64frombits(^prefix)
}

// orderBits maps a float64 to a uint64 in the same order (negative values
// below positive ones; NaN is not a gap and has no place).
func orderBits(x float64) uint64 {
	b := math.Float64bits(x)
	if b>>63 != 0 {
		return ^b
	}
	return b | 1<<63
}

func ptr(v float64) *float64 { return &v }
