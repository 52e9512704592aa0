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
	"maps"
	"slices"
	"time"

	"github.com/streamprobe/streamprobe/dialect"
	"github.com/streamprobe/streamprobe/probe"
	"github.com/streamprobe/streamprobe/scorecard"
	"github.com/streamprobe/streamprobe/textgate"
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
	// Known are the targets of the config: runs of any other target are
	// counted (Seen.Unknown) and skipped, unless AllTargets; nil knows
	// every target.
	Known      []string
	AllTargets bool
}

func (f Filter) keep(region, target string) bool {
	return (len(f.Targets) == 0 || slices.Contains(f.Targets, target)) &&
		(len(f.Regions) == 0 || slices.Contains(f.Regions, region))
}

// known reports whether target's runs make cards: a target of the config,
// or any target with AllTargets.
func (f Filter) known(target string) bool {
	return f.AllTargets || f.Known == nil || slices.Contains(f.Known, target)
}

// sampleOrder lists the samples present, in dialect.SampleNames order, then
// any other (a sample a later version added) by name.
func sampleOrder(present map[string]bool) []string {
	var out []string
	for _, s := range dialect.SampleNames {
		if present[s] {
			out = append(out, s)
		}
	}
	var rest []string
	for s := range present {
		if !slices.Contains(dialect.SampleNames, s) {
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

// Seen is what a report's data held: the start times of its first and
// last run (zero when the source cannot tell: VictoriaMetrics' buckets),
// and the hosts and regions of its runs, by name (at most MaxNames of
// each); and what was read but not judged.
type Seen struct {
	First, Last    time.Time
	Hosts, Regions []string
	// Unknown counts the runs (logs) or series (VictoriaMetrics) of
	// targets the config does not name, skipped; UnknownTargets how many
	// such targets (up to MaxNames, then it stops counting).
	Unknown, UnknownTargets int
	// Bad counts the values that are no count of runs (non-finite,
	// negative, or over 1e12: an overflowed or forged counter), never
	// judged; OverCap the series past the report's bounds (MaxClasses,
	// MaxBuckets), skipped.
	Bad, OverCap int
}

// MaxNames bounds the names a Seen keeps of each kind (hosts, regions,
// unknown targets).
const MaxNames = 1000

// seen collects a Seen as runs are read.
type seen struct {
	first, last    time.Time
	hosts, regions map[string]bool
	unknownNames   map[string]bool
	Seen
}

func newSeen() seen {
	return seen{hosts: map[string]bool{}, regions: map[string]bool{}, unknownNames: map[string]bool{}}
}

// unknown counts a run or series of a target the config does not name.
func (s *seen) unknown(target string) {
	s.Unknown++
	if len(s.unknownNames) < MaxNames {
		s.unknownNames[target] = true
	}
}

// add notes a run kept: its start (zero: unknown), host ("" none) and
// region.
func (s *seen) add(at time.Time, host, region string) {
	if !at.IsZero() {
		if s.first.IsZero() || at.Before(s.first) {
			s.first = at
		}
		if at.After(s.last) {
			s.last = at
		}
	}
	if host != "" && len(s.hosts) < MaxNames {
		s.hosts[host] = true
	}
	if region != "" && len(s.regions) < MaxNames {
		s.regions[region] = true
	}
}

func (s *seen) result() Seen {
	r := s.Seen
	r.First, r.Last = s.first, s.last
	r.Hosts, r.Regions = slices.Sorted(maps.Keys(s.hosts)), slices.Sorted(maps.Keys(s.regions))
	r.UnknownTargets = len(s.unknownNames)
	return r
}

// ShownURL is a URL as a report may show it: without its user
// information (credentials), query or fragment (textgate.RedactURL).
func ShownURL(raw string) string { return textgate.RedactURL(raw) }
