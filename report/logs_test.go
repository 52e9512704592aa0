package report

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/streamprobe/streamprobe/probe"
	"github.com/streamprobe/streamprobe/scorecard"
)

var update = flag.Bool("update", false, "rewrite the golden files")

var day = time.Date(2026, 12, 3, 0, 0, 0, 0, time.UTC)

// rec is a short run as the daemon logs it: the worked example's chunks
// shifted to start at tfc, at minute i of the day.
func rec(target, sample string, i int, tfc float64) probe.Record {
	worked := []float64{412, 452, 497, 541, 588, 634, 691, 950, 998, 1044}
	var chunks []float64
	for _, c := range worked {
		chunks = append(chunks, c-412+tfc)
	}
	end := chunks[len(chunks)-1] + 7
	s := probe.Reduce(chunks, &end)
	r := probe.Record{RequestID: fmt.Sprintf("%s-%s-%03d", target, sample, i), Target: target, Sample: sample, SampleVersion: sample + "-v1",
		Dialect: "openai-chat", Drill: "none", Outcome: probe.Success, Chunks: len(chunks), TFCMs: s.TFC, TailMs: s.Tail, CloseMs: s.Close,
		Stalls: s.Stalls, Gaps: probe.Gaps{Count: len(s.Gaps), P50Ms: s.GapP50, P95Ms: s.GapP95, MaxMs: s.GapMax, Values: s.Gaps},
		Tokens: &probe.Tokens{Prompt: 14, Completion: 10}, StartedAt: day.Add(time.Duration(i) * time.Minute).Format(time.RFC3339Nano)}
	return r
}

