package scorecard

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/streamprobe/streamprobe/probe"
)

// The small-sample rule: a p95 needs 20 runs, a p50 2.
func TestSmallSampleRule(t *testing.T) {
	for _, tt := range []struct {
		runs int
		want string
	}{
		{0, ""},
		{1, "p50 and p95 on 1 run(s), fewer than the 2 a p50 and the 20 a p95 need"},
		{2, "p95 on 2 run(s), fewer than the 20 a p95 needs"},
		{19, "p95 on 19 run(s), fewer than the 20 a p95 needs"},
		{20, ""},
		{500, ""},
	} {
		if got := SmallSample(tt.runs); got != tt.want {
			t.Errorf("SmallSample(%d) = %q, want %q", tt.runs, got, tt.want)
		}
	}
}

// shortRuns are n runs of the worked example's short answer: TFC 412 ms,
// one 259 ms stall.
func shortRuns(n int) []Run {
	worked := []float64{412, 452, 497, 541, 588, 634, 691, 950, 998, 1044}
	var runs []Run
	for i := range n {
		runs = append(runs, run("short", i, probe.Success, worked, ptr(1051), 10))
	}
	return runs
}

// Under 20 runs every output notes the small sample; at 20 none does;
// the note never changes a mark or the verdict (the interval does: at 19
// runs a p95 has no upper bound, so the card is inconclusive, not red).
func TestSmallSampleNoteInEveryOutput(t *testing.T) {
	budgets := map[string]Budget{"short": {TFC: 600, Gap: 300, Tail: 2000, StallShare: ptr(1)}}
	outputs := func(n int) (text, js, junit, html string, c *Card) {
		c = Build("api", []string{"short"}, map[string][]Run{"short": shortRuns(n)}, nil, budgets)
		text = c.Text(false, n)
		b, _ := json.Marshal(c)
		var x, h bytes.Buffer
		WriteJUnitPage(&x, Page{Title: "streamprobe check"}, []*Card{c})
		WritePage(&h, Page{Title: "streamprobe check"}, []*Card{c})
		return text, string(b), x.String(), h.String(), c
	}
	const note = "p95 on 19 run(s), fewer than the 20 a p95 needs"
	text, js, junit, html, c := outputs(19)
	if c.Verdict != Inconclusive || len(c.RedCells()) > 0 {
		t.Errorf("19 runs within budget: %s, red %v, want inconclusive and nothing red:\n%s", c.Verdict, c.RedCells(), text)
	}
	for name, out := range map[string]string{
		"text":  "small samples (a note, not a verdict: the marks stand)\n    short: " + note + "\n",
		"json":  `"small_sample":"` + note + `"`,
		"junit": `<property name="small_sample.short" value="` + note + ` (a note, not a verdict: the marks stand)">`,
		"html":  "Small samples (a note, not a verdict: the marks stand): short: " + note,
	} {
		got := map[string]string{"text": text, "json": js, "junit": junit, "html": html}[name]
		if !strings.Contains(got, out) {
			t.Errorf("19 runs: %s lacks %q:\n%s", name, out, got)
		}
	}
	if n := strings.Count(js, `"small_sample"`); n != 5 {
		t.Errorf("%d cells with a small_sample note, want the 4 timing cells and the stall row", n)
	}
	text, js, junit, html, _ = outputs(20)
	for name, got := range map[string]string{"text": text, "json": js, "junit": junit, "html": html} {
		if i := strings.Index(strings.ToLower(got), "small sample"); i >= 0 {
			t.Errorf("20 runs: %s notes a small sample: %q", name, got[i:min(len(got), i+200)])
		}
	}
}
