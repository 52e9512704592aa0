package scorecard

import (
	"math"
	"slices"

	"github.com/streamprobe/streamprobe/internal/stats"
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

// orderStats is the dist as a reader of order statistics: its values
// sorted, or its buckets.
type orderStats struct {
	d      Dist
	sorted []float64
	n      int
}

func (d Dist) orderStats() orderStats {
	r := orderStats{d: d, n: d.N()}
	if d.Buckets == nil {
		r.sorted = slices.Clone(d.Values)
		slices.Sort(r.sorted)
	}
	return r
}

// bound is the value of rank k (1-based) as a bound: exact from values;
// from buckets the lower edge of its bucket (lower) or the upper edge,
// nil for the +Inf bucket's.
func (r orderStats) bound(k int, lower bool) *float64 {
	if r.sorted != nil {
		v := r.sorted[k-1]
		return &v
	}
	cum := 0.0
	for _, b := range r.d.Buckets {
		if b.Count <= 0 {
			continue
		}
		if float64(k) <= cum+b.Count {
			v := b.Hi
			if lower {
				v = b.Lo
			}
			if math.IsInf(v, 1) {
				return nil
			}
			return &v
		}
		cum += b.Count
	}
	return nil
}

// at is the value at fraction f (0..1) of the way through the sorted
// values (the quantile function the runs-to-decide estimate reads).
func (r orderStats) at(f float64) float64 {
	if r.sorted != nil {
		return r.sorted[min(len(r.sorted)-1, max(0, int(math.Round(f*float64(len(r.sorted)-1)))))]
	}
	v, _ := r.d.quantile(f)
	if v == nil {
		return math.NaN()
	}
	return *v
}

// interval is the distribution-free interval of the q-quantile at
// 1-alpha: the order statistics the binomial names
// (stats.QuantileRanks). runs are the independent units the values come
// from: a row with one value per run (TFC, tail, close) takes its ranks as
// they are; the gap row, every gap of its runs pooled, takes the ranks of
// runs values spread over all of its values, so the interval is as wide
// as if each run's gaps were one value repeated (the run is the unit: a
// run's gaps are not independent, and this is the widest their
// correlation can make it). From buckets a bound is its bucket's edge.
// A bound is nil when the values are too few to give one.
func (r orderStats) interval(q, alpha float64, runs int) (lo, hi *float64) {
	n := r.n
	if n == 0 {
		return nil, nil
	}
	if runs <= 0 || runs > n {
		runs = n
	}
	l, u := stats.QuantileRanks(runs, q, alpha)
	if l >= 1 {
		k := l
		if runs != n {
			k = (l-1)*n/runs + 1
		}
		lo = r.bound(k, true)
	}
	if u <= runs {
		k := u
		if runs != n {
			k = (u*n + runs - 1) / runs
		}
		hi = r.bound(k, false)
	}
	return lo, hi
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
