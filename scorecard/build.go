package scorecard

import (
	"fmt"
	"slices"

	"github.com/streamprobe/streamprobe/probe"
)

// Build reduces runs (by sample) and drill runs of one target. samples
// gives the column order. It keeps the runs for the HTML report's
// timelines. It orders the drills on a copy: the caller's slices stay as
// they are.
func Build(target string, samples []string, runs map[string][]Run, drills []Run, budgets map[string]Budget) *Card {
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
// order) and drill lines: the cells against the budgets, the triage and
// the verdict. check and report share it, so a window of data gets the
// same card as a check would. The card keeps copies of classes and
// drills, never the caller's slices.
func BuildClasses(target string, classes []Class, drills []Drill, budgets map[string]Budget) *Card {
	c := &Card{Target: target, RequestIDs: map[string][]string{}, classes: map[string]*Class{}, Drills: slices.Clone(drills)}
	classes = slices.Clone(classes)
	for i := range classes {
		c.addClass(&classes[i])
		c.Cells = append(c.Cells, cellsOf(&classes[i], budgets[classes[i].Sample])...)
	}
	c.Resolution = foldedNote(classes)
	c.Triage = c.triage()
	c.Pass = !slices.ContainsFunc(c.Cells, func(ce Cell) bool { return ce.Over }) &&
		!slices.ContainsFunc(c.Drills, func(d Drill) bool { return d.Failed })
	return c
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

// cellsOf judges one class against its budget: its cells in Rows order.
func cellsOf(cl *Class, b Budget) []Cell {
	return []Cell{
		timingCell(RowTFC, cl, cl.TFC, b.TFC),
		timingCell(RowGap, cl, cl.Gap, b.Gap),
		timingCell(RowTail, cl, cl.Tail, b.Tail),
		timingCell(RowClose, cl, cl.Close, 0),
		stallCell(cl, b.StallShare),
		bufferingCell(cl),
		outcomesCell(cl),
	}
}

// timingCell is the p50 and p95 of d against a p95 budget (0: none). A
// class without a measured run has nothing to judge: the outcomes row is
// red instead.
func timingCell(row string, cl *Class, d Dist, budget float64) Cell {
	t := &TimingCell{}
	t.P50, t.P50Bucket = d.quantile(0.5)
	t.P95, t.P95Bucket = d.quantile(0.95)
	if budget > 0 {
		t.Budget = &budget
	}
	ce := Cell{Row: row, Sample: cl.Sample, N: d.N(), Timing: t, SmallSample: SmallSample(cl.Good)}
	switch {
	case cl.Good == 0:
		ce.Why = NoSuccessfulRun
	case t.Budget != nil && t.P95 == nil:
		ce.Over, ce.Why = true, fmt.Sprintf("no value in %d successful run(s)", cl.Good)
	case t.Budget != nil && *t.P95 > budget:
		ce.Over, ce.Why = true, fmt.Sprintf("p95 %s over the %s budget", msText(*t.P95), msText(budget))
	}
	return ce
}

// stallCell is the share of the measured runs that stalled over 250 ms
// against the class's stall-share budget (nil: DefaultStallShare).
func stallCell(cl *Class, budget *float64) Cell {
	st := &StallCell{Budget: DefaultStallShare}
	if budget != nil {
		st.Budget = *budget
	}
	ce := Cell{Row: RowStallShare, Sample: cl.Sample, N: cl.Good, Stall: st}
	if cl.Good == 0 {
		return ce
	}
	v := float64(cl.Stalled) / float64(cl.Good)
	st.Share, ce.SmallSample = &v, SmallSample(cl.Good)
	if v > st.Budget {
		ce.Over, ce.Why = true, fmt.Sprintf("%d of %d runs stalled over 250 ms (%.0f%%), over the %s budget", cl.Stalled, cl.Good, v*100, pctText(st.Budget))
	}
	return ce
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
	if bf.Suspected > 0 && v >= BufferingShare {
		ce.Over, ce.Why = true, fmt.Sprintf("suspected proxy buffering in %d of %d runs: %s", bf.Suspected, cl.Good, burstText(bc))
	}
	return ce
}

// outcomesCell counts the runs by outcome: red when any did not end as its
// sample intends, saying how most of them failed.
func outcomesCell(cl *Class) Cell {
	oc := &OutcomesCell{Counts: cl.Outcomes}
	ce := Cell{Row: RowOutcomes, Sample: cl.Sample, N: cl.Runs, Outcomes: oc}
	if cl.Failed == 0 {
		return ce
	}
	ce.Over, ce.Why = true, fmt.Sprintf("%d of %d runs did not end as the %s sample should", cl.Failed, cl.Runs, cl.Sample)
	if cl.BadVerdict > 0 {
		ce.Why += fmt.Sprintf(" (%d with a failing resume verdict)", cl.BadVerdict)
	}
	if oc.FailedRun = cl.FailedRun; oc.FailedRun != nil {
		ce.Why += fmt.Sprintf("; %d like this one: %s", oc.FailedRun.Like, oc.FailedRun)
	}
	return ce
}
