package scorecard

import (
	"flag"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/streamprobe/streamprobe/internal/stats"
	"github.com/streamprobe/streamprobe/probe"
)

// Seeded simulations of whole checks and comparisons on known
// distributions, through the code check and compare run (JudgeClass,
// Compare): a correct server is failed (or a candidate called worse) at
// most at the stated rate, and a worse one is found with the power
// bench/README.md gives. Each rate may exceed its bound by its binomial
// noise (three standard errors). `go test ./scorecard -run Sim -v` prints
// the figures.

// simSlack is three standard errors of a rate p measured on n sims.
func simSlack(p float64, n int) float64 { return 3 * math.Sqrt(p*(1-p)/float64(n)) }

func lognorm(rng *rand.Rand, mu, sigma float64) float64 {
	return math.Exp(mu + sigma*rng.NormFloat64())
}

// zq is the standard normal's q-quantile, by bisection on erf.
func zq(q float64) float64 {
	lo, hi := -10.0, 10.0
	for range 100 {
		m := (lo + hi) / 2
		if 0.5*math.Erfc(-m/math.Sqrt2) < q {
			lo = m
		} else {
			hi = m
		}
	}
	return lo
}

// simRun is a run of the long sample with a TFC, its gaps and whether it
// stalled.
func simRun(tfc float64, gaps []float64, stalled bool) probe.Record {
	r := probe.Record{Sample: "long", Outcome: probe.Success, TFCMs: &tfc, Chunks: len(gaps) + 1, Gaps: probe.Gaps{Values: gaps}}
	if stalled {
		r.Stalls = 1
	}
	return r
}

// simCheck runs check's plan on runs drawn one by one: at each look the
// class is judged at the look's alpha, and it ends at the first look
// where every cell is decided (or the last). It returns the verdict of
// row and the runs it took.
func simCheck(plan stats.Plan, b Budget, row string, draw func() probe.Record) (string, int) {
	cb, have := NewClassBuilder("long"), 0
	for k, n := range plan.Looks {
		for ; have < n; have++ {
			cb.Add(draw())
		}
		cl := cb.Class()
		if k < len(plan.Looks)-1 && !ClassDecided(&cl, b, plan.Alpha[k]) {
			continue
		}
		for _, ce := range judgeClass(&cl, b, plan.Alpha[k], false) {
			if ce.Row == row {
				return ce.Verdict, n
			}
		}
	}
	return "", 0
}

// checkRates runs sims checks and counts the verdicts of row.
func checkRates(sims int, plan stats.Plan, b Budget, row string, draw func() probe.Record) map[string]float64 {
	out := map[string]float64{}
	runs := 0
	for range sims {
		v, n := simCheck(plan, b, row, draw)
		out[v] += 1.0 / float64(sims)
		runs += n
	}
	out["runs"] = float64(runs) / float64(sims)
	return out
}

var off = 1.0

// A TFC whose true p95 is exactly its budget (lognormal, a 30% spread):
// check's sequential plan (20 .. 200 runs, 95%) fails it at most 2.5% of
// the time; 15% over its budget, it fails it with power.
func TestSimCheckTFCAtItsBudget(t *testing.T) {
	sims := draws(400)
	rng := rand.New(rand.NewPCG(11, 12))
	plan := stats.SpendingPlan(20, 200, 0.05)
	budget := 400 * math.Exp(0.3*zq(0.95))
	draw := func(scale float64) func() probe.Record {
		return func() probe.Record { return simRun(400*scale*lognorm(rng, 0, 0.3), nil, false) }
	}
	on := checkRates(sims, plan, Budget{TFC: budget, StallShare: &off}, RowTFC, draw(1))
	if on[Fail] > 0.025+simSlack(0.025, sims) {
		t.Errorf("true p95 on the budget: FAIL in %.1f%% of %d checks, want at most 2.5%%", on[Fail]*100, sims)
	}
	over := checkRates(sims, plan, Budget{TFC: budget, StallShare: &off}, RowTFC, draw(1.15))
	if over[Pass] > 0.025+simSlack(0.025, sims) {
		t.Errorf("15%% over the budget: PASS in %.1f%% of %d checks, want at most 2.5%%", over[Pass]*100, sims)
	}
	if over[Fail] < 0.80 {
		t.Errorf("15%% over the budget: FAIL in %.1f%% of %d checks, want the power of at least 80%% bench/README.md states", over[Fail]*100, sims)
	}
	t.Logf("TFC p95 on its budget: FAIL %.1f%%, PASS %.1f%%, INCONCLUSIVE %.1f%%, %.0f runs on average", on[Fail]*100, on[Pass]*100, on[Inconclusive]*100, on["runs"])
	t.Logf("TFC p95 15%% over: FAIL %.1f%%, PASS %.1f%%, INCONCLUSIVE %.1f%%, %.0f runs on average", over[Fail]*100, over[Pass]*100, over[Inconclusive]*100, over["runs"])
}

