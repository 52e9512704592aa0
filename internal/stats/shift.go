package stats

import (
	"math"
	"slices"
	"sync"
)

// Shift is the Hodges-Lehmann estimate of how far b lies from a (the
// median of every difference b[j]-a[i]) and its interval from the
// Mann-Whitney test (Moses): the differences of the ranks the test's
// critical value names, at confidence 1-alpha, alpha/2 on each side.
// Distribution free under the shift model (b is a moved by a constant);
// the values are taken as they come (take logs first for a ratio).
type Shift struct {
	Est, Lo, Hi float64
}

// HodgesLehmann is the shift of b from a with its interval at 1-alpha.
// a and b need not be sorted; neither is changed. With an empty side
// there is nothing to estimate and ok is false.
func HodgesLehmann(a, b []float64, alpha float64) (s Shift, ok bool) {
	n, m := len(a), len(b)
	if n == 0 || m == 0 {
		return Shift{}, false
	}
	x, y := slices.Clone(a), slices.Clone(b)
	slices.Sort(x)
	slices.Sort(y)
	nm := n * m
	mid := kthDiff(x, y, (nm+1)/2)
	if nm%2 == 0 {
		mid = (mid + kthDiff(x, y, nm/2+1)) / 2
	}
	s.Est, s.Lo, s.Hi = mid, math.Inf(-1), math.Inf(1)
	if k := MannWhitneyK(n, m, alpha); k >= 1 {
		s.Lo, s.Hi = kthDiff(x, y, k), kthDiff(x, y, nm+1-k)
	}
	return s, true
}

// kthDiff is the k-th smallest (1-based) of the differences y[j]-x[i] of
// sorted x and y, found by bisection on the value with a count in
// O(len(x)+len(y)) per step: no n*m array, whatever the sizes.
func kthDiff(x, y []float64, k int) float64 {
	lo, hi := y[0]-x[len(x)-1], y[len(y)-1]-x[0]
	if countLE(x, y, lo) >= k {
		return lo
	}
	for range 200 {
		mid := lo + (hi-lo)/2
		if mid <= lo || mid >= hi {
			break
		}
		if countLE(x, y, mid) >= k {
			hi = mid
		} else {
			lo = mid
		}
	}
	// hi holds at least k differences at or under it, lo fewer: the k-th
	// is the largest difference at or under hi.
	return maxLE(x, y, hi)
}

// countLE counts the differences y[j]-x[i] <= t.
func countLE(x, y []float64, t float64) int {
	c, j := 0, 0
	// For x ascending, the y[j] <= x[i]+t grow: one pass.
	for i := range x {
		for j < len(y) && y[j]-x[i] <= t {
			j++
		}
		c += j
	}
	return c
}

// maxLE is the largest difference y[j]-x[i] <= t.
func maxLE(x, y []float64, t float64) float64 {
	best, j := math.Inf(-1), 0
	for i := range x {
		for j < len(y) && y[j]-x[i] <= t {
			j++
		}
		if j > 0 {
			best = max(best, y[j-1]-x[i])
		}
	}
	return best
}

// exactMW bounds the sizes for which MannWhitneyK counts the test's null
// distribution exactly; over it, the normal approximation is used.
const exactMW = 120

// MannWhitneyK is the rank k of the Moses interval at 1-alpha: the
// largest k with P(U < k) <= alpha/2 under the null (U the Mann-Whitney
// count of pairs b > a among n*m). 0 means no interval is that narrow
// (too few values): the shift is unbounded.
func MannWhitneyK(n, m int, alpha float64) int {
	key := mwKey{n, m, alpha}
	if k, ok := mwCache.Load(key); ok {
		return k.(int)
	}
	k := mannWhitneyK(n, m, alpha)
	mwCache.Store(key, k)
	return k
}

// mwKey and mwCache keep the ranks MannWhitneyK found: the exact count
// is O(n*m*n*m), and a comparison asks for the same sizes again.
type mwKey struct {
	n, m  int
	alpha float64
}

