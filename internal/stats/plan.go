package stats

import "fmt"

// Plan is the plan of a sequential check, fixed before the first run: the
// looks (the runs each sample has had when its cells are judged) and the
// alpha each look's intervals spend. A cell's verdict is wrong only when
// the interval it was judged on misses the true value; whichever look a
// cell ends on, that is at most the chance that any of its looks' intervals
// misses, which is at most the sum of the looks' alphas (Bonferroni over
// the looks, whatever their dependence). The alphas sum to the plan's
// alpha, so the whole procedure errs at most that often, however the
// stopping depends on the data. A look a cap cuts short (time) is judged
// with its own alpha: a look left out only leaves alpha unspent.
type Plan struct {
	Looks []int
	Alpha []float64
}

// FixedPlan is one look at n runs: the whole alpha at once.
func FixedPlan(n int, alpha float64) Plan {
	return Plan{Looks: []int{n}, Alpha: []float64{alpha}}
}

// SpendingPlan looks at first runs, at twice first, then every twice
// first more, up to maxRuns, and spends alpha in proportion to the runs
// each look adds (a linear spending function over the runs: alpha *
// n/maxRuns spent by n runs).
func SpendingPlan(first, maxRuns int, alpha float64) Plan {
	if maxRuns <= first {
		return FixedPlan(maxRuns, alpha)
	}
	var p Plan
	prev := 0
	for n := first; ; {
		n = min(n, maxRuns)
		p.Looks = append(p.Looks, n)
		p.Alpha = append(p.Alpha, alpha*float64(n-prev)/float64(maxRuns))
		if n == maxRuns {
			return p
		}
		prev = n
		if n == first {
			n = 2 * first
		} else {
			n += 2 * first
		}
	}
}

// Spent is the alpha of the plan's looks up to look k (0-based), and in
// all.
func (p Plan) Spent(k int) float64 {
	s := 0.0
	for i := 0; i <= k && i < len(p.Alpha); i++ {
		s += p.Alpha[i]
	}
	return s
}

// String says the plan in one line: "looks at 20, 40, 80 runs; alpha
// 0.005, 0.005, 0.01".
func (p Plan) String() string {
	s := "looks at"
	for i, n := range p.Looks {
		if i > 0 {
			s += ","
		}
		s += fmt.Sprintf(" %d", n)
	}
	s += " runs; two-sided alpha"
	for i, a := range p.Alpha {
		if i > 0 {
			s += ","
		}
		s += fmt.Sprintf(" %.4g", a)
	}
	return s
}
