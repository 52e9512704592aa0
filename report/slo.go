package report

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/streamprobe/streamprobe/internal/metricnames"
	"github.com/streamprobe/streamprobe/probe"
)

// The SLIs an objective ([slo.<sample>]) is set on, as the SLO rules
// (deploy/slo.yml) record them.
const (
	// SLITFCWithin: of the runs with a TFC (unresumed, ended as intended),
	// the share within the class's TFC budget.
	SLITFCWithin = "tfc_within"
	// SLINoStall: of the same runs, the share without a gap over 250 ms.
	SLINoStall = "no_stall"
	// SLIDrillsPass: of the drill runs streaming the class's sample, the
	// share that pass (ended as intended, no failing verdict).
	SLIDrillsPass = "drills_pass"
)

// Objectives are the objectives by sample class and SLI (0.99: 99% of
// runs good).
type Objectives map[string]map[string]float64

// BudgetLine is an objective's error budget over the report's window, in
// a region ("" the fleet) for a target and class.
type BudgetLine struct {
	Region    string  `json:"region,omitempty"`
	Target    string  `json:"target"`
	Sample    string  `json:"sample"`
	SLI       string  `json:"slo"`
	Objective float64 `json:"objective"`
	Runs      int     `json:"runs"`
	Bad       int     `json:"bad"`
	// Used is the share of the error budget the bad runs used: their
	// share over 1 - Objective (1: all of it; over 1: overspent).
	Used float64 `json:"budget_used"`
}

// String is the line report prints.
func (b BudgetLine) String() string {
	where := b.Region
	if where == "" {
		where = "fleet"
	}
	return fmt.Sprintf("%s %s %s: %s objective %g%%: %d of %d runs bad (%.2f%%): %.0f%% of the error budget used",
		b.Target, b.Sample, where, b.SLI, b.Objective*100, b.Bad, b.Runs, 100*float64(b.Bad)/float64(b.Runs), 100*b.Used)
}

type sliKey struct{ region, target, sample, sli string }

// sliSums are, by region ("" the fleet), target, class and SLI, the runs
// and the bad ones.
type sliSums map[sliKey]*[2]int

func (s sliSums) add(region, target, sample, sli string, runs, bad int) {
	for _, r := range []string{region, ""} {
		k := sliKey{r, target, sample, sli}
		if s[k] == nil {
			if len(s) >= 3*MaxClasses {
				continue // bounded as the cards are
			}
			s[k] = &[2]int{}
		}
		s[k][0] += runs
		s[k][1] += bad
	}
}

// record counts one run of a results log against the SLIs; tfcBudgetMs
// is the class's TFC budget (0: none).
func (s sliSums) record(region string, r probe.Record, tfcBudgetMs float64) {
	b := boolInt
	if r.Drill != "" && r.Drill != probe.DrillNone {
		s.add(region, r.Target, r.Sample, SLIDrillsPass, 1, b(!r.Passed()))
		return
	}
	if !r.Intended() || r.Resumed || r.TFCMs == nil {
		return
	}
	s.add(region, r.Target, r.Sample, SLINoStall, 1, b(r.Stalls > 0))
	if tfcBudgetMs > 0 {
		s.add(region, r.Target, r.Sample, SLITFCWithin, 1, b(*r.TFCMs > tfcBudgetMs))
	}
}

// lines are the budget lines of the objectives set, the fleet's after
// the regions', by target, class and SLI; only of classes with runs.
func (s sliSums) lines(obj Objectives) []BudgetLine {
	var out []BudgetLine
	for k, n := range s {
		o, ok := obj[k.sample][k.sli]
		if !ok || n[0] == 0 {
			continue
		}
		out = append(out, BudgetLine{Region: k.region, Target: k.target, Sample: k.sample, SLI: k.sli, Objective: o,
			Runs: n[0], Bad: n[1], Used: float64(n[1]) / float64(n[0]) / (1 - o)})
	}
	slices.SortFunc(out, func(a, b BudgetLine) int {
		return cmp.Or(cmp.Compare(a.Target, b.Target), cmp.Compare(boolInt(a.Region == ""), boolInt(b.Region == "")) /* fleet last */, cmp.Compare(a.Region, b.Region),
			cmp.Compare(a.Sample, b.Sample), cmp.Compare(a.SLI, b.SLI))
	})
	return out
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// ErrorBudget is the error budget of each objective in obj over the runs
// read, per region and for the fleet.
func (l *Logs) ErrorBudget(obj Objectives) []BudgetLine { return l.sli.lines(obj) }

// ErrorBudget is the error budget of each objective in obj over the
// window f selects, from the counters the SLO rules read: per region and
// for the fleet. What it reads is bounded as the cards' reading is: a
// value that is no count is skipped, and no more than MaxClasses classes
// of each SLI are kept.
func (v VM) ErrorBudget(ctx context.Context, f Filter, obj Objectives) ([]BudgetLine, error) {
	w, until, err := window(f)
	if err != nil {
		return nil, err
	}
	sums := sliSums{}
	const by = `sum by (region,target,sample) (increase_pure(`
	for _, q := range []struct {
		query string
		sli   string
		bad   bool
	}{
		{by + metricnames.TFC + `_count{` + noDrill + `,resumed="false"}%s))`, SLINoStall, false},
		{by + metricnames.TFC + `_count{` + noDrill + `,resumed="false"}%s))`, SLITFCWithin, false},
		{by + metricnames.StalledRuns + `{` + noDrill + `}%s))`, SLINoStall, true},
		{by + metricnames.OverBudget + `{` + noDrill + `,metric="tfc"}%s))`, SLITFCWithin, true},
		{by + metricnames.Runs + `{drill!="` + probe.DrillNone + `"}%s))`, SLIDrillsPass, false},
		{by + metricnames.RunsFailed + `{drill!="` + probe.DrillNone + `"}%s))`, SLIDrillsPass, true},
		{by + metricnames.ResumeChecks + `{drill!="` + probe.DrillNone + `",failed="true"}%s))`, SLIDrillsPass, true},
	} {
		err := v.query(ctx, fmt.Sprintf(q.query, w), until, func(s series) {
			region, target := s.labels.Region, s.labels.Target
			if region == "" {
				region = NoRegion
			}
			if !f.keep(region, target) || !f.known(target) || math.IsNaN(s.value) || s.value <= 0 || s.value > maxRuns {
				return
			}
			for _, r := range []string{region, ""} {
				k := sliKey{r, target, s.labels.Sample, q.sli}
				if sums[k] == nil {
					if len(sums) >= 3*MaxClasses {
						continue
					}
					sums[k] = &[2]int{}
				}
				sums[k][boolInt(q.bad)] += count(s.value)
			}
		})
		if err != nil {
			return nil, err
		}
	}
	for _, n := range sums {
		n[1] = min(n[1], n[0]) // a failed drill run may also carry a failing verdict
	}
	return sums.lines(obj), nil
}
