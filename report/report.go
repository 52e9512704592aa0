// Package report is the scorecard over a window of data that already
// exists, without probing anything: the records of the daemons' results
// logs (ReadLogs) or the histogram buckets and counters they pushed to
// VictoriaMetrics (VM). Each gives one card per region and target, plus
// the fleet's card (every region together), built by scorecard.BuildClasses
// with the same budgets, triage and verdict as check. Percentiles across
// runs come from the pooled per-run values or from the summed buckets,
// never from averaging per-run, per-host or per-region percentiles.
package report

import (
	"slices"
	"time"

	"github.com/streamprobe/streamprobe/probe"
	"github.com/streamprobe/streamprobe/scorecard"
)

// NoRegion is the region of records that carry none, read from a file
// given no region.
const NoRegion = "none"

// Filter selects the runs of a report. Zero values select everything.
type Filter struct {
	// Since and Until bound the window: runs started at or after Since and
	// before Until.
	Since, Until time.Time
	// Targets and Regions keep only these (empty: all).
	Targets, Regions []string
}

func (f Filter) keep(region, target string) bool {
	return (len(f.Targets) == 0 || slices.Contains(f.Targets, target)) &&
		(len(f.Regions) == 0 || slices.Contains(f.Regions, region))
}

// sampleOrder lists the samples present, in probe.SampleNames order, then
// any other (a sample a later version added) by name.
func sampleOrder(present map[string]bool) []string {
	var out []string
	for _, s := range probe.SampleNames {
		if present[s] {
			out = append(out, s)
		}
	}
	var rest []string
	for s := range present {
		if !slices.Contains(probe.SampleNames, s) {
			rest = append(rest, s)
		}
	}
	slices.Sort(rest)
	return append(out, rest...)
}

// drillOrder sorts drill names as probe.DrillNames does, unknown ones
// last by name.
func drillOrder(names []string) []string {
	idx := func(s string) int {
		if i := slices.Index(probe.DrillNames, s); i >= 0 {
			return i
		}
		return len(probe.DrillNames)
	}
	slices.SortFunc(names, func(a, b string) int {
		if d := idx(a) - idx(b); d != 0 {
			return d
		}
		if a < b {
			return -1
		}
		if a > b {
			return 1
		}
		return 0
	})
	return names
}

// order sorts cards: by target, each target's regions by name, then its
// fleet card.
func order(cards []*scorecard.Card) {
	slices.SortStableFunc(cards, func(a, b *scorecard.Card) int {
		switch {
		case a.Target != b.Target:
			if a.Target < b.Target {
				return -1
			}
			return 1
		case a.Fleet != b.Fleet:
			if b.Fleet {
				return -1
			}
			return 1
		case a.Region < b.Region:
			return -1
		case a.Region > b.Region:
			return 1
		}
		return 0
	})
}
