package stats

import "math"

// MaxRunsToDecide bounds the search of the runs that would decide a
// verdict: past it, the answer is "not within this many".
const MaxRunsToDecide = 1_000_000

// QuantileDecided is whether the interval of the q-quantile from n runs
// at 1-alpha, read off the quantile function of the data (frac in [0, 1]
// to a value), lies wholly on one side of budget: pass when its top is
// within, fail when its bottom is over.
func QuantileDecided(n int, q, alpha, budget float64, quantile func(frac float64) float64) (pass, fail bool) {
	lo, hi := QuantileRanks(n, q, alpha)
	frac := func(r int) float64 {
		if n <= 1 {
			return 0
		}
		return float64(r-1) / float64(n-1)
	}
	pass = hi <= n && quantile(frac(hi)) <= budget
	fail = lo >= 1 && quantile(frac(lo)) > budget
	return pass, fail
}

// RunsToDecideQuantile is how many runs (more than n) would decide the
// q-quantile's verdict against budget at 1-alpha if the data went on as
// they are (the same quantile function): 0 when none up to
// MaxRunsToDecide would (the quantile sits on the budget).
func RunsToDecideQuantile(n int, q, alpha, budget float64, quantile func(frac float64) float64) int {
	return firstDecided(n, func(m int) bool {
		pass, fail := QuantileDecided(m, q, alpha, budget, quantile)
		return pass || fail
	})
}

// RunsToDecideShare is how many runs (more than n) would decide a share
// of k in n against budget at 1-alpha (Clopper-Pearson) if the share
// stayed k/n: 0 when none up to MaxRunsToDecide would.
func RunsToDecideShare(k, n int, alpha, budget float64) int {
	p := float64(k) / float64(max(n, 1))
	return firstDecided(n, func(m int) bool {
		lo, hi := ClopperPearson(int(math.Round(p*float64(m))), m, alpha)
		return lo > budget || hi <= budget
	})
}

// firstDecided is the least m > n with decided(m), searched by doubling
// then bisection (decided is taken to stay true once true), 0 when none
// up to MaxRunsToDecide.
func firstDecided(n int, decided func(int) bool) int {
	lo, hi := max(n, 1), max(n, 1)*2
	for !decided(hi) {
		if hi >= MaxRunsToDecide {
			return 0
		}
		lo, hi = hi, min(hi*2, MaxRunsToDecide)
	}
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if decided(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi
}