// clusteredRun is a run of m gaps that share the run's own scale: a slow
// run is slow throughout (log-sd 0.4 between runs, 0.3 within). The
// pooled gaps are lognormal with log-sd 0.5.
func clusteredRun(rng *rand.Rand, m int, scale float64) probe.Record {
	s := lognorm(rng, 0, 0.4) * scale
	g := make([]float64, m)
	for j := range g {
		g[j] = 40 * s * lognorm(rng, 0, 0.3)
	}
	return simRun(400, g, false)
}

// A gap p95 exactly on its budget, the gaps correlated within runs: with
// the run as the unit check fails it at most 2.5% of the time; taken as
// independent values (the ranks of every gap) the interval is too narrow
// and fails it far more often. That is why the gap row's ranks are the
// runs'.
func TestSimCheckGapsAreJudgedByRun(t *testing.T) {
	sims, m := draws(300), 20
	rng := rand.New(rand.NewPCG(13, 14))
	budget := 40 * math.Exp(0.5*zq(0.95))
	plan := stats.FixedPlan(100, 0.05)
	rates := checkRates(sims, plan, Budget{Gap: budget, StallShare: &off}, RowGap, func() probe.Record { return clusteredRun(rng, m, 1) })
	if rates[Fail] > 0.025+simSlack(0.025, sims) {
		t.Errorf("gap p95 on its budget: FAIL in %.1f%% of %d checks, want at most 2.5%%", rates[Fail]*100, sims)
	}
	// The same data, every gap taken as independent.
	naive := 0
	for range sims {
		var gaps []float64
		for range 100 {
			gaps = append(gaps, clusteredRun(rng, m, 1).Gaps.Values...)
		}
		lo, _ := Dist{Values: gaps}.orderStats().interval(0.95, 0.05, len(gaps))
		if lo != nil && *lo > budget {
			naive++
		}
	}
	if rate := float64(naive) / float64(sims); rate < 0.05 {
		t.Errorf("gaps taken as independent failed the budget in only %.1f%% of %d checks: the test's clusters are too weak to show why runs are the unit", rate*100, sims)
	}
	t.Logf("gap p95 on its budget, 100 runs of %d correlated gaps: FAIL %.1f%% with the run as unit, %.1f%% with every gap as a unit", m, rates[Fail]*100, float64(naive)/float64(sims)*100)
}

