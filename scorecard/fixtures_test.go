package scorecard

import (
	"fmt"

	"github.com/streamprobe/streamprobe/dialect"
	"github.com/streamprobe/streamprobe/probe"
)

// run makes a deterministic run from chunk times, as the probe would
// reduce them.
func run(sample string, i int, outcome probe.Outcome, chunks []float64, end *float64, tokens int) Run {
	s := probe.Reduce(chunks, end)
	r := probe.Record{RequestID: fmt.Sprintf("%s-%02d", sample, i), Target: "api", Sample: sample, Dialect: "openai-chat",
		Drill: "none", Outcome: outcome, Chunks: len(chunks), TFCMs: s.TFC, TailMs: s.Tail, CloseMs: s.Close, Stalls: s.Stalls,
		Gaps: probe.Gaps{Count: len(s.Gaps), P50Ms: s.GapP50, P95Ms: s.GapP95, MaxMs: s.GapMax, Values: s.Gaps}}
	if tokens > 0 {
		r.Tokens = &dialect.Tokens{Prompt: 14, Completion: tokens}
	}
	return Run{Record: r, Chunks: chunks, End: end}
}

func shift(vals []float64, d float64) []float64 {
	out := make([]float64, len(vals))
	for i, v := range vals {
		out[i] = v + d
	}
	return out
}

func ptr(v float64) *float64 { return &v }

func deref(p *float64) any {
	if p == nil {
		return "default"
	}
	return *p
}

// withHeaders sets the headers time of a run, as a real run has it.
func withHeaders(r Run, at float64) Run {
	r.Record.HeadersMs = &at
	return r
}

// fixedCard: short is the article's worked example (one 259 ms stall per
// run) against a 100 ms gap budget; long streams evenly within budget;
// cancel has one run that failed; one drill found an off-by-one replay.
func fixedCard() *Card {
	worked := []float64{412, 452, 497, 541, 588, 634, 691, 950, 998, 1044}
	runs := map[string][]Run{}
	for i := range 5 {
		d := float64(i * 10)
		runs["short"] = append(runs["short"], run("short", i, probe.Success, shift(worked, d), ptr(1051+d), 10))
		var long []float64
		for k := range 40 {
			long = append(long, 900+float64(i*5)+float64(k*30))
		}
		runs["long"] = append(runs["long"], run("long", i, probe.Success, long, ptr(long[39]+5), 40))
		if i < 4 {
			runs["cancel"] = append(runs["cancel"], run("cancel", i, probe.ClientCancelled, long[:3], nil, 0))
		} else {
			runs["cancel"] = append(runs["cancel"], run("cancel", i, probe.UpstreamError, nil, nil, 0))
		}
	}
	drill := run("long", 0, probe.Success, []float64{100, 140, 180, 700, 740}, ptr(800), 0)
	drill.Record.Drill, drill.Record.RequestID, drill.Record.Resumed = "drop", "drill-00", true
	drill.Record.Verdict = probe.VerdictDuplicate
	drill.Record.ResumeDetail = "resume replayed id 3 again: off-by-one replay (sent Last-Event-ID: 3)"
	drill.Bands = []Band{{DropMs: 185, FirstChunkMs: 700, HandshakeMs: 510, Chunk: 3}}
	budgets := map[string]Budget{"short": {TFC: 600, Gap: 100, Tail: 2000}, "long": {TFC: 1500, Gap: 150, Tail: 30000}, "cancel": {TFC: 1500}}
	return Build("api", []string{"short", "long", "cancel"}, runs, []Run{drill}, budgets)
}

// duplicateCard has a duplicate drill's run as the probe records it: the
// server drops three times within 400 ms, and each reconnect is a band
// with its label.
func duplicateCard() *Card {
	r := run("long", 0, probe.Success, []float64{100, 140, 180, 300, 420, 540, 580}, ptr(600), 0)
	r.Record.Drill, r.Record.RequestID, r.Record.Resumed = "duplicate", "drill-dup", true
	r.Record.Verdict = probe.VerdictPass
	r.Bands = []Band{{DropMs: 185, FirstChunkMs: 300, HandshakeMs: 90, Chunk: 3}, {DropMs: 305, FirstChunkMs: 420, HandshakeMs: 95, Chunk: 4}, {DropMs: 425, FirstChunkMs: 540, HandshakeMs: 93, Chunk: 5}}
	return Build("api-sse", nil, nil, []Run{r}, nil)
}
