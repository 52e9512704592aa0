package stats

import (
	"flag"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// The statistics are tested by simulation (seeded: every run of the test
// draws the same numbers) and, where the distribution is finite, by exact
// enumeration. A rate measured on sims draws is allowed its binomial
// noise: slack is three standard errors.
func slack(p float64, sims int) float64 { return 3 * math.Sqrt(p*(1-p)/float64(sims)) }

// lognormal draws exp(mu + sigma*Z).
func lognormal(rng *rand.Rand, mu, sigma float64) float64 {
	return math.Exp(mu + sigma*rng.NormFloat64())
}

// The order-statistic interval of a percentile misses the true value on
// each side at most alpha/2 of the time, for any distribution: a skewed
// one (lognormal) and a discrete one (whole ms, with ties).
func TestQuantileIntervalCoverageSim(t *testing.T) {
	const alpha = 0.05
	sims := draws(2000)
	rng := rand.New(rand.NewPCG(1, 2))
	for _, c := range []struct {
		n     int
		q     float64
		whole bool
	}{{50, 0.5, false}, {150, 0.95, false}, {100, 0.95, true}} {
		// The lognormal's quantile: exp(mu + sigma*z_q); whole ms round
		// it down (the quantile of floor(X) is floor of X's).
		truth := math.Exp(6 + 0.3*normalQuantile(c.q))
		if c.whole {
			truth = math.Floor(truth)
		}
		low, high := 0, 0
		v := make([]float64, c.n)
		for range sims {
			for i := range v {
				v[i] = lognormal(rng, 6, 0.3)
				if c.whole {
					v[i] = math.Floor(v[i])
				}
			}
			slices.Sort(v)
			lo, hi := QuantileRanks(c.n, c.q, alpha)
			if lo >= 1 && v[lo-1] > truth {
				low++
			}
			if hi <= c.n && v[hi-1] < truth {
				high++
			}
		}
		for side, k := range map[string]int{"over the truth": low, "under the truth": high} {
			if rate := float64(k) / float64(sims); rate > alpha/2+slack(alpha/2, sims) {
				t.Errorf("n=%d q=%g whole=%v: the interval lay wholly %s in %.1f%% of %d sims, want at most %.1f%%", c.n, c.q, c.whole, side, rate*100, sims, alpha/2*100)
			}
		}
	}
}

// Clopper-Pearson, enumerated exactly: for every share on a grid, the
// chance that the interval lies wholly on one side of it is at most
// alpha/2.
func TestClopperPearsonExactCoverage(t *testing.T) {
	const alpha = 0.05
	for _, n := range []int{20, 72, 150} {
		los, his := make([]float64, n+1), make([]float64, n+1)
		for k := 0; k <= n; k++ {
			los[k], his[k] = ClopperPearson(k, n, alpha)
		}
		for p := 0.005; p < 1; p += 0.01 {
			under, over := 0.0, 0.0
			for k := 0; k <= n; k++ {
				pk := BinomCDF(k, n, p) - BinomCDF(k-1, n, p)
				if his[k] < p {
					under += pk
				}
				if los[k] > p {
					over += pk
				}
			}
			if under > alpha/2+1e-9 || over > alpha/2+1e-9 {
				t.Errorf("n=%d p=%.3f: misses %.4f below, %.4f above; want at most %.3f each", n, p, under, over, alpha/2)
			}
		}
	}
}

// DiffInterval, enumerated exactly over both binomials: the difference
// of two shares is missed at most alpha/2 of the time on each side, for
// every pair of shares on a grid.
func TestDiffIntervalExactCoverage(t *testing.T) {
	const alpha, n = 0.05, 40
	enumerateDiff(t, n, alpha, func(a, b int) (float64, float64) { return DiffInterval(a, n, b, n, alpha) })
}

// The Hodges-Lehmann interval of a shift (on logs: a ratio) misses the
// true shift on each side at most alpha/2 of the time, with the exact
// Mann-Whitney count (30 + 30 runs) and its normal approximation (80 +
// 80).
func TestHodgesLehmannCoverageSim(t *testing.T) {
	const alpha = 0.05
	sims := draws(1000)
	rng := rand.New(rand.NewPCG(3, 4))
	shift := math.Log(1.15)
	for _, n := range []int{30, 80} {
		a, b := make([]float64, n), make([]float64, n)
		low, high := 0, 0
		for range sims {
			for i := range a {
				a[i] = lognormal(rng, 6, 0.25)
				b[i] = lognormal(rng, 6, 0.25) * 1.15
			}
			c, ok := LogShift(a, b, alpha)
			if !ok {
				t.Fatal("no shift")
			}
			if c.Lo > shift {
				low++
			}
			if c.Hi < shift {
				high++
			}
		}
		for side, k := range map[string]int{"over": low, "under": high} {
			if rate := float64(k) / float64(sims); rate > alpha/2+slack(alpha/2, sims) {
				t.Errorf("n=%d: the interval lay wholly %s the true shift in %.1f%% of %d sims, want at most %.1f%%", n, side, rate*100, sims, alpha/2*100)
			}
		}
	}
}

// clustered draws runs of gaps: each run has its own scale (a slow run is
// slow throughout: its gaps are correlated) and m gaps around it.
func clustered(rng *rand.Rand, runs, m int, scale float64) [][]float64 {
	out := make([][]float64, runs)
	for i := range out {
		s := lognormal(rng, 0, 0.4) * scale
		g := make([]float64, m)
		for j := range g {
			g[j] = 40 * s * lognormal(rng, 0, 0.3)
		}
		out[i] = g
	}
	return out
}

// The bootstrap over runs: a candidate whose gaps are 20% slower than the
// baseline's in every run has a gap p95 ratio of exactly 1.2; the interval
// lies wholly over it at most alpha/2 of the time (the false "worse" of a
// candidate right on a +20% margin), and wholly under it as rarely.
func TestBootQuantileCoverageSim(t *testing.T) {
	const alpha, runs, m = 0.05, 60, 10
	sims := draws(200)
	rng := rand.New(rand.NewPCG(5, 6))
	truth := math.Log(1.2)
	low, high := 0, 0
	for range sims {
		a := NewPooled(clustered(rng, runs, m, 1))
		b := NewPooled(clustered(rng, runs, m, 1.2))
		c, ok := BootQuantile(a, b, 0.95, alpha, 1000, rng)
		if !ok {
			t.Fatal("no change")
		}
		if c.Lo > truth {
			low++
		}
		if c.Hi < truth {
			high++
		}
	}
	for side, k := range map[string]int{"over": low, "under": high} {
		if rate := float64(k) / float64(sims); rate > alpha/2+slack(alpha/2, sims) {
			t.Errorf("the bootstrap interval lay wholly %s the true ratio in %.1f%% of %d sims, want at most %.1f%%", side, rate*100, sims, alpha/2*100)
		}
	}
	t.Logf("bootstrap, %d runs of %d gaps a side: wholly over %d, wholly under %d of %d sims", runs, m, low, high, sims)
}

// enumerateDiff checks an interval of the difference of two shares of n
// runs each by enumerating every outcome: for every pair of shares on a
// grid, the chance that the interval lies wholly over the true difference
// (a false "worse"), and wholly under it, is at most alpha/2 each.
func enumerateDiff(t *testing.T, n int, alpha float64, interval func(a, b int) (lo, hi float64)) {
	t.Helper()
	type iv struct{ lo, hi float64 }
	ivs := make([][]iv, n+1)
	for a := range ivs {
		ivs[a] = make([]iv, n+1)
		for b := range ivs[a] {
			lo, hi := interval(a, b)
			ivs[a][b] = iv{lo, hi}
		}
	}
	pmfAt := func(k int, p float64) float64 { return BinomCDF(k, n, p) - BinomCDF(k-1, n, p) }
	for pa := 0.02; pa < 1; pa += 0.12 {
		for pb := 0.02; pb < 1; pb += 0.12 {
			over, under := 0.0, 0.0
			for a := 0; a <= n; a++ {
				for b := 0; b <= n; b++ {
					d := pb - pa
					if ivs[a][b].lo > d {
						over += pmfAt(a, pa) * pmfAt(b, pb)
					}
					if ivs[a][b].hi < d {
						under += pmfAt(a, pa) * pmfAt(b, pb)
					}
				}
			}
			if over > alpha/2+1e-6 || under > alpha/2+1e-6 {
				t.Errorf("shares %.2f and %.2f: wholly over %.4f, wholly under %.4f; want at most %.3f each", pa, pb, over, under, alpha/2)
			}
		}
	}
}

// ShareDiff, enumerated: exact on both sides; ShareWorse says exactly
// where its interval lies over a margin; and a healthy target's 0 of 170
// on both sides is within +-5 points at the level of one of 27 intervals
// holding together at 95%.
func TestShareDiffExactCoverage(t *testing.T) {
	const alpha, n = 0.05, 20
	enumerateDiff(t, n, alpha, func(a, b int) (float64, float64) {
		lo, hi := ShareDiff(a, n, b, n, alpha)
		if w := ShareWorse(a, n, b, n, 0.05, alpha); w != (lo > 0.05) && math.Abs(lo-0.05) > 2*diffTol {
			t.Errorf("%d vs %d: ShareWorse %v, interval from %.4f", a, b, w, lo)
		}
		return lo, hi
	})
	if lo, hi := ShareDiff(0, 170, 0, 170, compareAlpha); lo < -0.05 || hi > 0.05 {
		t.Errorf("0 of 170 on both sides: %.4f..%.4f, want within 5 points", lo, hi)
	}
}

// ExactDiff, enumerated: exact on both sides; narrower than two
// Clopper-Pearson intervals combined where both have something to say.
func TestExactDiffExactCoverage(t *testing.T) {
	const alpha, n = 0.05, 20
	enumerateDiff(t, n, alpha, func(a, b int) (float64, float64) { return ExactDiff(a, n, b, n, alpha) })
	lo, hi := ExactDiff(4, n, 10, n, alpha)
	clo, chi := DiffInterval(4, n, 10, n, alpha)
	if hi-lo >= chi-clo {
		t.Errorf("4 vs 10 of %d: exact %.3f..%.3f no narrower than the combined %.3f..%.3f", n, lo, hi, clo, chi)
	}
	t.Logf("4 vs 10 of %d: exact unconditional %.3f..%.3f, two Clopper-Pearson %.3f..%.3f", n, lo, hi, clo, chi)
}

// simScale multiplies the simulations' sizes: the figures of
// bench/README.md come from -simscale 10 (`go test ./internal/stats
// ./scorecard -run Sim -v -simscale 10`); CI runs them at 1.
var simScale = flag.Int("simscale", 1, "multiply the simulations' sizes (bench/README.md's figures: 10)")

// draws is n times -simscale, a quarter of it under the race detector
// (raceOn).
func draws(n int) int {
	n *= *simScale
	if raceOn {
		n = max(50, n/4)
	}
	return n
}

// compareAlpha is the alpha of one interval of a comparison of three
// classes (27 metrics) at 95% together.
const compareAlpha = 0.05 / 27

// The power of compare's tests, each interval at compareAlpha: a TFC 15%
// slower (a 10% spread, log-sd 0.1) lies wholly over its +10% margin 80%
// of the time or more at 200 runs a side; a stall share that doubles from
// 20% to 40% is worse beyond its +5 points margin 80% of the time or more
// at 400 runs a side. The figures at compare's default 170 runs are
// logged (bench/README.md states them all).
func TestComparePowerSim(t *testing.T) {
	sims := draws(300)
	rng := rand.New(rand.NewPCG(7, 8))
	margin := math.Log(1.10)
	tfc := func(n int) float64 {
		found := 0
		a, b := make([]float64, n), make([]float64, n)
		for range sims {
			for i := range a {
				a[i] = lognormal(rng, 6, 0.1)
				b[i] = lognormal(rng, 6, 0.1) * 1.15
			}
			if c, _ := LogShift(a, b, compareAlpha); c.Lo > margin {
				found++
			}
		}
		return float64(found) / float64(sims)
	}
	stall := func(n int) float64 {
		found := 0
		for range sims {
			kb, kc := 0, 0
			for range n {
				if rng.Float64() < 0.2 {
					kb++
				}
				if rng.Float64() < 0.4 {
					kc++
				}
			}
			if ShareWorse(kb, n, kc, n, 0.05, compareAlpha) {
				found++
			}
		}
		return float64(found) / float64(sims)
	}
	tfc170, tfc200, stall170, stall400 := tfc(170), tfc(200), stall(170), stall(400)
	if tfc200 < 0.80-slack(0.80, sims) {
		t.Errorf("TFC 15%% slower, 200 runs a side: worse in %.1f%% of %d sims, want at least 80%%", tfc200*100, sims)
	}
	if stall400 < 0.80-slack(0.80, sims) {
		t.Errorf("stall share 20%% to 40%%, 400 runs a side: worse in %.1f%% of %d sims, want at least 80%%", stall400*100, sims)
	}
	t.Logf("each interval at 5%%/27: TFC 15%% slower (log-sd 0.1) found worse in %.1f%% of %d sims at 170 runs a side (compare's default), %.1f%% at 200", tfc170*100, sims, tfc200*100)
	t.Logf("stall share 20%% to 40%% found worse in %.1f%% at 170 runs a side, %.1f%% at 400", stall170*100, stall400*100)
}
