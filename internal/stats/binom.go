// Package stats is the statistics of streamprobe's verdicts, distribution
// free: confidence intervals of a percentile from order statistics (its
// ranks from the binomial distribution), exact binomial (Clopper-Pearson)
// intervals of a share, the Hodges-Lehmann shift with its Mann-Whitney
// interval, a bootstrap over runs for a percentile's change, and the plan
// of a sequential check (alpha spent over its looks). It is pure math: no
// I/O, no import of the project, and every random draw comes from a
// math/rand/v2 source its caller seeds, so a result is reproducible from
// its data and its seed.
package stats

import "math"

// BinomCDF is P(B <= k) for B ~ Binomial(n, p).
func BinomCDF(k, n int, p float64) float64 {
	switch {
	case k < 0:
		return 0
	case k >= n:
		return 1
	case p <= 0:
		return 1
	case p >= 1:
		return 0
	}
	return incBeta(float64(n-k), float64(k+1), 1-p)
}

// incBeta is the regularized incomplete beta function I_x(a, b), by its
// continued fraction (Lentz's method), on the side where it converges.
func incBeta(a, b, x float64) float64 {
	switch {
	case x <= 0:
		return 0
	case x >= 1:
		return 1
	}
	la, _ := math.Lgamma(a + b)
	lb, _ := math.Lgamma(a)
	lc, _ := math.Lgamma(b)
	front := math.Exp(la - lb - lc + a*math.Log(x) + b*math.Log1p(-x))
	if x < (a+1)/(a+b+2) {
		return front * betaCF(a, b, x) / a
	}
	return 1 - front*betaCF(b, a, 1-x)/b
}

// betaCF is the continued fraction of the incomplete beta function.
func betaCF(a, b, x float64) float64 {
	const tiny, eps = 1e-300, 1e-15
	qab, qap, qam := a+b, a+1, a-1
	c, d := 1.0, 1-qab*x/qap
	if math.Abs(d) < tiny {
		d = tiny
	}
	d = 1 / d
	h := d
	for m := 1; m <= 100_000; m++ {
		fm := float64(m)
		m2 := 2 * fm
		aa := fm * (b - fm) * x / ((qam + m2) * (a + m2))
		d, c = 1+aa*d, 1+aa/c
		d, c = nonzero(d, tiny), nonzero(c, tiny)
		d = 1 / d
		h *= d * c
		aa = -(a + fm) * (qab + fm) * x / ((a + m2) * (qap + m2))
		d, c = 1+aa*d, 1+aa/c
		d, c = nonzero(d, tiny), nonzero(c, tiny)
		d = 1 / d
		del := d * c
		h *= del
		if math.Abs(del-1) < eps {
			break
		}
	}
	return h
}

func nonzero(v, tiny float64) float64 {
	if math.Abs(v) < tiny {
		return tiny
	}
	return v
}

// QuantileRanks are the ranks (1-based, among n sorted values) of the
// order statistics that bound the q-quantile with confidence 1-alpha,
// alpha/2 on each side: P(X(lo) <= x_q) >= 1-alpha/2 and P(X(hi) >= x_q)
// >= 1-alpha/2 for any distribution (for a discrete one, at least as
// much). lo is 0 when no order statistic is low enough (no lower bound)
// and hi is n+1 when none is high enough (no upper bound): with n = 20
// the largest value bounds the p95 only with 1-0.95^20 = 64%.
func QuantileRanks(n int, q, alpha float64) (lo, hi int) {
	if n <= 0 {
		return 0, 1
	}
	side := alpha / 2
	mu, sd := float64(n)*q, math.Sqrt(float64(n)*q*(1-q))
	z := normalQuantile(1 - side)
	// lo-1 is the largest j with P(B <= j) <= side.
	guess := int(math.Floor(mu - z*sd))
	lo = gallop(-1, n, guess, func(j int) bool { return BinomCDF(j, n, q) > side })
	// hi-1 is the smallest j with P(B <= j) >= 1-side.
	guess = int(math.Ceil(mu + z*sd))
	hi = gallop(-1, n, guess, func(j int) bool { return BinomCDF(j, n, q) >= 1-side }) + 1
	return lo, hi
}

