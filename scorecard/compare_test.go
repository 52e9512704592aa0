package scorecard

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/streamprobe/streamprobe/internal/testenv/chromiumtest"
	"github.com/streamprobe/streamprobe/probe"
)

// sideOf is a side of 60 runs of the long sample: TFCs spread over
// 380..440 ms times scale, 10 gaps of 30..39 ms times scale, a tail, the
// first stalled runs stalled; drills as given.
func sideOf(name string, scale float64, stalled int, drills ...probe.Record) CompareSide {
	s := CompareSide{Name: name, Samples: []string{"long"}, Runs: map[string][]probe.Record{}, Drills: drills}
	for i := range 60 {
		tfc, tail := (380+float64(i%61))*scale, (1000+float64(i%37))*scale
		var gaps []float64
		for k := range 10 {
			gaps = append(gaps, (30+float64((i+k)%10))*scale)
		}
		r := probe.Record{RequestID: name + "-" + string(rune('a'+i%26)), Sample: "long", Outcome: probe.Success, TFCMs: &tfc, TailMs: &tail,
			Chunks: 11, Gaps: probe.Gaps{Values: gaps}}
		if i < stalled {
			r.Stalls = 1
		}
		s.Runs["long"] = append(s.Runs["long"], r)
	}
	return s
}

func drillRun(verdict probe.Verdict) probe.Record {
	return probe.Record{RequestID: "drill-" + string(verdict), Sample: "long", Drill: probe.DrillDrop, Outcome: probe.Success, Resumed: true, Verdict: verdict}
}

// A candidate 30% slower in every time is worse in every time's p50 and
// p95 beyond their margins (+10%, +20%), with the interval around +30%; the shares are the
// same; a drill that passes on the baseline and finds a duplicate on the
// candidate is a hard fail. The same data and seed give the same
// intervals.
func TestCompare(t *testing.T) {
	base := sideOf("base", 1, 3, drillRun(probe.VerdictPass))
	cand := sideOf("cand", 1.3, 3, drillRun(probe.VerdictDuplicate))
	c := Compare(base, cand, CompareOptions{Seed: 7})
	if c.Result != Fail || c.Pass || c.Comparisons != 9 || c.IntervalConfidence != 1-0.05/9 {
		t.Fatalf("result %s, %d comparisons at %g", c.Result, c.Comparisons, c.IntervalConfidence)
	}
	got := map[string]MetricChange{}
	for _, m := range c.Metrics {
		got[m.Metric] = m
	}
	for _, name := range []string{"tfc_p50", "tfc_p95", "gap_p50", "gap_p95", "tail_p50", "tail_p95"} {
		m := got[name]
		if m.Verdict != Worse || *m.Lo > 0.3+1e-9 || *m.Hi < 0.3-1e-9 || *m.Change < 0.29 || *m.Change > 0.31 {
			t.Errorf("%s: %s %+.3f [%+.3f, %+.3f], want worse around +30%%", name, m.Verdict, *m.Change, *m.Lo, *m.Hi)
		}
	}
	if m := got["tfc_p50"]; m.Method != "hodges-lehmann" || got["tfc_p95"].Method != "bootstrap" || got["gap_p50"].Method != "bootstrap" || got["stall_share"].Method != "exact" {
		t.Errorf("methods: %s, %s, %s, %s", m.Method, got["tfc_p95"].Method, got["gap_p50"].Method, got["stall_share"].Method)
	}
	if m := got["stall_share"]; *m.Change != 0 || m.Verdict == Worse || *m.PValue < 0.99 {
		t.Errorf("stall share %+v", m)
	}
	if len(c.HardFails) != 1 || !strings.Contains(c.HardFails[0], "drill drop: duplicate on the candidate (request_id drill-duplicate), never on the baseline") {
		t.Errorf("hard fails %q", c.HardFails)
	}
	again := Compare(base, cand, CompareOptions{Seed: 7})
	if *again.Metrics[1].Lo != *c.Metrics[1].Lo || *again.Metrics[1].Hi != *c.Metrics[1].Hi {
		t.Error("the same data and seed gave another bootstrap interval")
	}

	// Against itself nothing is worse, and the hard fail is gone.
	self := Compare(base, base, CompareOptions{Seed: 7})
	if self.Worse != 0 || len(self.HardFails) != 0 || self.Result == Fail {
		t.Errorf("the baseline against itself: %s", self.Verdict)
	}
	for _, m := range self.Metrics {
		if m.Verdict == Worse || m.Verdict == Better {
			t.Errorf("against itself %s is %s", m.Metric, m.Verdict)
		}
	}
}

