package scorecard

import (
	"fmt"
	"strings"
	"testing"

	"github.com/streamprobe/streamprobe/probe"
)

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
	if b := c.cell("buffering", "short"); !b.Over || b.Buffering.Suspected != 3 {
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
		if b := c.cell("buffering", s); !b.Over || *b.Buffering.BurstsP50 != 1 {
			t.Errorf("%s buffering cell %+v", s, b)
		}
	}
	if got, _ := step3(even); !strings.Contains(got, "flat across prompt sizes; if high, queueing or buffering") {
		t.Errorf("evenly streamed answers, triage step 3 %q", got)
	}
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

// Step 3 of the triage compares the TFC of the classes by the size of
// their samples' prompts, whatever the samples are called and wherever
// their columns stand: the largest prompt's p50 against the smallest's.
func TestTriageComparesPromptSizesNotNames(t *testing.T) {
	class := func(name string, prompt int, tfc float64) Class {
		var runs []Run
		for i := range 3 {
			runs = append(runs, run(name, i, probe.Success, []float64{tfc, tfc + 40, tfc + 80}, ptr(tfc+90), 0))
		}
		cl := ClassOf(name, runs)
		cl.PromptSize = prompt
		return cl
	}
	step3 := func(classes ...Class) string {
		t.Helper()
		budgets := map[string]Budget{}
		for _, cl := range classes {
			budgets[cl.Sample] = Budget{TFC: 100}
		}
		c := BuildClasses("api", classes, nil, budgets)
		for _, l := range c.Triage {
			if strings.HasPrefix(l, classes[0].Sample+", 3.") {
				return l
			}
		}
		t.Fatalf("no step 3 in %q", c.Triage)
		return ""
	}
	unmeasured := ClassOf("essay", nil)
	unmeasured.PromptSize = 4000
	for _, tt := range []struct {
		name    string
		classes []Class
		want    string
	}{
		{"other names", []Class{class("brief", 40, 400), class("essay", 4000, 1200)},
			"essay p50 1200 ms vs brief p50 400 ms (x3.00): TFC tracks prompt length, a prefill problem"},
		{"largest prompt first", []Class{class("essay", 4000, 1200), class("brief", 40, 400)},
			"essay p50 1200 ms vs brief p50 400 ms (x3.00): TFC tracks prompt length, a prefill problem"},
		{"names that say the opposite", []Class{class("short", 5000, 500), class("long", 50, 480)},
			"short p50 500 ms vs long p50 480 ms (x1.04): flat across prompt sizes; if high, queueing or buffering"},
		// Around the x1.5 threshold, +-5%: a few ms of noise (short TFC
		// 420 instead of 413 ms) never flips tracking into flat.
		{"x1.40: flat", []Class{class("brief", 40, 1000), class("essay", 4000, 1400)},
			"essay p50 1400 ms vs brief p50 1000 ms (x1.40): flat across prompt sizes"},
		{"x1.47: near", []Class{class("brief", 40, 1000), class("essay", 4000, 1470)},
			"essay p50 1470 ms vs brief p50 1000 ms (x1.47): near the x1.5 threshold (within 5%): not decided whether TFC tracks prompt length"},
		{"x1.53: near", []Class{class("brief", 40, 1000), class("essay", 4000, 1530)},
			"essay p50 1530 ms vs brief p50 1000 ms (x1.53): near the x1.5 threshold (within 5%): not decided whether TFC tracks prompt length"},
		{"x1.60: tracks", []Class{class("brief", 40, 1000), class("essay", 4000, 1600)},
			"essay p50 1600 ms vs brief p50 1000 ms (x1.60): TFC tracks prompt length, a prefill problem"},
		{"the issue's 622 vs 413 and 420: both near", []Class{class("brief", 40, 420), class("essay", 4000, 622)},
			"essay p50 622 ms vs brief p50 420 ms (x1.48): near the x1.5 threshold"},
		{"the issue's 622 vs 413", []Class{class("brief", 40, 413), class("essay", 4000, 622)},
			"essay p50 622 ms vs brief p50 413 ms (x1.51): near the x1.5 threshold"},
		{"same prompt: the first of each size", []Class{class("brief", 40, 400), class("essay", 4000, 1200), class("essay-2", 4000, 300)},
			"essay p50 1200 ms vs brief p50 400 ms"},
		{"one prompt size: the samples this binary knows", []Class{class("brief", 40, 400)},
			"needs both the short and the long class measured"},
		{"a size without a measured run", []Class{class("brief", 40, 400), unmeasured},
			"needs both the brief and the essay class measured"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := step3(tt.classes...); !strings.Contains(got, "3. TFC vs prompt size: "+tt.want) {
				t.Errorf("step 3 %q, want %q", got, tt.want)
			}
		})
	}
}

// Against places a ratio against a threshold with the +-5% band: the
// band's edges and the values either side.
func TestAgainstBand(t *testing.T) {
	for _, tt := range []struct {
		ratio float64
		want  Side
	}{{1.40, Below}, {1.42, Below}, {1.43, Near}, {1.47, Near}, {1.5, Near}, {1.53, Near}, {1.57, Near}, {1.58, Above}, {1.60, Above}} {
		if got := Against(tt.ratio, PromptRatio); got != tt.want {
			t.Errorf("Against(%g, 1.5) = %d, want %d", tt.ratio, got, tt.want)
		}
	}
}

// Step 2's x3 spread rule has the same band: a gap p95 of 2.9 times the
// p50 is not decided, 3.3 is stalls, 2.5 is narrow.
func TestTriageSpreadMargin(t *testing.T) {
	spread := func(p95 float64) string {
		t.Helper()
		// 18 gaps of 100 ms and two of p95 ms per run: the p95 of 20
		// runs' gaps lies at the large gaps.
		var runs []Run
		for i := range 20 {
			chunks := []float64{100}
			for k := range 18 {
				chunks = append(chunks, 200+float64(k)*100)
			}
			chunks = append(chunks, chunks[len(chunks)-1]+p95, chunks[len(chunks)-1]+2*p95)
			runs = append(runs, run("short", i, probe.Success, chunks, ptr(chunks[len(chunks)-1]+5), 0))
		}
		c := Build("api", []string{"short"}, map[string][]Run{"short": runs}, nil, map[string]Budget{"short": {Gap: 50}})
		for _, l := range c.Triage {
			if strings.HasPrefix(l, "short, 2.") {
				return l
			}
		}
		t.Fatalf("no step 2 in %q", c.Triage)
		return ""
	}
	for _, tt := range []struct {
		p95  float64
		want string
	}{
		{250, "(x2.50): narrow but high"},
		{290, "(x2.90): near the x3 threshold (within 5%): not decided between stalls and a slow model"},
		{330, "(x3.30): a wide spread is stalls"},
	} {
		if got := spread(tt.p95); !strings.Contains(got, tt.want) {
			t.Errorf("gap p95 %g ms: %q, want %q", tt.p95, got, tt.want)
		}
	}
}
