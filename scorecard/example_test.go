package scorecard_test

import (
	"fmt"
	"os"

	"github.com/streamprobe/streamprobe/probe"
	"github.com/streamprobe/streamprobe/scorecard"
)

// shortRuns are three runs of the short sample as a probe records them:
// their TFC and the gaps between their chunks, in ms.
func shortRuns() []scorecard.Run {
	var runs []scorecard.Run
	for i, tfc := range []float64{420, 450, 610} {
		tail := 300.0
		runs = append(runs, scorecard.Run{Record: probe.Record{RequestID: fmt.Sprintf("req-%d", i), Target: "api", Sample: "short",
			Outcome: probe.Success, Chunks: 4, TFCMs: &tfc, TailMs: &tail, Gaps: probe.Gaps{Count: 3, Values: []float64{40, 45, 60}}}})
	}
	return runs
}

// Build reduces the runs of each sample of one target to a card: a cell
// per row and sample against the budgets, each p95 with its interval, and
// the verdict. Three runs bound a p95 from below only (by the second
// fastest: 450 ms), so the 610 ms p95 cannot be called over a 500 ms
// budget yet: INCONCLUSIVE, with the runs that would decide it.
func ExampleBuild() {
	budgets := map[string]scorecard.Budget{"short": {TFC: 500, Gap: 100}}
	c := scorecard.Build("api", []string{"short"}, map[string][]scorecard.Run{"short": shortRuns()}, nil, budgets)
	for _, ce := range c.Cells {
		if t := ce.Timing; t != nil && t.P95 != nil {
			fmt.Printf("%s: n %d, p50 %.0f ms, p95 %.0f ms, from %.0f ms (%.0f%%): %q\n", ce.Row, ce.N, *t.P50, *t.P95, *t.P95Lo, ce.Confidence*100, ce.Verdict)
		}
	}
	for _, ce := range c.InconclusiveCells() {
		fmt.Printf("%s %s: %s\n", ce.Sample, ce.Row, ce.Why)
	}
	fmt.Println("verdict:", c.Verdict)
	// Output:
	// tfc: n 3, p50 450 ms, p95 610 ms, from 450 ms (95%): "INCONCLUSIVE"
	// gap: n 9, p50 45 ms, p95 60 ms, from 45 ms (95%): "INCONCLUSIVE"
	// tail: n 3, p50 300 ms, p95 300 ms, from 300 ms (95%): ""
	// short tfc: p95 610 ms, its 95% interval 450..inf ms straddles the 500 ms budget; about 9 runs would decide it
	// short gap: p95 60 ms, its 95% interval 45..inf ms straddles the 100 ms budget; about 72 runs would decide it
	// short stall_share: 0 of 3 runs stalled over 250 ms (0%, 95% interval 0..70.8%), straddling the 5% budget; about 72 runs would decide it
	// verdict: INCONCLUSIVE
}

// WriteText prints cards as check and report do, without colours here.
func ExampleWriteText() {
	budgets := map[string]scorecard.Budget{"short": {TFC: 500, Gap: 100}}
	c := scorecard.Build("api", []string{"short"}, map[string][]scorecard.Run{"short": shortRuns()}, nil, budgets)
	scorecard.WriteText(os.Stdout, []*scorecard.Card{c}, false, 3)
	// Output:
	// target api
	//   3 runs per sample; cells: p50 / p95 [the p95's 95% interval] (<= p95 budget)
	//   (dashboards show these within one histogram bucket, 13.6% with vmrange; the TFC alert counts runs over budget, as this card does)
	//                   short
	//   TFC             450 / 610 ms [450..inf] (<= 500) INCONCLUSIVE
	//   gap             45 / 60 ms [45..inf] (<= 100) INCONCLUSIVE
	//   tail            300 / 300 ms [300..inf]
	//   close           absent
	//   stalled >250ms  0% of 3 runs [0..70.8%] (<= 5%) INCONCLUSIVE
	//   buffering       none ok
	//   outcomes        success 3 ok
	//   small samples (a note, not a verdict: the marks stand)
	//     short: p95 on 3 run(s), fewer than the 20 a p95 needs
	//   inconclusive cells (the interval straddles the budget: more runs decide)
	//     short TFC: p95 610 ms, its 95% interval 450..inf ms straddles the 500 ms budget; about 9 runs would decide it
	//     short gap: p95 60 ms, its 95% interval 45..inf ms straddles the 100 ms budget; about 72 runs would decide it
	//     short stalled >250ms: 0 of 3 runs stalled over 250 ms (0%, 95% interval 0..70.8%), straddling the 5% budget; about 72 runs would decide it
	//   verdict: INCONCLUSIVE (0 red cell(s), 3 inconclusive, 0 failing drill(s))
}

// A ClassBuilder folds the records of one sample one at a time, in memory
// bounded whatever their number (report reads days of results logs so);
// BuildClasses makes the card of such classes.
func ExampleClassBuilder() {
	b := scorecard.NewClassBuilder("short")
	for i := range 10_000 {
		tfc := 300 + float64(i%200)
		b.Add(probe.Record{RequestID: fmt.Sprintf("req-%05d", i), Sample: "short", Outcome: probe.Success, TFCMs: &tfc})
	}
	cl := b.Class()
	c := scorecard.BuildClasses("api", []scorecard.Class{cl}, nil, map[string]scorecard.Budget{"short": {TFC: 500}})
	tfc := c.Cells[0]
	fmt.Printf("%d runs: TFC p50 %.0f ms, p95 %.0f ms; pass %v\n", cl.Runs, *tfc.Timing.P50, *tfc.Timing.P95, c.Pass)
	fmt.Printf("request ids: %d kept (the first and the last %d), %d left out\n", len(c.RequestIDs["short"]), scorecard.KeptIDs, c.RequestIDsOmitted["short"])
	// Output:
	// 10000 runs: TFC p50 400 ms, p95 489 ms; pass true
	// request ids: 200 kept (the first and the last 100), 9800 left out
}
