package stats

import (
	"math"
	"testing"
)

// binomDirect is P(B <= k) by summing the probabilities.
func binomDirect(k, n int, p float64) float64 {
	s := 0.0
	for i := 0; i <= k && i <= n; i++ {
		lc, _ := math.Lgamma(float64(n + 1))
		la, _ := math.Lgamma(float64(i + 1))
		lb, _ := math.Lgamma(float64(n - i + 1))
		s += math.Exp(lc - la - lb + float64(i)*math.Log(p) + float64(n-i)*math.Log1p(-p))
	}
	return s
}

func TestBinomCDF(t *testing.T) {
	for _, n := range []int{1, 5, 20, 73, 200} {
		for _, p := range []float64{0.01, 0.05, 0.5, 0.95, 0.999} {
			for k := -1; k <= n+1; k++ {
				got, want := BinomCDF(k, n, p), binomDirect(k, n, p)
				if k < 0 {
					want = 0
				}
				if math.Abs(got-want) > 1e-9 {
					t.Fatalf("BinomCDF(%d, %d, %g) = %.12f, want %.12f", k, n, p, got, want)
				}
			}
		}
	}
}

func TestQuantileRanks(t *testing.T) {
	for _, c := range []struct {
		n      int
		q, a   float64
		lo, hi int
	}{
		// 20 runs: the largest bounds the p95 only with 64%: no upper
		// bound at 95%.
		{20, 0.95, 0.05, 17, 21},
		// 0.95^72 = 0.0249 <= 0.025: 72 runs give the p95 an upper bound,
		// their largest; 71 do not.
		{72, 0.95, 0.05, 64, 72},
		{71, 0.95, 0.05, 63, 72},
		{1, 0.5, 0.05, 0, 2},
	} {
		lo, hi := QuantileRanks(c.n, c.q, c.a)
		if lo != c.lo || hi != c.hi {
			t.Errorf("QuantileRanks(%d, %g, %g) = %d, %d; want %d, %d", c.n, c.q, c.a, lo, hi, c.lo, c.hi)
		}
		// The defining tails, straight from the binomial.
		if lo >= 1 && 1-BinomCDF(lo-1, c.n, c.q) < 1-c.a/2 {
			t.Errorf("n=%d: P(X(%d) <= x_q) < %g", c.n, lo, 1-c.a/2)
		}
		if hi <= c.n && BinomCDF(hi-1, c.n, c.q) < 1-c.a/2 {
			t.Errorf("n=%d: P(X(%d) >= x_q) < %g", c.n, hi, 1-c.a/2)
		}
	}
}

func TestClopperPearson(t *testing.T) {
	near := func(got, want float64) bool { return math.Abs(got-want) < 1e-9 }
	lo, hi := ClopperPearson(0, 20, 0.05)
	if lo != 0 || !near(hi, 1-math.Pow(0.025, 1.0/20)) {
		t.Errorf("0 of 20: %g..%g, want 0..%g", lo, hi, 1-math.Pow(0.025, 1.0/20))
	}
	lo, hi = ClopperPearson(20, 20, 0.05)
	if hi != 1 || !near(lo, math.Pow(0.025, 1.0/20)) {
		t.Errorf("20 of 20: %g..%g", lo, hi)
	}
	// A textbook value: 5 of 50 at 95% is 0.0333..0.2181.
	lo, hi = ClopperPearson(5, 50, 0.05)
	if math.Abs(lo-0.03327) > 5e-5 || math.Abs(hi-0.21813) > 5e-5 {
		t.Errorf("5 of 50: %.5f..%.5f, want 0.03327..0.21813", lo, hi)
	}
}

func TestMannWhitneyK(t *testing.T) {
	// The tables' critical U for n1 = n2 = 10, two-sided 0.05, is 23:
	// P(U <= 23) <= 0.025, so the interval takes the 24th difference.
	if k := MannWhitneyK(10, 10, 0.05); k != 24 {
		t.Errorf("MannWhitneyK(10, 10, 0.05) = %d, want 24", k)
	}
	// n1 = n2 = 20: critical U 127.
	if k := MannWhitneyK(20, 20, 0.05); k != 128 {
		t.Errorf("MannWhitneyK(20, 20, 0.05) = %d, want 128", k)
	}
	// The exact count and the normal approximation meet where they hand
	// over (n+m around exactMW): within one rank per hundred.
	exact := MannWhitneyK(60, 60, 0.01)
	cdf := mwNull(60, 60)
	_ = cdf
	mu, sd := 1800.0, math.Sqrt(3600.0*121/12)
	approx := int(math.Floor(mu - normalQuantile(0.995)*sd + 0.5))
	if math.Abs(float64(exact-approx)) > 10 {
		t.Errorf("n=m=60 at 99%%: exact k %d, normal %d", exact, approx)
	}
}

