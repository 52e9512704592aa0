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