// A change's verdict against its margin: worse over it, inconclusive
// across it, better under minus it, same otherwise.
func TestChangeVerdict(t *testing.T) {
	for _, c := range []struct {
		lo, hi, margin float64
		want           string
	}{
		{0.12, 0.30, 0.10, Worse},
		{0.05, 0.30, 0.10, Unknown},
		{-0.05, 0.08, 0.10, Same},
		{-0.30, 0.05, 0.10, Same},
		{-0.30, -0.12, 0.10, Better},
		{0.10, 0.10, 0.10, Same},
	} {
		if got := changeVerdict(c.lo, c.hi, c.margin); got != c.want {
			t.Errorf("[%g, %g] against %g: %s, want %s", c.lo, c.hi, c.margin, got, c.want)
		}
	}
}

// Every output of a comparison says what got worse, by how much and with
// its interval: the text first, JSON with the fields Argo Rollouts reads
// (result, pass), JUnit with a failure per worse metric and per hard
// fail, HTML with both distributions on one axis, rendered in Chromium.
func TestCompareOutputs(t *testing.T) {
	c := Compare(sideOf("base", 1, 3, drillRun(probe.VerdictPass)), sideOf("cand", 1.3, 3, drillRun(probe.VerdictDuplicate)), CompareOptions{Seed: 7})
	about := [][2]string{{"runs", "60 per sample and side"}}
	text := c.Text(false, about)
	for _, want := range []string{"streamprobe compare: FAIL (6 metric(s) worse, 1 resume verdict(s) failing on the candidate only",
		"\nworse (the whole interval over the margin)\n  long TFC p50: +30.0%, interval +2", "against the +10% margin (410 ms -> 533 ms; hodges-lehmann)",
		"resume verdicts failing on the candidate only (a hard fail)\n  drill drop: duplicate on the candidate", "  runs:       60 per sample and side\n",
		"verdict: FAIL (6 worse, "} {
		if !strings.Contains(text, want) {
			t.Errorf("text lacks %q:\n%s", want, text)
		}
	}
	b, _ := json.Marshal(c)
	var doc map[string]any
	json.Unmarshal(b, &doc)
	if doc["result"] != "FAIL" || doc["pass"] != false || doc["worse"] != 6.0 || doc["comparisons"] != 9.0 || len(doc["metrics"].([]any)) != 9 {
		t.Errorf("json %s", b)
	}
	m := doc["metrics"].([]any)[0].(map[string]any)
	for _, k := range []string{"sample", "metric", "unit", "baseline", "candidate", "change", "change_lo", "change_hi", "margin", "method", "verdict", "baseline_runs", "candidate_runs"} {
		if _, ok := m[k]; !ok {
			t.Errorf("a metric lacks %q: %v", k, m)
		}
	}
	var x bytes.Buffer
	if err := WriteCompareJUnit(&x, c, about); err != nil {
		t.Fatal(err)
	}
	var suites struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
	}
	if err := xml.Unmarshal(x.Bytes(), &suites); err != nil || suites.Tests != 10 || suites.Failures != 7 {
		t.Errorf("junit %d tests, %d failures (%v):\n%s", suites.Tests, suites.Failures, err, x.String())
	}

	chromiumtest.Bin(t)
	page := filepath.Join(t.TempDir(), "compare.html")
	var h bytes.Buffer
	if err := WriteCompareHTML(&h, c, about, time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(page, h.Bytes(), 0o644)
	dom := domWithoutConsole(t, "file://"+page)
	if !strings.Contains(dom, `<b class="fail">FAIL (6 metric(s) worse`) || !strings.Contains(dom, `<td class="worse">worse</td>`) {
		t.Errorf("no verdict or worse cell:\n%.2000s", dom)
	}
	plots := regexp.MustCompile(`<svg class="strip compare"[^>]*>`).FindAllString(dom, -1)
	if len(plots) != 3 {
		t.Fatalf("%d plots, want TFC, gap and tail of long", len(plots))
	}
	for _, p := range plots {
		if !strings.Contains(p, `data-ecdf-rendered="2"`) || !strings.Contains(p, `data-overlaps="0"`) || !strings.Contains(p, `data-outside="0"`) {
			t.Errorf("a plot without both sides' ECDFs, or with labels overlapping: %s", p)
		}
	}
	chromiumtest.Screenshot(t, "file://"+page, 1100, 1400, 10000)
}
