package scorecard

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/streamprobe/streamprobe/probe"
)

// Drill is the result of one resume drill.
type Drill struct {
	Drill     string `json:"drill"`
	Verdict   string `json:"verdict"`
	Detail    string `json:"detail,omitempty"`
	Outcome   string `json:"outcome"`
	Error     string `json:"error,omitempty"`
	RequestID string `json:"request_id,omitempty"`
	Failed    bool   `json:"failed"`
	// Runs, FailedRuns and Verdicts sum up the runs of a drill over a
	// window (report); check has one run per drill and leaves them out.
	Runs       int            `json:"runs,omitempty"`
	FailedRuns int            `json:"failed_runs,omitempty"`
	Verdicts   map[string]int `json:"verdicts,omitempty"`
}

// DrillOf is the scorecard line of one drill run.
func DrillOf(r Run) Drill {
	rec := r.Record
	d := Drill{Drill: rec.Drill, Verdict: string(rec.Verdict), Detail: rec.ResumeDetail, Outcome: string(rec.Outcome),
		RequestID: rec.RequestID, Failed: !rec.Passed()}
	if !rec.Intended() {
		d.Error = rec.Error
	}
	return d
}

// SumDrill sums the runs of one drill over a window into one line: failed
// when any run failed, the verdict the most frequent failing one (else the
// most frequent), the detail, error and request id of the last run with
// that verdict.
func SumDrill(name string, runs []Run) Drill {
	sum := NewDrillSum(name)
	for i := range runs {
		sum.Add(runs[i].Record)
	}
	return sum.Drill()
}

// SumVerdicts is the line of a drill from counted verdicts (the
// metrics): runs, failed runs and runs by verdict ("none": failed before
// a verdict).
func SumVerdicts(name string, runs, failed int, verdicts map[string]int) Drill {
	d := Drill{Drill: name, Runs: runs, FailedRuns: failed, Failed: failed > 0, Verdicts: verdicts, Verdict: pickVerdict(verdicts)}
	d.Detail = fmt.Sprintf("%d of %d runs failed (%s)", failed, runs, verdictCounts(verdicts))
	return d
}

// DrillSum sums the runs of one drill over a window one record at a time,
// in memory bounded whatever the number of runs: counts per verdict, and
// per verdict the line of its last run and of its last failing run.
type DrillSum struct {
	name         string
	runs, failed int
	verdicts     map[string]int
	last         map[string]*[2]*Drill // per verdict: last run, last failing run
}

// NewDrillSum starts the sum of the drill name.
func NewDrillSum(name string) *DrillSum {
	return &DrillSum{name: name, verdicts: map[string]int{}, last: map[string]*[2]*Drill{}}
}

// Add counts one run of the drill.
func (s *DrillSum) Add(rec probe.Record) {
	s.runs++
	v := string(rec.Verdict)
	if v == "" {
		v = string(probe.VerdictNone)
	}
	v = Kind(s.verdicts, v)
	s.verdicts[v]++
	one := DrillOf(Run{Record: rec})
	l := s.last[v]
	if l == nil {
		l = &[2]*Drill{}
		s.last[v] = l
	}
	l[0] = &one
	if !rec.Passed() {
		s.failed++
		l[1] = &one
	}
}

// Drill is the drill's line: failed when any run failed, the verdict the
// most frequent failing one (else the most frequent), the detail, error
// and request id of the last run with that verdict (the last failing one
// when any failed).
func (s *DrillSum) Drill() Drill {
	d := Drill{Drill: s.name, Runs: s.runs, FailedRuns: s.failed, Failed: s.failed > 0, Verdicts: maps.Clone(s.verdicts)}
	d.Verdict = pickVerdict(d.Verdicts)
	if l := s.last[d.Verdict]; l != nil {
		one := l[0]
		if d.Failed {
			one = l[1]
		}
		if one != nil {
			d.Detail, d.Error, d.Outcome, d.RequestID = one.Detail, one.Error, one.Outcome, one.RequestID
		}
	}
	sum := fmt.Sprintf("%d of %d runs failed (%s)", d.FailedRuns, d.Runs, verdictCounts(d.Verdicts))
	if d.Detail != "" {
		sum += "; last: " + d.Detail
	}
	d.Detail = sum
	return d
}

// pickVerdict is the most frequent failing verdict (VerdictNone among
// them), else the most frequent, ties by name.
func pickVerdict(counts map[string]int) string {
	best, bestFailing := "", false
	for _, v := range slices.Sorted(maps.Keys(counts)) {
		failing := probe.Verdict(v).Failed()
		switch {
		case best == "", failing && !bestFailing, failing == bestFailing && counts[v] > counts[best]:
			best, bestFailing = v, failing
		}
	}
	return best
}

func verdictCounts(counts map[string]int) string {
	var parts []string
	for _, v := range slices.Sorted(maps.Keys(counts)) {
		parts = append(parts, fmt.Sprintf("%s %d", v, counts[v]))
	}
	return strings.Join(parts, ", ")
}