// writeLog writes lines (records, or raw strings) as a results log; a
// non-empty region is added to each record as a labelled daemon would.
func writeLog(t *testing.T, path, region string, lines ...any) {
	t.Helper()
	var b strings.Builder
	for _, l := range lines {
		switch v := l.(type) {
		case string:
			b.WriteString(v + "\n")
		case probe.Record:
			j, _ := json.Marshal(v)
			if region != "" {
				j = append([]byte(fmt.Sprintf(`{"region":%q,"host":"h1",`, region)), j[1:]...)
			}
			b.Write(append(j, '\n'))
		}
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// budgets: the worked example's one 259 ms gap per run is allowed, so the
// TFC budget decides; 550 ms lies between the mean of the regions' p95s
// (540) and the fleet's real p95 (580).
var budgets = map[string]scorecard.Budget{"short": {TFC: 550, Gap: 300, Tail: 2000, StallShare: ptr(1)}, "long": {TFC: 1500, Gap: 150, Tail: 30000}}

func ptr(v float64) *float64 { return &v }

// Two regions' logs: eu's records carry their region, us's file is given
// one. Ten short runs each (eu TFC 400..490 ms, us 500..590 ms), a drill
// run per region (us's found a duplicate), a run outside the window, a
// line that is no record and a run cut by a shutdown. The cards are
// compared whole with testdata/logs.golden.
func TestLogsCards(t *testing.T) {
	dir := t.TempDir()
	var eu, us []any
	for i := range 10 {
		eu = append(eu, rec("api", "short", i, 400+float64(i)*10))
		us = append(us, rec("api", "short", i, 500+float64(i)*10))
	}
	dEU := rec("api", "long", 20, 100)
	dEU.Drill, dEU.Resumed, dEU.Verdict, dEU.ResumeDetail = "drop", true, probe.VerdictPass, "resumed 1 time(s) from Last-Event-ID: 3; every event once, in order"
	dUS := dEU
	dUS.RequestID = "api-dup-us"
	dUS.Verdict, dUS.ResumeDetail = probe.VerdictDuplicate, "resume replayed id 3 again: off-by-one replay (sent Last-Event-ID: 3)"
	late := rec("api", "short", 60*25, 9000) // the next day: outside the window
	cut := rec("api", "short", 30, 100)
	cut.Error, cut.Outcome = "cancelled by shutdown", probe.ClientCancelled
	eu = append(eu, dEU, late, `{"truncated line`, cut)
	us = append(us, dUS)
	writeLog(t, filepath.Join(dir, "eu.jsonl"), "eu", eu...)
	writeLog(t, filepath.Join(dir, "us.jsonl"), "", us...)
	l, err := ReadLogs([]LogFile{{Path: filepath.Join(dir, "eu.jsonl")}, {Path: filepath.Join(dir, "us.jsonl"), Region: "us"}},
		Filter{Since: day, Until: day.Add(24 * time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	if l.Lines != 25 || l.Kept != 22 || l.Outside != 1 || l.Bad != 1 || l.Shutdown != 1 {
		t.Errorf("lines %d kept %d outside %d bad %d shutdown %d", l.Lines, l.Kept, l.Outside, l.Bad, l.Shutdown)
	}
	cards := l.Cards(budgets)
	var got strings.Builder
	for _, c := range cards {
		got.WriteString(c.Text(false, 0) + "\n")
	}
	const golden = "testdata/logs.golden"
	if *update {
		os.WriteFile(golden, []byte(got.String()), 0o644)
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got.String() != string(want) {
		t.Errorf("report differs from %s (go test ./report -update rewrites it):\n%s", golden, got.String())
	}
	if len(cards) != 3 || cards[0].Region != "eu" || cards[1].Region != "us" || !cards[2].Fleet {
		t.Fatalf("cards: want eu, us, fleet")
	}
	if !cards[0].Pass || cards[1].Pass || cards[2].Pass {
		t.Errorf("pass: eu %v us %v fleet %v; want only eu (us's TFC is over, its drill found a duplicate)", cards[0].Pass, cards[1].Pass, cards[2].Pass)
	}
	// The fleet's TFC is red from the pooled runs (p95 580 ms), where the
	// mean of the regions' p95s (540 ms) would have passed it.
	if !strings.Contains(got.String(), "short TFC: p95 580 ms over the 550 ms budget") {
		t.Error("the fleet's TFC cell is not red from the pooled runs")
	}
}

// The fleet's percentiles come from every run's value pooled, never from
// the mean of the regions' percentiles, which would say another number.
func TestFleetPercentilesArePooledNotAveraged(t *testing.T) {
	l := &Logs{Runs: map[string]map[string][]scorecard.Run{"eu": {}, "us": {}}}
	var pooled []float64
	for i := range 10 {
		a, b := 400+float64(i)*10, 500+float64(i)*10
		l.Runs["eu"]["api"] = append(l.Runs["eu"]["api"], scorecard.Run{Record: rec("api", "short", i, a)})
		l.Runs["us"]["api"] = append(l.Runs["us"]["api"], scorecard.Run{Record: rec("api", "short", i, b)})
		pooled = append(pooled, a, b)
	}
	cards := l.Cards(budgets)
	p95 := func(c *scorecard.Card) float64 {
		for _, ce := range c.Cells {
			if ce.Row == "tfc" {
				return *ce.P95
			}
		}
		t.Fatal("no tfc cell")
		return 0
	}
	eu, us, fleet := p95(cards[0]), p95(cards[1]), p95(cards[2])
	if eu != 490 || us != 590 {
		t.Fatalf("region p95s %v %v", eu, us)
	}
	// 20 pooled values 400..590: the nearest rank of 0.95 is the 19th, 580.
	if fleet != 580 {
		t.Errorf("fleet p95 %v, want 580 from the pooled values", fleet)
	}
	if avg := (eu + us) / 2; avg == fleet || avg > budgets["short"].TFC {
		t.Errorf("the average of the regions' p95s (%v) gives the same answer: the test proves nothing", avg)
	}
	if cards[2].Pass {
		t.Error("the fleet passed: its p95 TFC 580 ms is over the 550 ms budget")
	}
}