var mwCache sync.Map

func mannWhitneyK(n, m int, alpha float64) int {
	side := alpha / 2
	if n+m <= exactMW {
		cdf := mwNull(n, m)
		k := 0
		for u := 0; u < len(cdf) && cdf[u] <= side; u++ {
			k = u + 1 // P(U <= u) <= side, so P(U < u+1) <= side
		}
		return k
	}
	// Normal approximation with continuity correction (no ties: with
	// ties the variance is smaller, so the interval is conservative).
	mu := float64(n*m) / 2
	sd := math.Sqrt(float64(n*m) * float64(n+m+1) / 12)
	z := normalQuantile(1 - side)
	return max(0, int(math.Floor(mu-z*sd+0.5)))
}

// mwNull is the null distribution function of U for sizes n and m:
// cdf[u] = P(U <= u), from the count of arrangements (a recurrence over
// the largest value, all additions: exact in floating point as far as
// float64 holds the counts).
func mwNull(n, m int) []float64 {
	// f[j][u]: arrangements of i values of a and j of b with U = u,
	// built up over i.
	f := make([][]float64, m+1)
	for j := range f {
		f[j] = make([]float64, n*m+1)
		f[j][0] = 1 // i = 0: U = 0
	}
	for i := 1; i <= n; i++ {
		g := make([][]float64, m+1)
		g[0] = make([]float64, n*m+1)
		g[0][0] = 1
		for j := 1; j <= m; j++ {
			g[j] = make([]float64, n*m+1)
			for u := 0; u <= i*j; u++ {
				// The largest value is a b (it beats the i a's: +i) or
				// an a (+0).
				v := f[j][u]
				if u >= i {
					v += g[j-1][u-i]
				}
				g[j][u] = v
			}
		}
		f = g
	}
	counts := f[m]
	total := 0.0
	for _, c := range counts {
		total += c
	}
	cdf := make([]float64, len(counts))
	acc := 0.0
	for u, c := range counts {
		acc += c
		cdf[u] = acc / total
	}
	return cdf
}

// normalQuantile is the p-quantile of the standard normal distribution
// (Acklam's rational approximation, refined by one Newton step: about
// 1e-15 relative).
func normalQuantile(p float64) float64 {
	switch {
	case p <= 0:
		return math.Inf(-1)
	case p >= 1:
		return math.Inf(1)
	}
	a := []float64{-3.969683028665376e+01, 2.209460984245205e+02, -2.759285104469687e+02, 1.383577518672690e+02, -3.066479806614716e+01, 2.506628277459239e+00}
	b := []float64{-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02, 6.680131188771972e+01, -1.328068155288572e+01}
	c := []float64{-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00, -2.549732539343734e+00, 4.374664141464968e+00, 2.938163982698783e+00}
	d := []float64{7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00, 3.754408661907416e+00}
	var x float64
	switch {
	case p < 0.02425:
		q := math.Sqrt(-2 * math.Log(p))
		x = (((((c[0]*q+c[1])*q+c[2])*q+c[3])*q+c[4])*q + c[5]) / ((((d[0]*q+d[1])*q+d[2])*q+d[3])*q + 1)
	case p > 1-0.02425:
		q := math.Sqrt(-2 * math.Log(1-p))
		x = -(((((c[0]*q+c[1])*q+c[2])*q+c[3])*q+c[4])*q + c[5]) / ((((d[0]*q+d[1])*q+d[2])*q+d[3])*q + 1)
	default:
		q := p - 0.5
		r := q * q
		x = (((((a[0]*r+a[1])*r+a[2])*r+a[3])*r+a[4])*r + a[5]) * q / (((((b[0]*r+b[1])*r+b[2])*r+b[3])*r+b[4])*r + 1)
	}
	e := 0.5*math.Erfc(-x/math.Sqrt2) - p
	u := e * math.Sqrt(2*math.Pi) * math.Exp(x*x/2)
	return x - u/(1+x*u/2)
}
