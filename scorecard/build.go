package scorecard

import (
	"fmt"
	"slices"
	"sort"

	"github.com/streamprobe/streamprobe/probe"
)

// Build reduces runs (by sample) and drill runs of one target. samples
// gives the column order.
func Build(target string, samples []string, runs map[string][]Run, drills []Run, budgets map[string]Budget) *Card {
	sort.SliceStable(drills, func(i, j int) bool {
		return slices.Index(probe.DrillNames, drills[i].Record.Drill) < slices.Index(probe.DrillNames, drills[j].Record.Drill)
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
// same card as a check would.
func BuildClasses(target string, classes []Class, drills []Drill, budgets map[string]Budget) *Card {
	c := &Card{Target: target, RequestIDs: map[string][]string{}, classes: map[string]*Class{}, Drills: drills}
	for i := range classes {
		cl := &classes[i]
		s := cl.Sample
		c.Samples = append(c.Samples, s)
		c.classes[s] = cl
		if cl.RequestIDs != nil {
			c.RequestIDs[s] = cl.RequestIDs
		}
		if omitted := cl.RequestIDCount - len(cl.RequestIDs); cl.RequestIDs != nil && omitted > 0 {
			if c.RequestIDsOmitted == nil {
				c.RequestIDsOmitted = map[string]int{}
			}
			c.RequestIDsOmitted[s] = omitted
		}
		b := budgets[s]
		good := cl.Good
		cell := func(row string, d Dist, budget float64) {
			p50, b50 := d.quantile(0.5)
			p95, b95 := d.quantile(0.95)
			ce := Cell{Row: row, Sample: s, N: d.N(), P50: p50, P95: p95, P50Bucket: b50, P95Bucket: b95, Budget: budgetPtr(budget)}
			switch {
			case good == 0:
				ce.Why = NoSuccessfulRun // not red: the outcomes row is
			case ce.Budget != nil && p95 == nil:
				ce.Over, ce.Why = true, fmt.Sprintf("no value in %d successful run(s)", good)
			case ce.Budget != nil && *p95 > *ce.Budget:
				ce.Over, ce.Why = true, fmt.Sprintf("p95 %s over the %s budget", msText(*p95), msText(*ce.Budget))
			}
			c.Cells = append(c.Cells, ce)
		}
		cell("tfc", cl.TFC, b.TFC)
		cell("gap", cl.Gap, b.Gap)
		cell("tail", cl.Tail, b.Tail)
		cell("close", cl.Close, 0)
		shareBudget := DefaultStallShare
		if b.StallShare != nil {
			shareBudget = *b.StallShare
		}
		share := Cell{Row: "stall_share", Sample: s, N: good, ShareBudget: &shareBudget}
		if good > 0 {
			v := float64(cl.Stalled) / float64(good)
			share.Share = &v
			if v > shareBudget {
				share.Over, share.Why = true, fmt.Sprintf("%d of %d runs stalled over 250 ms (%.0f%%), over the %s budget", cl.Stalled, good, v*100, pctText(shareBudget))
			}
		}
		c.Cells = append(c.Cells, share)
		buf := Cell{Row: "buffering", Sample: s, N: good}
		if bf := cl.Buffering; bf != nil && good > 0 {
			v := float64(bf.Suspected) / float64(good)
			buf.Share, buf.Suspected, buf.FreezeMaxMs = &v, bf.Suspected, bf.FreezeMax
			buf.BurstsP50, _ = bf.Bursts.quantile(0.5)
			buf.FirstChunkAfterHeadersP50Ms, _ = bf.AfterHeaders.quantile(0.5)
			if bf.Suspected > 0 && v >= BufferingShare {
				buf.Over, buf.Why = true, fmt.Sprintf("suspected proxy buffering in %d of %d runs: %s", bf.Suspected, good, burstText(&buf))
			}
		} else if bf == nil {
			buf.Unknown = true
		}
		c.Cells = append(c.Cells, buf)
		oc := Cell{Row: "outcomes", Sample: s, N: cl.Runs, Outcomes: cl.Outcomes}
		if cl.Failed > 0 {
			oc.Over, oc.Why = true, fmt.Sprintf("%d of %d runs did not end as the %s sample should", cl.Failed, cl.Runs, s)
			if cl.BadVerdict > 0 {
				oc.Why += fmt.Sprintf(" (%d with a failing resume verdict)", cl.BadVerdict)
			}
			if oc.FailedRun = cl.FailedRun; oc.FailedRun != nil {
				oc.Why += fmt.Sprintf("; %d like this one: %s", oc.FailedRun.Like, oc.FailedRun)
			}
		}
		c.Cells = append(c.Cells, oc)
	}
	c.Resolution = foldedNote(classes)
	c.Triage = c.triage()
	c.Pass = true
	for _, ce := range c.Cells {
		if ce.Over {
			c.Pass = false
		}
	}
	for _, d := range c.Drills {
		if d.Failed {
			c.Pass = false
		}
	}
	return c
}

func budgetPtr(v float64) *float64 {
	if v <= 0 {
		return nil
	}
	return &v
}
