package stats

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
)

// Pooled is one side's values grouped by run (every gap of each run, or
// one TFC per run), pooled for a percentile and resampled by run: the run
// is the unit, since the values of one run are not independent.
type Pooled struct {
	vals []float64 // every value, sorted
	run  []int32   // the run of each value in vals
	runs int
	per  []int // the values of each run
}

// NewPooled pools runs (the values of each run; a run may have none).
func NewPooled(runs [][]float64) *Pooled {
	type v struct {
		x   float64
		run int32
	}
	var all []v
	for i, r := range runs {
		for _, x := range r {
			all = append(all, v{x, int32(i)})
		}
	}
	slices.SortFunc(all, func(a, b v) int { return cmp.Compare(a.x, b.x) })
	p := &Pooled{vals: make([]float64, len(all)), run: make([]int32, len(all)), runs: len(runs), per: make([]int, len(runs))}
	for i, e := range all {
		p.vals[i], p.run[i] = e.x, e.run
		p.per[e.run]++
	}
	return p
}

// Runs is the number of runs; N the number of values.
func (p *Pooled) Runs() int { return p.runs }

// N is the number of values pooled.
func (p *Pooled) N() int { return len(p.vals) }

// Quantile is the q-quantile of the pooled values, by the rank the
// scorecard takes (the value at round(q*(N-1)), as probe.Percentile).
func (p *Pooled) Quantile(q float64) (float64, bool) {
	if len(p.vals) == 0 {
		return 0, false
	}
	return p.vals[rankIndex(len(p.vals), q)], true
}

func rankIndex(n int, q float64) int {
	return min(n-1, max(0, int(math.RoundToEven(q*float64(n-1)))))
}

// weighted is the q-quantile of the pooled values with run i counted
// w[i] times: one bootstrap resample, without copying a value. It walks
// the sorted values from the nearer end (a p95 reads the top 5% only).
func (p *Pooled) weighted(q float64, w []int) (float64, bool) {
	total := 0
	for r, n := range p.per {
		total += w[r] * n
	}
	if total == 0 {
		return 0, false
	}
	k := rankIndex(total, q)
	if k < total/2 {
		cum := 0
		for i, r := range p.run {
			cum += w[r]
			if cum > k {
				return p.vals[i], true
			}
		}
	} else {
		// The value of rank k is the (total-1-k)-th from the top.
		above, cum := total-1-k, 0
		for i := len(p.run) - 1; i >= 0; i-- {
			cum += w[p.run[i]]
			if cum > above {
				return p.vals[i], true
			}
		}
	}
	return p.vals[len(p.vals)-1], true
}

// Floor is the least value a ratio of times takes: a time under it counts
// as Floor (ms), so that a change from 0.1 to 0.5 ms (chunks that came
// together) is not read as a fivefold slowdown.
const Floor = 1.0

// logRatio is log(b/a) of two times, each at least Floor.
func logRatio(a, b float64) float64 { return math.Log(max(b, Floor)) - math.Log(max(a, Floor)) }

// Change is a change from a baseline to a candidate as log(candidate /
// baseline), with its interval: exp of each is the ratio.
type Change struct {
	Est, Lo, Hi float64
}

// BootQuantile is the change of the q-quantile from a to b: the estimate
// from the data, the interval at 1-alpha from the percentile bootstrap
// over runs (each side's runs drawn with replacement, resamples times,
// from rng). ok is false when a side has no value.
func BootQuantile(a, b *Pooled, q, alpha float64, resamples int, rng *rand.Rand) (Change, bool) {
	qa, oka := a.Quantile(q)
	qb, okb := b.Quantile(q)
	if !oka || !okb {
		return Change{}, false
	}
	c := Change{Est: logRatio(qa, qb)}
	wa, wb := make([]int, a.runs), make([]int, b.runs)
	ds := make([]float64, 0, resamples)
	for range resamples {
		draw(wa, rng)
		draw(wb, rng)
		ra, oka := a.weighted(q, wa)
		rb, okb := b.weighted(q, wb)
		if !oka || !okb {
			continue // a resample of runs without a value
		}
		ds = append(ds, logRatio(ra, rb))
	}
	if len(ds) == 0 {
		return Change{}, false
	}
	slices.Sort(ds)
	side := alpha / 2
	c.Lo = ds[min(len(ds)-1, int(math.Floor(side*float64(len(ds)))))]
	c.Hi = ds[max(0, int(math.Ceil((1-side)*float64(len(ds))))-1)]
	return c, true
}

// draw counts how often each of len(w) runs is drawn in len(w) draws with
// replacement.
func draw(w []int, rng *rand.Rand) {
	clear(w)
	for range w {
		w[rng.IntN(len(w))]++
	}
}

// Resamples is how many bootstrap resamples an interval at 1-alpha takes:
// at least 2000, and enough that each tail holds 25 resamples.
func Resamples(alpha float64) int {
	return max(2000, int(math.Ceil(25/(alpha/2))))
}

// LogShift is HodgesLehmann on the logs of times (each at least Floor):
// the change of the median as log(candidate / baseline).
func LogShift(a, b []float64, alpha float64) (Change, bool) {
	la, lb := make([]float64, len(a)), make([]float64, len(b))
	for i, v := range a {
		la[i] = math.Log(max(v, Floor))
	}
	for i, v := range b {
		lb[i] = math.Log(max(v, Floor))
	}
	s, ok := HodgesLehmann(la, lb, alpha)
	return Change(s), ok
}
