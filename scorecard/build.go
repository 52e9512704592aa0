package scorecard

import (
	"fmt"
	"slices"

	"github.com/streamprobe/streamprobe/internal/stats"
	"github.com/streamprobe/streamprobe/probe"
)

// Build reduces runs (by sample) and drill runs of one target. samples
// gives the column order. It keeps the runs for the HTML report's
// timelines. It orders the drills on a copy: the caller's slices stay as
// they are.
func Build(target string, samples []string, runs map[string][]Run, drills []Run, budgets Budgets) *Card {
	drills = slices.Clone(drills)
	slices.SortStableFunc(drills, func(a, b Run) int {
		return slices.Index(probe.DrillNames, a.Record.Drill) - slices.Index(probe.DrillNames, b.Record.Drill)
	})
	var classes []Class
	for _, s := range samples {
		classes = append(classes, ClassOf(s, runs[s]))
	}
	var ds []Drill
	for _, r := range drills {
		ds = append(ds, DrillOf(r))
	}
	c := BuildClasses(target, classes, ds, budgets)
	c.runs, c.drills = runs, drills
	return c
}

// BuildClasses makes the card of one target from its classes (in column
// order) and drill lines: the cells against the target's budgets
// (Budgets.For), judged at DefaultConfidence, the triage and the
// verdict. check and report share it, so a window of data gets the same
// card as a check would. The card keeps copies of classes and drills,
// never the caller's slices.
func BuildClasses(target string, classes []Class, drills []Drill, budgets Budgets) *Card {
	c := &Card{Target: target, RequestIDs: map[string][]string{}, classes: map[string]*Class{}, Drills: slices.Clone(drills), budgets: map[string]Budget{}}
	classes = slices.Clone(classes)
	for i := range classes {
		c.addClass(&classes[i])
		c.budgets[classes[i].Sample] = budgets.For(target, classes[i].Sample)
	}
	c.Resolution = foldedNote(classes)
	c.Judge(nil)
	return c
}

// Judge judges the card again, each class at its alpha (alpha(sample):
// its intervals at confidence 1-alpha; nil: 1-DefaultConfidence for
// every class): the cells, the triage and the verdict.
func (c *Card) Judge(alpha func(sample string) float64) {
	if alpha == nil {
		alpha = func(string) float64 { return 1 - DefaultConfidence }
	}
	c.alpha = alpha
	c.Cells = nil
	for _, s := range c.Samples {
		c.Cells = append(c.Cells, JudgeClass(c.classes[s], c.budgets[s], alpha(s))...)
	}
	c.Triage = c.triage()
	c.Verdict = verdictOf(c.Cells, c.Drills)
	// A card with no run has nothing that passed: never PASS.
	c.NoRun = len(c.Drills) == 0 && !slices.ContainsFunc(c.Samples, func(s string) bool { return c.classes[s].Runs > 0 })
	if c.NoRun && c.Verdict == Pass {
		c.Verdict = Inconclusive
	}
	c.Pass = c.Verdict == Pass
}

// verdictOf is a card's verdict from its cells and drills: Fail when a
// cell is red or a drill failed, else Inconclusive when a cell is, else
// Pass.
func verdictOf(cells []Cell, drills []Drill) string {
	switch {
	case slices.ContainsFunc(cells, func(ce Cell) bool { return ce.Over }) || slices.ContainsFunc(drills, func(d Drill) bool { return d.Failed }):
		return Fail
	case slices.ContainsFunc(cells, func(ce Cell) bool { return ce.Verdict == Inconclusive }):
		return Inconclusive
	}
	return Pass
}

// ClassVerdict is the verdict of a class's cells (Card.ClassCells): Fail
// when one is red, else Inconclusive when one is, else Pass.
func ClassVerdict(cells []Cell) string { return verdictOf(cells, nil) }

// Decided reports whether every cell of cells has a verdict other than
// Inconclusive: a class of check's sequential plan needs no more runs.
func Decided(cells []Cell) bool {
	return !slices.ContainsFunc(cells, func(ce Cell) bool { return ce.Verdict == Inconclusive })
}

// addClass makes cl the card's next column, with its request ids.
func (c *Card) addClass(cl *Class) {
	s := cl.Sample
	c.Samples = append(c.Samples, s)
	c.classes[s] = cl
	if cl.RequestIDs == nil {
		return
	}
	c.RequestIDs[s] = cl.RequestIDs
	if omitted := cl.RequestIDCount - len(cl.RequestIDs); omitted > 0 {
		if c.RequestIDsOmitted == nil {
			c.RequestIDsOmitted = map[string]int{}
		}
		c.RequestIDsOmitted[s] = omitted
	}
}

