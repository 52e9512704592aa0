package scorecard

import (
	"math"
	"slices"

	"github.com/streamprobe/streamprobe/probe"
)

// Bucket is one histogram bucket: Count values in (Lo, Hi] ms. Hi is
// +Inf for the last bucket of a Prometheus histogram.
type Bucket struct {
	Lo, Hi, Count float64
}

// Dist is the distribution of one row's values across runs: the raw
// per-run values (check, results logs) or histogram buckets summed across
// hosts (VictoriaMetrics). A cell's percentiles come from it, never from
// averaging per-run or per-host percentiles.
type Dist struct {
	Values []float64
	// Buckets are sorted by Hi and hold counts, not cumulative counts.
	Buckets []Bucket
	// ranked marks Buckets that count exact values a ClassBuilder folded
	// (closed [Lo, Hi], the outer ones narrowed to the smallest and the
	// largest value): a percentile is then the value of the same rank as
	// probe.Percentile takes, known to within its bucket.
	ranked bool
}

// N is the number of values.
func (d Dist) N() int {
	if d.Buckets == nil {
		return len(d.Values)
	}
	n := 0.0
	for _, b := range d.Buckets {
		n += b.Count
	}
	return int(math.Round(n))
}

// quantile is the q-quantile (0..1) and, from buckets, the bucket it
// lies in; nil when there is no value.
func (d Dist) quantile(q float64) (*float64, *[2]float64) {
	if d.Buckets == nil {
		if len(d.Values) == 0 {
			return nil, nil
		}
		s := slices.Clone(d.Values)
		slices.Sort(s)
		v, _ := probe.Percentile(s, q*100)
		return &v, nil
	}
	total := 0.0
	for _, b := range d.Buckets {
		total += b.Count
	}
	if total <= 0 {
		return nil, nil
	}
	if d.ranked {
		k, cum := math.RoundToEven(q*(total-1)), 0.0
		for _, b := range d.Buckets {
			if k < cum+b.Count {
				v := b.Lo + (b.Hi-b.Lo)*(k-cum+0.5)/b.Count
				return &v, &[2]float64{b.Lo, b.Hi}
			}
			cum += b.Count
		}
	}
	// As histogram_quantile does: the rank's bucket, linear within it; the
	// +Inf bucket gives its lower bound.
	rank, cum := q*total, 0.0
	for _, b := range d.Buckets {
		if b.Count <= 0 {
			continue
		}
		if cum+b.Count >= rank {
			v := b.Lo
			if !math.IsInf(b.Hi, 1) {
				v = b.Lo + (b.Hi-b.Lo)*(rank-cum)/b.Count
			}
			return &v, &[2]float64{b.Lo, b.Hi}
		}
		cum += b.Count
	}
	last := d.Buckets[len(d.Buckets)-1]
	return &last.Lo, &[2]float64{last.Lo, last.Hi}
}

// HistResolution is the relative width of a folded row's buckets: each
// bucket's upper bound is 0.1% over its lower one, so a percentile from
// them is within 0.1% of the exact one.
const HistResolution = 0.001

// histFloor and histCeil (ms) bound the log buckets: the values under
// histFloor (0 and the sub-microsecond) share one bucket up to it, those
// over histCeil (11 days) the top bucket up to the largest value.
const histFloor, histCeil = 1e-3, 1e9

var (
	logGamma       = math.Log1p(HistResolution)
	minIdx, maxIdx = bucketIdx(histFloor), bucketIdx(histCeil)
)

// bucketIdx is the log bucket of v: bucket i holds (gamma^(i-1), gamma^i].
func bucketIdx(v float64) int { return int(math.Ceil(math.Log(v) / logGamma)) }

// logHist counts values in log buckets; it holds at most maxIdx-minIdx+1
// counts (27,646) whatever it is fed.
type logHist struct {
	base     int // the bucket of counts[0]
	counts   []uint64
	under    uint64 // values under histFloor
	n        uint64
	min, max float64
}

func (h *logHist) add(v float64) {
	if h.n == 0 || v < h.min {
		h.min = v
	}
	if h.n == 0 || v > h.max {
		h.max = v
	}
	h.n++
	if !(v >= histFloor) {
		h.under++
		return
	}
	i := min(bucketIdx(v), maxIdx)
	h.cover(i)
	h.counts[i-h.base]++
}

// cover grows counts to hold bucket i, with room to spare on that side so
// that a rising or falling series grows it a few times, not once a value.
func (h *logHist) cover(i int) {
	if len(h.counts) == 0 {
		h.base, h.counts = i, make([]uint64, 1)
		return
	}
	lo, hi := h.base, h.base+len(h.counts)
	if i >= lo && i < hi {
		return
	}
	slack := max(len(h.counts)/2, 64)
	nlo, nhi := lo, hi
	if i < lo {
		nlo = max(minIdx, i-slack)
	} else {
		nhi = min(maxIdx+1, i+1+slack)
	}
	c := make([]uint64, nhi-nlo)
	copy(c[lo-nlo:], h.counts)
	h.base, h.counts = nlo, c
}

// buckets are the non-empty buckets, the outer ones narrowed to the
// smallest and largest value.
func (h *logHist) buckets() []Bucket {
	var bs []Bucket
	if h.under > 0 {
		bs = append(bs, Bucket{Lo: h.min, Hi: min(histFloor, h.max), Count: float64(h.under)})
	}
	for k, n := range h.counts {
		if n == 0 {
			continue
		}
		i := h.base + k
		lo, hi := math.Exp(float64(i-1)*logGamma), math.Exp(float64(i)*logGamma)
		if i == maxIdx {
			hi = max(hi, h.max)
		}
		bs = append(bs, Bucket{Lo: max(lo, h.min), Hi: min(hi, h.max), Count: float64(n)})
	}
	return bs
}
