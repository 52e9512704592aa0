package scorecard

import (
	"bytes"
	"encoding/xml"
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/streamprobe/streamprobe/probe"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// run makes a deterministic run from chunk times, as the probe would
// reduce them.
func run(sample string, i int, outcome probe.Outcome, chunks []float64, end *float64, tokens int) Run {
	s := probe.Reduce(chunks, end)
	r := probe.Record{RequestID: fmt.Sprintf("%s-%02d", sample, i), Target: "api", Sample: sample, Dialect: "openai-chat",
		Drill: "none", Outcome: outcome, Chunks: len(chunks), TFCMs: s.TFC, TailMs: s.Tail, CloseMs: s.Close, Stalls: s.Stalls,
		Gaps: probe.Gaps{Count: len(s.Gaps), P50Ms: s.GapP50, P95Ms: s.GapP95, MaxMs: s.GapMax, Values: s.Gaps}}
	if tokens > 0 {
		r.Tokens = &probe.Tokens{Prompt: 14, Completion: tokens}
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

func TestTextGolden(t *testing.T) {
	got := fixedCard().Text(false, 5)
	const golden = "testdata/card.golden"
	if *update {
		os.WriteFile(golden, []byte(got), 0o644)
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("scorecard text differs from %s (go test ./scorecard -update rewrites it):\n%s", golden, got)
	}
}

func TestCellsAndVerdict(t *testing.T) {
	c := fixedCard()
	if c.Pass {
		t.Fatal("card passed with a red cell and a failing drill")
	}
	var red []string
	for _, ce := range c.RedCells() {
		red = append(red, ce.Sample+"/"+ce.Row)
	}
	// The worked example's one stall per run: every short run stalled,
	// over the default 5% stall-share budget.
	if strings.Join(red, " ") != "short/gap short/stall_share cancel/outcomes" {
		t.Errorf("red cells %v", red)
	}
	g := c.cell("gap", "short")
	// 45 gaps pooled from 5 runs, each with one 259 ms stall: p95 is the
	// stall, p50 a normal gap.
	if g.N != 45 || *g.P50 != 46 || *g.P95 != 259 {
		t.Errorf("short gap cell %+v", g)
	}
	if tfc := c.cell("tfc", "short"); *tfc.P50 != 432 || *tfc.P95 != 452 {
		t.Errorf("short TFC p50/p95 %v/%v, want 432/452 (raw per-run TFCs 412..452)", *tfc.P50, *tfc.P95)
	}
	if tfc := c.cell("tfc", "cancel"); tfc.N != 4 {
		t.Errorf("the failed cancel run entered the TFC cell: n = %d", tfc.N)
	}
	if s := c.cell("stall_share", "short"); *s.Share != 1 {
		t.Errorf("stall share %v", *s.Share)
	}
}

func TestJUnit(t *testing.T) {
	var b bytes.Buffer
	if err := WriteJUnit(&b, []*Card{fixedCard()}); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		XMLName  xml.Name `xml:"testsuites"`
		Tests    int      `xml:"tests,attr"`
		Failures int      `xml:"failures,attr"`
		Suites   []struct {
			Tests    int `xml:"tests,attr"`
			Failures int `xml:"failures,attr"`
			Cases    []struct {
				Name    string `xml:"name,attr"`
				Failure *struct {
					Message string `xml:"message,attr"`
				} `xml:"failure"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatalf("not XML: %v\n%s", err, b.String())
	}
	// 3 classes x 7 rows + 1 drill; failures: short gap, short stall
	// share, cancel outcomes, the drill.
	if doc.Tests != 22 || doc.Failures != 4 || len(doc.Suites) != 1 || len(doc.Suites[0].Cases) != 22 {
		t.Fatalf("tests %d failures %d suites %d", doc.Tests, doc.Failures, len(doc.Suites))
	}
	var msgs []string
	for _, c := range doc.Suites[0].Cases {
		if c.Failure != nil {
			msgs = append(msgs, c.Name+": "+c.Failure.Message)
		}
	}
	want := []string{"short gap: p95 259 ms over the 100 ms budget",
		"short stalled >250ms: 5 of 5 runs stalled over 250 ms (100%), over the 5% budget", "cancel outcomes: 1 of 5 runs did not end as the cancel sample should; 1 like this one: upstream_error (request_id cancel-04)",
		"drill drop: resume replayed id 3 again: off-by-one replay (sent Last-Event-ID: 3)"}
	if strings.Join(msgs, "|") != strings.Join(want, "|") {
		t.Errorf("failures %q", msgs)
	}
}

// withHeaders sets the headers time of a run, as a real run has it.
func withHeaders(r Run, at float64) Run {
	r.Record.HeadersMs = &at
	return r
}

// One burst after a late first chunk (headers at 5 ms, TFC 900 ms): named
// as buffering, with one burst, and triage step 2 blames no model.
func TestBufferingNamed(t *testing.T) {
	var runs []Run
	for i := range 3 {
		chunks := []float64{900, 900.2, 900.3, 900.5, 900.6}
		runs = append(runs, withHeaders(run("short", i, probe.Success, chunks, ptr(901), 0), 5))
	}
	c := Build("api", []string{"short"}, map[string][]Run{"short": runs}, nil, map[string]Budget{"short": {TFC: 600}})
	triage := strings.Join(c.Triage, "\n")
	if !strings.Contains(triage, "suspected proxy buffering in 3 of 3 runs: one burst per run (p50): the chunks came together, gaps under 2 ms inside them") {
		t.Errorf("triage %q", c.Triage)
	}
	if !strings.Contains(triage, "no token counts") {
		t.Errorf("triage lacks the token check: %q", c.Triage)
	}
	if strings.Contains(triage, "slow model") {
		t.Errorf("triage blames a slow model for near-zero gaps: %q", c.Triage)
	}
	if b := c.cell("buffering", "short"); !b.Over || b.Suspected != 3 {
		t.Errorf("buffering cell %+v", b)
	}
}

// Behind a proxy that holds each answer whole, headers included, both
// classes come in one burst with a flat, high TFC: step 3 of the triage
// names the buffering, not "queueing or buffering"; without the buffering
// row red it keeps the open reading.
func TestTriageNamesBufferingForAFlatTFC(t *testing.T) {
	held := func(sample string, i int, at float64, n int) Run {
		chunks := make([]float64, n)
		for k := range chunks {
			chunks[k] = at + float64(k)*0.01
		}
		return withHeaders(run(sample, i, probe.Success, chunks, ptr(at+1), 0), at)
	}
	even := func(sample string, i int, at float64, n int) Run {
		chunks := make([]float64, n)
		for k := range chunks {
			chunks[k] = at + float64(k)*30
		}
		return withHeaders(run(sample, i, probe.Success, chunks, ptr(chunks[n-1]+1), 0), 2)
	}
	budgets := map[string]Budget{"short": {TFC: 600}, "long": {TFC: 600}}
	step3 := func(mk func(string, int, float64, int) Run) (string, *Card) {
		runs := map[string][]Run{}
		for i := range 3 {
			runs["short"] = append(runs["short"], mk("short", i, 1050, 10))
			runs["long"] = append(runs["long"], mk("long", i, 1250, 40))
		}
		c := Build("api", []string{"short", "long"}, runs, nil, budgets)
		for _, l := range c.Triage {
			if strings.HasPrefix(l, "short, 3.") {
				return l, c
			}
		}
		return "", c
	}
	got, c := step3(held)
	if !strings.Contains(got, "flat across prompt sizes; suspected proxy buffering (see the buffering row)") || strings.Contains(got, "queueing") {
		t.Errorf("held answers, triage step 3 %q", got)
	}
	for _, s := range []string{"short", "long"} {
		if b := c.cell("buffering", s); !b.Over || *b.BurstsP50 != 1 {
			t.Errorf("%s buffering cell %+v", s, b)
		}
	}
	if got, _ := step3(even); !strings.Contains(got, "flat across prompt sizes; if high, queueing or buffering") {
		t.Errorf("evenly streamed answers, triage step 3 %q", got)
	}
}

// The finding of issue 11: 100 chunks in 4 bursts split by 1.4 s freezes,
// in every run. Gap p95 is near zero (3 of 99 gaps are freezes), yet the
// stall share and the buffering row are red, with 4 bursts, and step 2 of
// the triage points at the bursts, not at a slow model.
func TestFreezesInEveryRunAreRed(t *testing.T) {
	var runs []Run
	for i := range 5 {
		var chunks []float64
		for b := range 4 {
			for k := range 25 {
				chunks = append(chunks, 300+float64(b)*1400+float64(k)*0.05)
			}
		}
		runs = append(runs, withHeaders(run("long", i, probe.Success, chunks, ptr(chunks[99]+0.1), 0), 2))
	}
	c := Build("api", []string{"long"}, map[string][]Run{"long": runs}, nil, map[string]Budget{"long": {TFC: 1500, Gap: 150, Tail: 30000}})
	if c.Pass {
		t.Fatal("passed")
	}
	if g := c.cell("gap", "long"); g.Over || *g.P95 > 1 {
		t.Errorf("gap cell %+v: the freezes should hide in the p95", g)
	}
	st := c.cell("stall_share", "long")
	if !st.Over || *st.Share != 1 || !strings.Contains(st.Why, "5 of 5 runs stalled") {
		t.Errorf("stall share cell %+v", st)
	}
	b := c.cell("buffering", "long")
	if !b.Over || b.Suspected != 5 || *b.BurstsP50 != 4 || *b.FreezeMaxMs < 1398 {
		t.Errorf("buffering cell %+v", b)
	}
	text := c.Text(false, 5)
	for _, want := range []string{"buffering       5 of 5 runs, 4 bursts FAIL", "100% of 5 runs (<= 5%) OVER", "4 burst(s) per run (p50) split by freezes up to 1399 ms"} {
		if !strings.Contains(text, want) {
			t.Errorf("text lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "slow model") || !strings.Contains(text, "not the model") {
		t.Errorf("triage step 2 must not blame a slow model for 0 ms gaps:\n%s", text)
	}
}

// The stall-share budget is per class: nil is the default 5%, 1 turns it
// off, 0 allows no stalled run; the share is over when it exceeds it.
func TestStallShareBudget(t *testing.T) {
	stalled := []float64{100, 140, 500, 540}
	smooth := []float64{100, 140, 180, 220}
	mk := func(n int) []Run {
		var runs []Run
		for i := range 4 {
			ch := smooth
			if i < n {
				ch = stalled
			}
			runs = append(runs, run("short", i, probe.Success, ch, nil, 0))
		}
		return runs
	}
	f := func(stalledRuns int, budget *float64, over bool) {
		t.Helper()
		c := Build("api", []string{"short"}, map[string][]Run{"short": mk(stalledRuns)}, nil, map[string]Budget{"short": {StallShare: budget}})
		ce := c.cell("stall_share", "short")
		if ce.Over != over || c.Pass == over {
			t.Errorf("%d of 4 stalled, budget %v: over %v, pass %v (%s)", stalledRuns, deref(budget), ce.Over, c.Pass, ce.Why)
		}
	}
	f(0, nil, false)
	f(1, nil, true)
	f(4, ptr(1), false)
	f(1, ptr(0.25), false)
	f(2, ptr(0.25), true)
	f(1, ptr(0), true)
}

func deref(p *float64) any {
	if p == nil {
		return "default"
	}
	return *p
}

// A red TFC that is mostly DNS+TCP+TLS is named as such in triage step 3;
// one that is mostly the server's own wait is not.
func TestTriageNamesAConnectionDominatedTFC(t *testing.T) {
	for _, tt := range []struct {
		name      string
		connect   float64
		dominated bool
	}{
		{"slow TLS handshake", 400, true},
		{"slow model", 5, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var runs []Run
			for i := range 5 {
				r := run("short", i, probe.Success, []float64{600, 640, 680}, ptr(700), 0)
				r.Record.ConnectMs, r.Record.TLSMs = ptr(tt.connect/4), ptr(tt.connect*3/4)
				runs = append(runs, r)
			}
			c := Build("api", []string{"short"}, map[string][]Run{"short": runs}, nil, map[string]Budget{"short": {TFC: 500}})
			step3 := ""
			for _, l := range c.Triage {
				if strings.HasPrefix(l, "short, 3.") {
					step3 = l
				}
			}
			want := fmt.Sprintf("connection setup (DNS+TCP+TLS) p50 %s of TFC p50 %s", msText(tt.connect), msText(600))
			if !strings.Contains(step3, want) || strings.Contains(step3, "dominated by connecting") != tt.dominated {
				t.Errorf("triage step 3 %q", step3)
			}
		})
	}
}

// A record read back from a file may hold anything: the text card shows
// its drill details, errors and names with control characters made
// visible, never as bytes a terminal acts on.
func TestTextShowsNoControlCharacters(t *testing.T) {
	evil := "id 7\x1b]0;pwned\x07\x1b[2J\u202e"
	drill := Run{Record: probe.Record{Target: "t\x1b[2J", Sample: "long", Drill: probe.DrillDuplicate, Outcome: probe.UpstreamError,
		Error: "boom " + evil, Verdict: probe.Verdict("dup\x1b[31m"), ResumeDetail: "resume replayed " + evil, RequestID: "r1"}}
	short := Run{Record: probe.Record{Target: "t\x1b[2J", Sample: "short", Outcome: probe.UpstreamError, Error: "bad " + evil, RequestID: "r2"}}
	c := Build("t\x1b[2J", []string{"short"}, map[string][]Run{"short": {short}}, []Run{drill}, nil)
	out := c.Text(false, 1)
	if strings.ContainsAny(out, "\x1b\x07\u202e") {
		t.Errorf("the card holds control characters:\n%q", out)
	}
	if !strings.Contains(out, `\x1b]0;pwned\x07`) {
		t.Errorf("the sequence is not shown visibly:\n%s", out)
	}
}