func TestHodgesLehmann(t *testing.T) {
	a := []float64{1, 2, 3, 4, 5}
	b := []float64{11, 12, 13, 14, 15}
	s, ok := HodgesLehmann(a, b, 0.05)
	if !ok || s.Est != 10 {
		t.Fatalf("shift = %+v, want 10", s)
	}
	// n = m = 5 at 95%: critical U 2, so the 3rd smallest and 3rd
	// largest differences: 10-4+... the differences are 6..14 with 25
	// values; the 3rd is 7 and the 23rd 13.
	if s.Lo != 7 || s.Hi != 13 {
		t.Errorf("interval %g..%g, want 7..13", s.Lo, s.Hi)
	}
	// kthDiff agrees with sorting every difference.
	x := []float64{0.5, 1, 1, 2.5, 7}
	y := []float64{-1, 0, 1, 1, 3, 8}
	var all []float64
	for _, v := range y {
		for _, u := range x {
			all = append(all, v-u)
		}
	}
	sortFloats(all)
	for k := 1; k <= len(all); k++ {
		if got := kthDiff(x, y, k); got != all[k-1] {
			t.Fatalf("kthDiff k=%d: %g, want %g", k, got, all[k-1])
		}
	}
}

func sortFloats(v []float64) {
	for i := 1; i < len(v); i++ {
		for j := i; j > 0 && v[j] < v[j-1]; j-- {
			v[j], v[j-1] = v[j-1], v[j]
		}
	}
}

func TestSpendingPlan(t *testing.T) {
	p := SpendingPlan(20, 200, 0.05)
	wantLooks := []int{20, 40, 80, 120, 160, 200}
	if len(p.Looks) != len(wantLooks) {
		t.Fatalf("looks %v, want %v", p.Looks, wantLooks)
	}
	for i, n := range wantLooks {
		if p.Looks[i] != n {
			t.Fatalf("looks %v, want %v", p.Looks, wantLooks)
		}
	}
	if s := p.Spent(len(p.Looks) - 1); math.Abs(s-0.05) > 1e-12 {
		t.Errorf("alpha spent %g, want 0.05", s)
	}
	if p := SpendingPlan(20, 10, 0.05); len(p.Looks) != 1 || p.Looks[0] != 10 || p.Alpha[0] != 0.05 {
		t.Errorf("a cap under the first look: %+v", p)
	}
}

func TestFisherExact(t *testing.T) {
	// Fisher's tea: 3 of 4 against 1 of 4, two-sided p = 0.4857.
	if p := FisherExact(3, 4, 1, 4); math.Abs(p-0.48571) > 1e-4 {
		t.Errorf("FisherExact = %g, want 0.4857", p)
	}
	if p := FisherExact(5, 10, 5, 10); p != 1 {
		t.Errorf("same tables: p = %g, want 1", p)
	}
}

func TestRunsToDecideShare(t *testing.T) {
	// No stall in n runs passes a 5% budget at 95% from the n with
	// 1-0.025^(1/n) <= 0.05: 72.
	if got := RunsToDecideShare(0, 20, 0.05, 0.05); got != 72 {
		t.Errorf("RunsToDecideShare(0 of 20) = %d, want 72", got)
	}
	if got := RunsToDecideShare(1, 20, 0.05, 0.05); got != 0 {
		t.Errorf("a share on its budget: %d, want 0 (never)", got)
	}
}

// QuantileRanks' galloping search agrees with a plain scan of the
// binomial for every n up to 400 and the levels used.
func TestQuantileRanksAgreesWithAScan(t *testing.T) {
	for _, q := range []float64{0.5, 0.95} {
		for _, a := range []float64{0.05, 0.01, 0.001} {
			for n := 1; n <= 400; n++ {
				wantLo, wantHi := 0, n+1
				for j := 0; j <= n; j++ {
					if BinomCDF(j-1, n, q) <= a/2 {
						wantLo = j
					}
				}
				for u := n; u >= 1; u-- {
					if BinomCDF(u-1, n, q) >= 1-a/2 {
						wantHi = u
					}
				}
				if lo, hi := QuantileRanks(n, q, a); lo != wantLo || hi != wantHi {
					t.Fatalf("QuantileRanks(%d, %g, %g) = %d, %d; a scan gives %d, %d", n, q, a, lo, hi, wantLo, wantHi)
				}
			}
		}
	}
}

// A resample's quantile, walked from either end, is the quantile of the
// values repeated as the weights say, by probe.Percentile's rank.
func TestWeightedQuantile(t *testing.T) {
	runs := [][]float64{{5, 1, 9}, {2}, {}, {7, 7, 3, 8}}
	p := NewPooled(runs)
	for _, w := range [][]int{{1, 1, 1, 1}, {0, 3, 2, 1}, {2, 0, 0, 1}, {0, 0, 4, 0}} {
		var all []float64
		for i, r := range runs {
			for range w[i] {
				all = append(all, r...)
			}
		}
		sortFloats(all)
		for _, q := range []float64{0, 0.05, 0.5, 0.51, 0.95, 1} {
			got, ok := p.weighted(q, w)
			if len(all) == 0 {
				if ok {
					t.Errorf("weights %v: a quantile of nothing", w)
				}
				continue
			}
			if want := all[rankIndex(len(all), q)]; got != want {
				t.Errorf("weights %v q=%g: %g, want %g (of %v)", w, q, got, want, all)
			}
		}
	}
}
