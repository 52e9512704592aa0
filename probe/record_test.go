package probe

import "testing"

// Intended judges the outcome against the sample; Passed adds the resume
// verdict. One table for the rule every sink uses.
func TestIntendedAndPassed(t *testing.T) {
	for _, tc := range []struct {
		name             string
		r                Record
		intended, passed bool
	}{
		{"short success", Record{Sample: "short", Outcome: Success, Chunks: 10}, true, true},
		{"long upstream error", Record{Sample: "long", Outcome: UpstreamError, Chunks: 3}, false, false},
		{"long cancelled (shutdown)", Record{Sample: "long", Outcome: ClientCancelled, Chunks: 3}, false, false},
		{"cancel sample cancelled after chunks", Record{Sample: "cancel", Outcome: ClientCancelled, Chunks: 3}, true, true},
		{"cancel sample cancelled before any chunk", Record{Sample: "cancel", Outcome: ClientCancelled}, false, false},
		{"cancel sample ran to the end: the cancel was not exercised", Record{Sample: "cancel", Outcome: Success, Chunks: 3}, false, false},
		{"drill pass", Record{Sample: "long", Drill: DrillDrop, Outcome: Success, Verdict: VerdictPass}, true, true},
		{"drill stale_ok", Record{Sample: "long", Drill: DrillStale, Outcome: Success, Verdict: VerdictStaleOK}, true, true},
		{"drill not_stale: the given id was not stale, not a bug of the server", Record{Sample: "long", Drill: DrillStale, Outcome: Success, Verdict: VerdictNotStale}, true, true},
		{"drill not_supported", Record{Sample: "long", Drill: DrillDrop, Outcome: Success, Verdict: VerdictNotSupported}, true, true},
		{"drill duplicate: measured, but a bug", Record{Sample: "long", Drill: DrillDrop, Outcome: Success, Verdict: VerdictDuplicate}, true, false},
		{"drill not_exercised", Record{Sample: "long", Drill: DrillDrop, Outcome: Success, Verdict: VerdictNotExercised}, true, false},
		{"drill with no verdict after a 5xx", Record{Sample: "long", Drill: DrillDrop, Outcome: UpstreamError}, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.r.Intended(); got != tc.intended {
				t.Errorf("Intended() = %v, want %v", got, tc.intended)
			}
			if got := tc.r.Passed(); got != tc.passed {
				t.Errorf("Passed() = %v, want %v", got, tc.passed)
			}
		})
	}
}