// A stall share exactly on its 5% budget fails at most 2.5% of the time;
// doubled (10%), it fails with the power bench/README.md states at 400
// runs.
func TestSimCheckStallShare(t *testing.T) {
	sims := draws(500)
	rng := rand.New(rand.NewPCG(15, 16))
	draw := func(p float64) func() probe.Record {
		return func() probe.Record { return simRun(400, []float64{30, 30}, rng.Float64() < p) }
	}
	plan := stats.SpendingPlan(20, 200, 0.05)
	on := checkRates(sims, plan, Budget{}, RowStallShare, draw(0.05))
	if on[Fail] > 0.025+simSlack(0.025, sims) {
		t.Errorf("stall share on its budget: FAIL in %.1f%% of %d checks, want at most 2.5%%", on[Fail]*100, sims)
	}
	fixed := stats.FixedPlan(400, 0.05)
	doubled := checkRates(sims, fixed, Budget{}, RowStallShare, draw(0.10))
	if doubled[Fail] < 0.80 {
		t.Errorf("a doubled stall share (10%% against 5%%), 400 runs: FAIL in %.1f%% of %d checks, want at least 80%%", doubled[Fail]*100, sims)
	}
	auto := checkRates(sims, plan, Budget{}, RowStallShare, draw(0.10))
	t.Logf("stall share on its budget (5%%), -runs auto: FAIL %.1f%%, PASS %.1f%%", on[Fail]*100, on[Pass]*100)
	t.Logf("stall share doubled (10%%): FAIL %.1f%% at -runs 400, %.1f%% with -runs auto (max 200)", doubled[Fail]*100, auto[Fail]*100)
}

// simSide draws one side of a comparison: runs of the long sample with a
// TFC (lognormal, log-sd sigma, times tfcScale), 10 correlated gaps, a
// tail, a stall with chance stall.
func simSide(rng *rand.Rand, runs int, sigma, tfcScale, stall float64) CompareSide {
	s := CompareSide{Name: "sim", Samples: []string{"long"}, Runs: map[string][]probe.Record{}}
	for range runs {
		r := clusteredRun(rng, 10, 1)
		tfc := 400 * tfcScale * lognorm(rng, 0, sigma)
		tail := 1000 * lognorm(rng, 0, sigma)
		r.TFCMs, r.TailMs = &tfc, &tail
		if rng.Float64() < stall {
			r.Stalls = 1
		}
		s.Runs["long"] = append(s.Runs["long"], r)
	}
	return s
}

// compareRates runs sims comparisons and counts, per metric, how often it
// was worse, and how often any metric was.
func compareRates(sims int, draw func() (CompareSide, CompareSide)) (map[string]float64, float64) {
	worse, any := map[string]float64{}, 0.0
	for i := range sims {
		b, c := draw()
		cmp := Compare(b, c, CompareOptions{Seed: uint64(i), Resamples: 1000})
		for _, m := range cmp.Metrics {
			if m.Verdict == Worse {
				worse[m.Metric] += 1.0 / float64(sims)
			}
		}
		if cmp.Worse > 0 {
			any += 1.0 / float64(sims)
		}
	}
	return worse, any
}

// The same server on both sides: compare calls some metric worse at most
// 5% of the time (all nine at once, Bonferroni); a candidate whose TFC is
// exactly on the +10% margin is called worse at most 2.5% of the time.
func TestSimCompareSameAndOnTheMargin(t *testing.T) {
	sims, runs := draws(100), 40
	rng := rand.New(rand.NewPCG(21, 22))
	_, any := compareRates(sims, func() (CompareSide, CompareSide) {
		return simSide(rng, runs, 0.25, 1, 0.1), simSide(rng, runs, 0.25, 1, 0.1)
	})
	if any > 0.05+simSlack(0.05, sims) {
		t.Errorf("same against same: some metric worse in %.1f%% of %d comparisons, want at most 5%%", any*100, sims)
	}
	worse, _ := compareRates(sims, func() (CompareSide, CompareSide) {
		return simSide(rng, runs, 0.25, 1, 0.1), simSide(rng, runs, 0.25, 1.10, 0.1)
	})
	if w := worse["tfc_p50"]; w > 0.025+simSlack(0.025, sims) {
		t.Errorf("TFC exactly +10%% (the margin): worse in %.1f%% of %d comparisons, want at most 2.5%%", w*100, sims)
	}
	t.Logf("same against same, %d runs a side: any metric worse in %.1f%% of %d comparisons", runs, any*100, sims)
	t.Logf("TFC on the +10%% margin: TFC p50 worse in %.1f%%", worse["tfc_p50"]*100)
}

// simScale multiplies the simulations' sizes: the figures of
// bench/README.md come from -simscale 10; CI runs them at 1.
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