// JudgeClass judges one class against its budget at confidence
// 1-alpha: its cells in Rows order, an inconclusive cell with the runs
// that would decide it.
func JudgeClass(cl *Class, b Budget, alpha float64) []Cell {
	return judgeClass(cl, b, alpha, true)
}

// ClassDecided reports whether every cell of the class is decided at
// confidence 1-alpha: JudgeClass without working out, for an
// inconclusive cell, the runs that would decide it (check asks after
// every look).
func ClassDecided(cl *Class, b Budget, alpha float64) bool {
	return Decided(judgeClass(cl, b, alpha, false))
}

// judgeClass is JudgeClass; decide says whether to work out the runs
// that would decide an inconclusive cell.
func judgeClass(cl *Class, b Budget, alpha float64, decide bool) []Cell {
	j := judging{alpha: alpha, decide: decide}
	return []Cell{
		j.timingCell(RowTFC, cl, cl.TFC, b.TFC),
		j.timingCell(RowGap, cl, cl.Gap, b.Gap),
		j.timingCell(RowTail, cl, cl.Tail, b.Tail),
		j.timingCell(RowClose, cl, cl.Close, 0),
		j.stallCell(cl, b.StallShare),
		bufferingCell(cl),
		j.outcomesCell(cl, b.ErrorShare),
	}
}

// judging is how a class is judged: at confidence 1-alpha, and whether
// to work out the runs that would decide an inconclusive cell.
type judging struct {
	alpha  float64
	decide bool
}

// timingCell is the p50 and p95 of d, with their intervals at 1-alpha,
// against a p95 budget (0: none): PASS when the p95's whole interval is
// within the budget, FAIL when it is wholly over, INCONCLUSIVE otherwise.
// A class without a measured run has nothing to judge: the outcomes row
// is red instead.
func (j judging) timingCell(row string, cl *Class, d Dist, budget float64) Cell {
	alpha := j.alpha
	t := &TimingCell{}
	t.P50, t.P50Bucket = d.quantile(0.5)
	t.P95, t.P95Bucket = d.quantile(0.95)
	if budget > 0 {
		t.Budget = &budget
	}
	ce := Cell{Row: row, Sample: cl.Sample, N: d.N(), Timing: t, SmallSample: SmallSample(cl.Good)}
	if cl.Good == 0 {
		ce.Why = NoSuccessfulRun
		return ce
	}
	// The gap row pools every gap of its runs: the run is the unit.
	runs := d.N()
	if row == RowGap {
		runs = cl.Good
	}
	os := d.orderStats()
	t.P50Lo, t.P50Hi = os.interval(0.5, alpha, runs)
	t.P95Lo, t.P95Hi = os.interval(0.95, alpha, runs)
	if t.P50 != nil {
		ce.Confidence = 1 - alpha
	}
	switch {
	case t.Budget == nil:
	case t.P95 == nil:
		ce.Verdict, ce.Over, ce.Why = Fail, true, fmt.Sprintf("no value in %d successful run(s)", cl.Good)
	case t.P95Lo != nil && *t.P95Lo > budget:
		ce.Verdict, ce.Over, ce.Why = Fail, true, fmt.Sprintf("p95 %s over the %s budget (%s interval %s)", msText(*t.P95), msText(budget), pctFine(1-alpha), msInterval(t.P95Lo, t.P95Hi))
	case t.P95Hi != nil && *t.P95Hi <= budget:
		ce.Verdict = Pass
	default:
		ce.Verdict = Inconclusive
		ce.Why = fmt.Sprintf("p95 %s, its %s interval %s straddles the %s budget", msText(*t.P95), pctFine(1-alpha), msInterval(t.P95Lo, t.P95Hi), msText(budget))
		if j.decide {
			ce.Decide = stats.RunsToDecideQuantile(runs, 0.95, alpha, budget, os.at)
			ce.Why += decideText(ce.Decide)
		}
	}
	return ce
}

// shareVerdict judges k of n against a share budget by the share's exact
// interval lo..hi: PASS when it is within, FAIL when wholly over,
// INCONCLUSIVE otherwise. A budget of 0 is a rule, not a rate: no run
// may, so one run is a FAIL and none a PASS.
func (j judging) shareVerdict(ce *Cell, k, n int, lo, hi, budget float64) {
	switch {
	case budget == 0 && k > 0, lo > budget:
		ce.Verdict, ce.Over = Fail, true
	case budget == 0, hi <= budget:
		ce.Verdict = Pass
	default:
		ce.Verdict = Inconclusive
		if j.decide {
			ce.Decide = stats.RunsToDecideShare(k, n, j.alpha, budget)
		}
	}
}

