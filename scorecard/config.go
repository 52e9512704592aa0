package scorecard

import (
	"slices"
	"time"

	"github.com/streamprobe/streamprobe/config"
	"github.com/streamprobe/streamprobe/dialect"
	"github.com/streamprobe/streamprobe/probe"
)

// BudgetsOf are the config's budgets as the scorecard takes them: the
// [budget.<sample>] tables, and each target's own merged over them under
// "target/sample" (Budgets.For).
func BudgetsOf(cfg *config.Config) Budgets {
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	of := func(b config.Budget) Budget {
		return Budget{TFC: ms(b.TFC.Duration), Gap: ms(b.Gap.Duration), Tail: ms(b.Tail.Duration), StallShare: b.StallShare, ErrorShare: b.ErrorShare}
	}
	budgets := Budgets{}
	for s, b := range cfg.Budgets {
		budgets[s] = of(b)
	}
	for i, t := range cfg.Targets {
		if len(t.Budgets) == 0 {
			continue
		}
		for s, b := range cfg.BudgetsFor(i) {
			budgets[t.Name+"/"+s] = of(b)
		}
	}
	return budgets
}

// Cards makes the card of each of cfg's targets (only those named in
// targets, when any), its samples in their fixed order, from its runs
// (by target): sample runs and drill runs together, as check has them.
// check and the daemon's status page both judge with it, so a class has
// the same verdict on the same runs in both.
func Cards(cfg *config.Config, targets []string, runs map[string][]Run) []*Card {
	budgets := BudgetsOf(cfg)
	var cards []*Card
	for _, ct := range cfg.Targets {
		if len(targets) > 0 && !slices.Contains(targets, ct.Name) {
			continue
		}
		var samples []string
		for _, s := range dialect.SampleNames {
			if slices.Contains(ct.Samples, s) {
				samples = append(samples, s)
			}
		}
		bySample := map[string][]Run{}
		var drills []Run
		for _, r := range runs[ct.Name] {
			if r.Record.Drill != probe.DrillNone {
				drills = append(drills, r)
			} else {
				bySample[r.Record.Sample] = append(bySample[r.Record.Sample], r)
			}
		}
		cards = append(cards, Build(ct.Name, samples, bySample, drills, budgets))
	}
	return cards
}

// ClassCells are the cells of one class of the card, in Rows order (none
// when the card has no such class).
func (c *Card) ClassCells(sample string) []Cell {
	var out []Cell
	for _, ce := range c.Cells {
		if ce.Sample == sample {
			out = append(out, ce)
		}
	}
	return out
}

// Text is the cell as check's text card shows it, and its mark: "ok",
// "OVER" (or another red mark), or "" for a cell not judged.
func (ce Cell) Text() (text, mark string) { return ce.text() }

// RowName is a row (Rows) as the outputs name it.
func RowName(row string) string { return rowNames[row] }
