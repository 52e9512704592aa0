package scorecard

import (
	"slices"
	"strings"
	"testing"

	"github.com/streamprobe/streamprobe/dialect"
	"github.com/streamprobe/streamprobe/probe"
)

func TestCellsAndVerdict(t *testing.T) {
	c := fixedCard()
	if c.Pass {
		t.Fatal("card passed with a red cell and a failing drill")
	}
	var red []string
	for _, ce := range c.RedCells() {
		red = append(red, ce.Sample+"/"+ce.Row)
	}
	// The worked example's one stall per run: every short run stalled,
	// over the default 5% stall-share budget even at the bottom of its
	// interval (5 of 5: 47.8%); a failed cancel run with no error share
	// allowed.
	if strings.Join(red, " ") != "short/stall_share cancel/outcomes" {
		t.Errorf("red cells %v", red)
	}
	g := c.cell("gap", "short")
	// 45 gaps pooled from 5 runs, each with one 259 ms stall: p95 is the
	// stall, p50 a normal gap. The run is the unit: of 5 runs the 4th
	// bounds the p95 from below (P(B >= 4) = 97.7% for B ~ Bin(5, 0.95)),
	// spread over 45 gaps the 28th (a normal gap, 47 ms), and none bounds it
	// from above: the cell is inconclusive, not red.
	if g.N != 45 || *g.Timing.P50 != 46 || *g.Timing.P95 != 259 || g.Verdict != Inconclusive || g.Over || g.Timing.P95Hi != nil || *g.Timing.P95Lo != 47 {
		t.Errorf("short gap cell %+v %+v", g, g.Timing)
	}
	// 5 runs bound a p50 neither way at 95% (0.5^5 = 3.1% > 2.5%).
	if tfc := c.cell("tfc", "short").Timing; *tfc.P50 != 432 || *tfc.P95 != 452 || *tfc.P95Lo != 442 || tfc.P95Hi != nil || tfc.P50Lo != nil || tfc.P50Hi != nil {
		t.Errorf("short TFC p50/p95 %v/%v, want 432/452 (raw per-run TFCs 412..452), p95 from 442, no p50 bound: %+v", *tfc.P50, *tfc.P95, tfc)
	}
	if c.Verdict != Fail || c.cell("tfc", "short").Confidence != 0.95 {
		t.Errorf("verdict %s", c.Verdict)
	}
	if tfc := c.cell("tfc", "cancel"); tfc.N != 4 {
		t.Errorf("the failed cancel run entered the TFC cell: n = %d", tfc.N)
	}
	if s := c.cell("stall_share", "short").Stall; *s.Share != 1 {
		t.Errorf("stall share %v", *s.Share)
	}
}

// The stall-share budget is per class: nil is the default 5%, 1 turns it
// off, 0 allows no stalled run. The verdict is the share's exact interval
// against it: PASS wholly within, FAIL wholly over, INCONCLUSIVE across
// (with the runs that would decide it); a budget of 0 is a rule.
func TestStallShareBudget(t *testing.T) {
	stalled := []float64{100, 140, 500, 540}
	smooth := []float64{100, 140, 180, 220}
	mk := func(n, of int) []Run {
		var runs []Run
		for i := range of {
			ch := smooth
			if i < n {
				ch = stalled
			}
			runs = append(runs, run("short", i, probe.Success, ch, nil, 0))
		}
		return runs
	}
	f := func(stalledRuns, of int, budget *float64, verdict string, decide int) {
		t.Helper()
		c := Build("api", []string{"short"}, map[string][]Run{"short": mk(stalledRuns, of)}, nil, map[string]Budget{"short": {StallShare: budget}})
		ce := c.cell("stall_share", "short")
		if ce.Verdict != verdict || ce.Over != (verdict == Fail) || ce.Decide != decide {
			t.Errorf("%d of %d stalled, budget %v: %s (over %v, decide %d), want %s (decide %d): %s", stalledRuns, of, deref(budget), ce.Verdict, ce.Over, ce.Decide, verdict, decide, ce.Why)
		}
	}
	f(0, 4, nil, Inconclusive, 72) // 0..60%: 72 runs bring 0% under 5%
	f(4, 4, nil, Fail, 0)          // 4 of 4: 39.8..100%
	f(4, 4, ptr(1), Pass, 0)       // off
	f(1, 4, ptr(0), Fail, 0)       // the rule: no run may
	f(0, 4, ptr(0), Pass, 0)
	f(0, 80, nil, Pass, 0)                // 0..4.5%
	f(20, 80, ptr(0.25), Inconclusive, 0) // on its budget: never decided
	f(40, 80, ptr(0.25), Fail, 0)         // 38.6..61.4%
}