// stallCell is the share of the measured runs that stalled over 250 ms,
// with its exact binomial interval, against the class's stall-share
// budget (nil: DefaultStallShare).
func (j judging) stallCell(cl *Class, budget *float64) Cell {
	alpha := j.alpha
	st := &StallCell{Budget: DefaultStallShare}
	if budget != nil {
		st.Budget = *budget
	}
	ce := Cell{Row: RowStallShare, Sample: cl.Sample, N: cl.Good, Stall: st}
	if cl.Good == 0 {
		return ce
	}
	v := float64(cl.Stalled) / float64(cl.Good)
	lo, hi := stats.ClopperPearson(cl.Stalled, cl.Good, alpha)
	st.Share, st.Lo, st.Hi, ce.SmallSample, ce.Confidence = &v, &lo, &hi, SmallSample(cl.Good), 1-alpha
	j.shareVerdict(&ce, cl.Stalled, cl.Good, lo, hi, st.Budget)
	what := fmt.Sprintf("%d of %d runs stalled over 250 ms (%.0f%%, %s interval %s)", cl.Stalled, cl.Good, v*100, pctFine(1-alpha), pctInterval(lo, hi))
	switch ce.Verdict {
	case Fail:
		ce.Why = what + ", over the " + pctText(st.Budget) + " budget"
	case Inconclusive:
		ce.Why = what + ", straddling the " + pctText(st.Budget) + " budget"
		if j.decide {
			ce.Why += decideText(ce.Decide)
		}
	}
	return ce
}

// decideText says how many runs would decide an inconclusive cell.
func decideText(n int) string {
	if n == 0 {
		return fmt.Sprintf("; it sits on the budget: no number of runs up to %d would decide it", stats.MaxRunsToDecide)
	}
	return fmt.Sprintf("; about %d runs would decide it", n)
}

// bufferingCell is the measured runs that look proxy-buffered: red when
// BufferingShare of them or more do.
func bufferingCell(cl *Class) Cell {
	bc := &BufferingCell{}
	ce := Cell{Row: RowBuffering, Sample: cl.Sample, N: cl.Good, Buffering: bc}
	bf := cl.Buffering
	switch {
	case bf == nil:
		bc.Unknown = true
		return ce
	case cl.Good == 0:
		return ce
	}
	v := float64(bf.Suspected) / float64(cl.Good)
	bc.Share, bc.Suspected, bc.FreezeMaxMs = &v, bf.Suspected, bf.FreezeMax
	bc.BurstsP50, _ = bf.Bursts.quantile(0.5)
	bc.FirstChunkAfterHeadersP50Ms, _ = bf.AfterHeaders.quantile(0.5)
	ce.Verdict = Pass
	if bf.Suspected > 0 && v >= BufferingShare {
		ce.Verdict, ce.Over, ce.Why = Fail, true, fmt.Sprintf("suspected proxy buffering in %d of %d runs: %s", bf.Suspected, cl.Good, burstText(bc))
	}
	return ce
}

// outcomesCell counts the runs by outcome: red when more runs failed
// than the error-share budget allows (nil or 0: any failed run), saying
// how most of them failed.
func (j judging) outcomesCell(cl *Class, budget *float64) Cell {
	alpha := j.alpha
	oc := &OutcomesCell{Counts: cl.Outcomes}
	if budget != nil {
		oc.Budget = *budget
	}
	ce := Cell{Row: RowOutcomes, Sample: cl.Sample, N: cl.Runs, Outcomes: oc}
	if cl.Runs == 0 {
		// Nothing ran (a check's time cap before its first run): nothing
		// passed either.
		ce.Verdict, ce.Why = Inconclusive, "no run was made"
		return ce
	}
	v := float64(cl.Failed) / float64(cl.Runs)
	lo, hi := stats.ClopperPearson(cl.Failed, cl.Runs, alpha)
	oc.FailedShare, oc.Lo, oc.Hi, ce.Confidence = &v, &lo, &hi, 1-alpha
	j.shareVerdict(&ce, cl.Failed, cl.Runs, lo, hi, oc.Budget)
	if cl.Failed == 0 {
		return ce
	}
	ce.Why = fmt.Sprintf("%d of %d runs did not end as the %s sample should", cl.Failed, cl.Runs, cl.Sample)
	if oc.Budget > 0 {
		ce.Why += fmt.Sprintf(" (%s interval %s of the %s budget)", pctFine(1-alpha), pctInterval(lo, hi), pctText(oc.Budget))
	}
	if cl.BadVerdict > 0 {
		ce.Why += fmt.Sprintf(" (%d with a failing resume verdict)", cl.BadVerdict)
	}
	if oc.FailedRun = cl.FailedRun; oc.FailedRun != nil {
		ce.Why += fmt.Sprintf("; %d like this one: %s", oc.FailedRun.Like, oc.FailedRun)
	}
	if ce.Verdict == Inconclusive && j.decide {
		ce.Why += decideText(ce.Decide)
	}
	if ce.Verdict == Pass {
		ce.Why = ""
	}
	return ce
}
