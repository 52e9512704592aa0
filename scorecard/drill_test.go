package scorecard

import (
	"fmt"
	"testing"

	"github.com/streamprobe/streamprobe/probe"
)

// A drill summed one run at a time: the most frequent failing verdict,
// the detail of its last failing run; without failures the most frequent
// verdict and the detail of its last run; SumDrill says the same.
func TestDrillSum(t *testing.T) {
	r := func(v probe.Verdict, detail string) probe.Record {
		return probe.Record{RequestID: detail, Sample: "long", Drill: "drop", Outcome: probe.Success, Verdict: v, ResumeDetail: detail}
	}
	for _, tt := range []struct {
		name string
		runs []probe.Record
		want Drill
	}{
		{"failing", []probe.Record{r(probe.VerdictPass, "p1"), r(probe.VerdictDuplicate, "d1"), r(probe.VerdictPass, "p2"), r(probe.VerdictDuplicate, "d2"), r(probe.VerdictPass, "p3")},
			Drill{Drill: "drop", Verdict: "duplicate", Detail: "2 of 5 runs failed (duplicate 2, pass 3); last: d2", Outcome: "success", RequestID: "d2", Failed: true,
				Runs: 5, FailedRuns: 2, Verdicts: map[string]int{"duplicate": 2, "pass": 3}}},
		{"passing", []probe.Record{r(probe.VerdictPass, "p1"), r(probe.VerdictPass, "p2")},
			Drill{Drill: "drop", Verdict: "pass", Detail: "0 of 2 runs failed (pass 2); last: p2", Outcome: "success", RequestID: "p2",
				Runs: 2, Verdicts: map[string]int{"pass": 2}}},
	} {
		s := NewDrillSum("drop")
		var runs []Run
		for _, rec := range tt.runs {
			s.Add(rec)
			runs = append(runs, Run{Record: rec})
		}
		got, old := s.Drill(), SumDrill("drop", runs)
		if fmt.Sprint(got) != fmt.Sprint(tt.want) || fmt.Sprint(old) != fmt.Sprint(tt.want) {
			t.Errorf("%s:\n got %+v\nwant %+v\nSumDrill %+v", tt.name, got, tt.want, old)
		}
	}
}