// The finding of issue 11: 100 chunks in 4 bursts split by 1.4 s freezes,
// in every run. Gap p95 is near zero (3 of 99 gaps are freezes), yet the
// stall share and the buffering row are red, with 4 bursts, and step 2 of
// the triage points at the bursts, not at a slow model.
func TestFreezesInEveryRunAreRed(t *testing.T) {
	var runs []Run
	for i := range 5 {
		var chunks []float64
		for b := range 4 {
			for k := range 25 {
				chunks = append(chunks, 300+float64(b)*1400+float64(k)*0.05)
			}
		}
		runs = append(runs, withHeaders(run("long", i, probe.Success, chunks, ptr(chunks[99]+0.1), 0), 2))
	}
	c := Build("api", []string{"long"}, map[string][]Run{"long": runs}, nil, map[string]Budget{"long": {TFC: 1500, Gap: 150, Tail: 30000}})
	if c.Pass {
		t.Fatal("passed")
	}
	if g := c.cell("gap", "long"); g.Over || *g.Timing.P95 > 1 {
		t.Errorf("gap cell %+v: the freezes should hide in the p95", g)
	}
	st := c.cell("stall_share", "long")
	if !st.Over || *st.Stall.Share != 1 || !strings.Contains(st.Why, "5 of 5 runs stalled") {
		t.Errorf("stall share cell %+v", st)
	}
	b := c.cell("buffering", "long")
	if bc := b.Buffering; !b.Over || bc.Suspected != 5 || *bc.BurstsP50 != 4 || *bc.FreezeMaxMs < 1398 {
		t.Errorf("buffering cell %+v", b)
	}
	text := c.Text(false, 5)
	for _, want := range []string{"buffering       5 of 5 runs, 4 bursts FAIL", "100% of 5 runs [47.8..100%] (<= 5%) OVER", "4 burst(s) per run (p50) split by freezes up to 1399 ms"} {
		if !strings.Contains(text, want) {
			t.Errorf("text lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "slow model") || !strings.Contains(text, "not the model") {
		t.Errorf("triage step 2 must not blame a slow model for 0 ms gaps:\n%s", text)
	}
}

// Build orders the drills by probe.DrillNames on a copy: the caller's
// slice keeps its order. BuildClasses keeps copies of the classes and
// drill lines it was given: changing them afterwards changes no card.
func TestBuildLeavesTheCallersSlicesAlone(t *testing.T) {
	drill := func(name string) Run {
		r := run("long", 0, probe.Success, []float64{100, 140}, ptr(150), 0)
		r.Record.Drill, r.Record.RequestID, r.Record.Verdict = name, name, probe.VerdictPass
		return r
	}
	drills := []Run{drill(probe.DrillStale), drill(probe.DrillDuplicate), drill(probe.DrillDrop)}
	c := Build("api", nil, nil, drills, nil)
	var order, card []string
	for i := range drills {
		order = append(order, drills[i].Record.Drill)
		card = append(card, c.Drills[i].Drill)
	}
	if want := []string{probe.DrillStale, probe.DrillDuplicate, probe.DrillDrop}; !slices.Equal(order, want) {
		t.Errorf("the caller's drills were reordered to %v", order)
	}
	if want := []string{probe.DrillDrop, probe.DrillDuplicate, probe.DrillStale}; !slices.Equal(card, want) {
		t.Errorf("card drills %v, want %v", card, want)
	}

	classes := []Class{ClassOf("short", []Run{run("short", 0, probe.Success, []float64{100, 140}, ptr(150), 0)})}
	lines := []Drill{{Drill: "drop", Verdict: "pass"}}
	c = BuildClasses("api", classes, lines, nil)
	classes[0].Runs, classes[0].Sample, lines[0].Failed = 99, "changed", true
	if c.runsText(0) != "runs: short 1" || c.Drills[0].Failed {
		t.Errorf("the card follows the caller's slices: %q, drill failed %v", c.runsText(0), c.Drills[0].Failed)
	}
}

// A refused run is counted by its outcome, turns the outcomes row red and
// is the class's failing run, named with the refusal: check and report do
// not show a refused run as an empty success.
func TestRefusedRunsAreCountedAndRed(t *testing.T) {
	ok := run("short", 0, probe.Success, []float64{100, 140, 180}, nil, 0)
	refused := Run{Record: probe.Record{Target: "api", Sample: "short", Outcome: probe.Refused, RequestID: "r-refused",
		Error: "refused: the model declined to answer (stop_reason refusal)", FinishReason: dialect.FinishRefusal}}
	c := Build("api", []string{"short"}, map[string][]Run{"short": {ok, refused}}, nil, nil)
	ce := c.cell(RowOutcomes, "short")
	if !ce.Over || ce.Outcomes.Counts["refused"] != 1 || c.Pass {
		t.Fatalf("outcomes cell %+v (pass %v): want refused counted, red", ce.Outcomes, c.Pass)
	}
	out := c.Text(false, 2)
	if !strings.Contains(out, "success 1, refused 1") || !strings.Contains(out, "refused: the model declined to answer (stop_reason refusal)") {
		t.Errorf("the card does not show the refused run:\n%s", out)
	}
}

// With enough runs the intervals decide: 100 runs of the worked example
// pass a 600 ms TFC budget (the p95's interval ends at the slowest run,
// 452 ms), fail a 100 ms gap budget (one 259 ms stall in 9 gaps per run:
// the interval's bottom, by the runs' ranks, is the stall), and a
// target's own budget ([target.budget.<sample>], "target/sample") takes
// the place of the global one.
func TestCellVerdictsFromTheirIntervals(t *testing.T) {
	worked := []float64{412, 452, 497, 541, 588, 634, 691, 950, 998, 1044}
	var runs []Run
	for i := range 100 {
		runs = append(runs, run("short", i, probe.Success, shift(worked, float64(i%5*10)), ptr(1051+float64(i%5*10)), 10))
	}
	budgets := Budgets{"short": {TFC: 600, Gap: 100, Tail: 2000}, "mcp/short": {TFC: 430, Gap: 300, Tail: 2000}}
	c := Build("api", []string{"short"}, map[string][]Run{"short": runs}, nil, budgets)
	verdicts := map[string]string{}
	for _, ce := range c.Cells {
		verdicts[ce.Row] = ce.Verdict
	}
	if verdicts[RowTFC] != Pass || verdicts[RowGap] != Fail || verdicts[RowTail] != Pass || verdicts[RowStallShare] != Fail || c.Verdict != Fail {
		t.Errorf("verdicts %v, card %s", verdicts, c.Verdict)
	}
	if tfc := c.cell(RowTFC, "short").Timing; *tfc.P95Hi != 452 || *tfc.P50Lo != 422 || *tfc.P50Hi != 442 {
		t.Errorf("TFC intervals: p95 ..%v, p50 %v..%v", *tfc.P95Hi, *tfc.P50Lo, *tfc.P50Hi)
	}
	if g := c.cell(RowGap, "short").Timing; *g.P95Lo != 259 {
		t.Errorf("gap p95 from %v, want the stall", *g.P95Lo)
	}
	own := Build("mcp", []string{"short"}, map[string][]Run{"short": runs}, nil, budgets)
	if tfc, gap := own.cell(RowTFC, "short"), own.cell(RowGap, "short"); tfc.Verdict != Fail || gap.Verdict != Pass || *gap.Timing.Budget != 300 {
		t.Errorf("the target's own budgets: TFC %s, gap %s (budget %v)", tfc.Verdict, gap.Verdict, *gap.Timing.Budget)
	}
}

// A class with no run at all (a check whose time ran out before its first
// run) is inconclusive, never a pass.
func TestNoRunIsNoPass(t *testing.T) {
	c := Build("api", []string{"short"}, map[string][]Run{}, nil, Budgets{"short": {TFC: 600}})
	if o := c.cell(RowOutcomes, "short"); o.Verdict != Inconclusive || o.Why != "no run was made" || c.Verdict != Inconclusive {
		t.Errorf("outcomes %+v, card %s", o, c.Verdict)
	}
}
