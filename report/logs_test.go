package report

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/streamprobe/streamprobe/dialect"
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
		Tokens: &dialect.Tokens{Prompt: 14, Completion: 10}, StartedAt: day.Add(time.Duration(i) * time.Minute).Format(time.RFC3339Nano)}
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
	l, err := ReadLogs(context.Background(), []LogFile{{Path: filepath.Join(dir, "eu.jsonl")}, {Path: filepath.Join(dir, "us.jsonl"), Region: "us"}},
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
	// What the kept runs cover: the first and last start time (the late
	// run and the one cut by a shutdown are not kept), the hosts and the
	// regions.
	seen := l.Seen()
	if !seen.First.Equal(day) || !seen.Last.Equal(day.Add(20*time.Minute)) || !slices.Equal(seen.Hosts, []string{"h1"}) || !slices.Equal(seen.Regions, []string{"eu", "us"}) {
		t.Errorf("seen %+v, want first 00:00, last 00:20, hosts h1, regions eu, us", seen)
	}
	if len(cards) != 3 || cards[0].Region != "eu" || cards[1].Region != "us" || !cards[2].Fleet {
		t.Fatalf("cards: want eu, us, fleet")
	}
	if cards[0].Verdict != "INCONCLUSIVE" || cards[1].Verdict != "FAIL" || cards[2].Verdict != "FAIL" {
		t.Errorf("verdicts: eu %s us %s fleet %s; want eu inconclusive (10 runs bound no p95 from above), us and the fleet failed (us's TFC is over, its drill found a duplicate)", cards[0].Verdict, cards[1].Verdict, cards[2].Verdict)
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
	l := newLogs()
	var pooled []float64
	for i := range 10 {
		a, b := 400+float64(i)*10, 500+float64(i)*10
		l.add("eu", rec("api", "short", i, a))
		l.add("us", rec("api", "short", i, b))
		pooled = append(pooled, a, b)
	}
	cards := l.Cards(budgets)
	p95 := func(c *scorecard.Card) float64 {
		for _, ce := range c.Cells {
			if ce.Row == "tfc" {
				return *ce.Timing.P95
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
	if want := pct95(pooled); fleet != want || want != 580 {
		t.Errorf("fleet p95 %v, want %v from the pooled values (580)", fleet, want)
	}
	if avg := (eu + us) / 2; avg == fleet || avg > budgets["short"].TFC {
		t.Errorf("the average of the regions' p95s (%v) gives the same answer: the test proves nothing", avg)
	}
	if cards[2].Pass {
		t.Error("the fleet passed: its p95 TFC 580 ms is over the 550 ms budget")
	}
}

// A line of any length never aborts the log: one over MaxLine (a 50 MB
// line, in the middle or last without its newline) is skipped and counted,
// and every other record is reported; a line of exactly MaxLine bytes is
// read; a last line without a newline and an empty file are read as such.
func TestLogsLinesOfAnyLength(t *testing.T) {
	record := func(i int) string {
		j, _ := json.Marshal(rec("api", "short", i, 400+float64(i)*10))
		return string(j)
	}
	// padded is a record of exactly n bytes: its request id fills it.
	padded := func(n int) string {
		r := rec("api", "short", 99, 900)
		j, _ := json.Marshal(r)
		r.RequestID += strings.Repeat("x", n-len(j))
		j, _ = json.Marshal(r)
		return string(j)
	}
	huge := `{"request_id":"` + strings.Repeat("i", 50<<20) + `","target":"api"}`
	for _, tt := range []struct {
		name                       string
		text                       string
		lines, kept, bad, oversize int
		first                      string
	}{
		{"50 MB line in the middle", record(0) + "\n" + record(1) + "\n" + huge + "\n" + record(2) + "\n" + record(3) + "\n", 5, 4, 0, 1, "line 3"},
		{"50 MB last line without newline", record(0) + "\n" + record(1) + "\n" + huge, 3, 2, 0, 1, "line 3"},
		{"one byte over the limit", padded(MaxLine+1) + "\n" + record(0) + "\n", 2, 1, 0, 1, "line 1"},
		{"at the limit", padded(MaxLine) + "\n" + record(0) + "\n", 2, 2, 0, 0, ""},
		{"last line without newline", record(0) + "\n" + record(1), 2, 2, 0, 0, ""},
		{"last line cut short", record(0) + "\n" + record(1)[:40], 2, 1, 1, 0, ""},
		{"empty lines", "\n" + record(0) + "\n\n", 3, 1, 2, 0, ""},
		{"empty file", "", 0, 0, 0, 0, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "results.jsonl")
			if err := os.WriteFile(path, []byte(tt.text), 0o644); err != nil {
				t.Fatal(err)
			}
			l, err := ReadLogs(context.Background(), []LogFile{{Path: path}}, Filter{})
			if err != nil {
				t.Fatalf("ReadLogs: %v", err)
			}
			if l.Lines != tt.lines || l.Kept != tt.kept || l.Bad != tt.bad || l.Oversized != tt.oversize {
				t.Errorf("lines %d kept %d bad %d oversized %d, want %d %d %d %d", l.Lines, l.Kept, l.Bad, l.Oversized, tt.lines, tt.kept, tt.bad, tt.oversize)
			}
			if want := path + " " + tt.first; tt.first != "" && l.FirstOversized != want || tt.first == "" && l.FirstOversized != "" {
				t.Errorf("first oversized %q, want %q", l.FirstOversized, want)
			}
			if tt.kept == 0 {
				return
			}
			cards := l.Cards(budgets)
			if len(cards) != 1 || cards[0].Cells[0].N != tt.kept {
				t.Fatalf("cards %d, want one with %d runs", len(cards), tt.kept)
			}
			for _, id := range cards[0].RequestIDs["short"] {
				if len(id) > MaxText {
					t.Errorf("a request id of %d bytes is kept, over MaxText", len(id))
				}
			}
		})
	}
}

// heapAfter is the live heap, in bytes, that reading path leaves behind.
func heapAfter(t *testing.T, path string) int64 {
	t.Helper()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	l, err := ReadLogs(context.Background(), []LogFile{{Path: path, Region: "eu"}}, Filter{})
	if err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(l)
	return int64(after.HeapAlloc) - int64(before.HeapAlloc)
}

// Reading ten times the runs keeps no more memory: the runs are folded as
// their lines are read, not kept (each kept run cost about 1 KB: 27,000
// more runs were 30 MB more heap).
func TestReadLogsMemoryDoesNotGrow(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, n int) string {
		var recs []any
		for i := range n {
			recs = append(recs, rec("api", []string{"short", "long"}[i%2], i, 300+float64(i%1000)))
		}
		p := filepath.Join(dir, name)
		writeLog(t, p, "", recs...)
		return p
	}
	const n = 3_000
	small, big := write("small.jsonl", n), write("big.jsonl", 10*n)
	hs, hb := heapAfter(t, small), heapAfter(t, big)
	t.Logf("heap left by %d runs: %d KiB; by %d runs: %d KiB", n, hs>>10, 10*n, hb>>10)
	if hb-hs > 6<<20 {
		t.Errorf("%d more runs left %d KiB more heap: memory grows with the runs", 9*n, (hb-hs)>>10)
	}
}

// A URL as a report shows it: no credentials, query or fragment.
func TestShownURL(t *testing.T) {
	for in, want := range map[string]string{
		"http://victoria:8428": "http://victoria:8428",
		"https://user:s3cret@vm.example/select/0/prometheus?x=tok#f": "https://vm.example/select/0/prometheus",
		"http://%zz": "(an unparsable URL)",
	} {
		if got := ShownURL(in); got != want {
			t.Errorf("ShownURL(%q) = %q, want %q", in, got, want)
		}
	}
}

// A query error names the VictoriaMetrics URL as ShownURL does: no user,
// password or query parameter (a token there) in the message.
func TestQueryErrorShowsNoCredentials(t *testing.T) {
	v := VM{URL: "http://user:pw@127.0.0.1:1/?tok=abc"}
	_, err := queryAll(v, "up")
	if err == nil {
		t.Fatal("no error from a closed port")
	}
	for _, s := range []string{"tok", "abc", "pw", "user"} {
		if strings.Contains(err.Error(), s) {
			t.Errorf("error shows %q: %v", s, err)
		}
	}
}

// A refused run read back from a results log keeps its outcome and
// finish reason (as the daemon wrote them) and reddens the report's
// outcomes row, named.
func TestLogsRefusedRuns(t *testing.T) {
	dir := t.TempDir()
	ok, refused := rec("api", "short", 1, 400), rec("api", "short", 2, 400)
	refused.Outcome, refused.FinishReason = probe.Refused, dialect.FinishContentFilter
	refused.Error = "refused: the provider's filter stopped the answer (finishReason SAFETY)"
	writeLog(t, filepath.Join(dir, "eu.jsonl"), "eu", ok, refused)
	l, err := ReadLogs(context.Background(), []LogFile{{Path: filepath.Join(dir, "eu.jsonl")}}, Filter{Since: day, Until: day.Add(24 * time.Hour)})
	if err != nil || l.Kept != 2 {
		t.Fatalf("kept %v, %v", l, err)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "eu.jsonl"))
	if !strings.Contains(string(b), `"outcome":"refused"`) || !strings.Contains(string(b), `"finish_reason":"content_filter"`) {
		t.Fatalf("the log line: %s", b)
	}
	cards := l.Cards(budgets)
	if len(cards) == 0 || cards[0].Pass {
		t.Fatalf("%d cards, the first passes: a refused run must fail it", len(cards))
	}
	out := cards[0].Text(false, 0)
	if !strings.Contains(out, "success 1, refused 1") || !strings.Contains(out, "finishReason SAFETY") {
		t.Errorf("the report does not show the refused run:\n%s", out)
	}
}