// gallop is search started from a guess: it widens a bracket around the
// guess (the normal approximation puts it within a step or two) before
// bisecting, so a rank costs a few evaluations, not log2(n).
func gallop(lo, hi, guess int, f func(int) bool) int {
	guess = min(max(guess, lo), hi)
	if f(guess) {
		step := 1
		for guess-step > lo && f(guess-step) {
			guess -= step
			step *= 2
		}
		return search(max(lo, guess-step), guess, f)
	}
	step := 1
	for guess+step < hi && !f(guess+step) {
		guess += step
		step *= 2
	}
	return search(guess+1, min(hi, guess+step), f)
}

// search is the smallest i in [lo, hi] for which f is true (f false then
// true), hi when f is true nowhere before it.
func search(lo, hi int, f func(int) bool) int {
	for lo < hi {
		mid := lo + (hi-lo)/2
		if f(mid) {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo
}

// ClopperPearson is the exact binomial interval of a share from k of n,
// at confidence 1-alpha (alpha/2 on each side): the shares p for which k
// is not in either tail of Binomial(n, p).
func ClopperPearson(k, n int, alpha float64) (lo, hi float64) {
	if n <= 0 {
		return 0, 1
	}
	side := alpha / 2
	lo, hi = 0, 1
	if k > 0 {
		// P(B >= k) = side: rises with p.
		lo = bisect(func(p float64) bool { return 1-BinomCDF(k-1, n, p) >= side })
	}
	if k < n {
		// P(B <= k) = side: falls with p.
		hi = bisect(func(p float64) bool { return BinomCDF(k, n, p) <= side })
	}
	return lo, hi
}

// bisect is the smallest p in [0, 1] at which f turns true (f false then
// true), to within 1e-12.
func bisect(f func(float64) bool) float64 { return bisectOn(0, 1, 1e-12, f) }

// bisectOn is the least x in [a, b] at which f turns true (f false then
// true), to within tol.
func bisectOn(a, b, tol float64, f func(float64) bool) float64 {
	for b-a > tol {
		m := (a + b) / 2
		if f(m) {
			b = m
		} else {
			a = m
		}
	}
	return b
}

// DiffInterval is an interval of pb-pa, the difference of two shares (ka
// of na, kb of nb), at confidence at least 1-alpha: each share's exact
// (Clopper-Pearson) interval at 1-alpha/2, the difference of their ends.
// Both hold together at least 1-alpha of the time (Bonferroni), so the
// difference does too: exact, and conservative.
func DiffInterval(ka, na, kb, nb int, alpha float64) (lo, hi float64) {
	la, ha := ClopperPearson(ka, na, alpha/2)
	lb, hb := ClopperPearson(kb, nb, alpha/2)
	return lb - ha, hb - la
}

// FisherExact is the two-sided p-value of Fisher's exact test that ka of
// na and kb of nb come from one share: the probability, given the
// margins, of a table no more likely than the one seen.
func FisherExact(ka, na, kb, nb int) float64 {
	k, n := ka+kb, na+nb
	lf := func(x int) float64 { v, _ := math.Lgamma(float64(x) + 1); return v }
	logP := func(a int) float64 {
		return lf(k) + lf(n-k) + lf(na) + lf(nb) - lf(n) - lf(a) - lf(na-a) - lf(k-a) - lf(nb-k+a)
	}
	seen := logP(ka)
	p := 0.0
	for a := max(0, k-nb); a <= min(k, na); a++ {
		if lp := logP(a); lp <= seen+1e-7 {
			p += math.Exp(lp)
		}
	}
	return min(1, p)
}
