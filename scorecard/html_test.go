package scorecard

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/streamprobe/streamprobe/internal/chromiumtest"
	"github.com/streamprobe/streamprobe/probe"
)

// The HTML report rendered by a real browser: one tick per chunk for each
// run shown, the stall highlighted, the reconnect band present.
func TestHTMLInChromium(t *testing.T) {
	chromiumtest.Bin(t)
	dir := t.TempDir()
	page := filepath.Join(dir, "report.html")
	var b bytes.Buffer
	if err := WriteHTML(&b, []*Card{fixedCard(), duplicateCard()}, 5, time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)); err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(b.Bytes(), []byte("http://")) || bytes.Contains(b.Bytes(), []byte("https://")) || bytes.Contains(b.Bytes(), []byte("src=")) {
		t.Error("the report refers to something outside itself")
	}
	os.WriteFile(page, b.Bytes(), 0o644)
	dom := chromiumtest.DumpDOM(t, "file://"+page)
	if !strings.Contains(dom, `data-rendered="1"`) {
		t.Fatalf("the page's script did not run in the browser:\n%.500s", dom)
	}
	svgs := regexp.MustCompile(`<svg class="timeline"[^>]*>`).FindAllString(dom, -1)
	// short, long, cancel: p50 and worst each (worst == p50 when all runs
	// are alike is drawn once), plus the drill run.
	if len(svgs) < 4 {
		t.Fatalf("%d timelines in the DOM", len(svgs))
	}
	attr := func(tag, name string) int {
		m := regexp.MustCompile(name + `="([0-9]+)"`).FindStringSubmatch(tag)
		if m == nil {
			t.Fatalf("%s missing in %s", name, tag)
		}
		n, _ := strconv.Atoi(m[1])
		return n
	}
	stalls, bands := 0, 0
	for _, svg := range svgs {
		if attr(svg, "data-ticks-rendered") != attr(svg, "data-chunks") {
			t.Errorf("ticks drawn %d, chunks %d: %s", attr(svg, "data-ticks-rendered"), attr(svg, "data-chunks"), svg)
		}
		stalls += attr(svg, "data-stalls-rendered")
		bands += attr(svg, "data-bands-rendered")
		if attr(svg, "data-bands-rendered") != attr(svg, "data-bands") {
			t.Errorf("bands drawn %d, want %d", attr(svg, "data-bands-rendered"), attr(svg, "data-bands"))
		}
	}
	if stalls < 1 {
		t.Error("no stall highlighted, though every short run has a 259 ms gap")
	}
	if bands != 4 {
		t.Errorf("%d reconnect bands drawn, want 4 (the drop drill's 1, the duplicate drill's 3)", bands)
	}
	// The drill's reconnect interval (180 -> 700 ms) is a band, never a stall.
	for _, svg := range svgs {
		if attr(svg, "data-bands") == 1 && attr(svg, "data-stalls-rendered") != 0 {
			t.Errorf("the reconnect was drawn as a stall: %s", svg)
		}
		// A time axis with ticks on every timeline.
		if attr(svg, "data-axis-ticks-rendered") < 3 {
			t.Errorf("timeline without a time axis: %s", svg)
		}
		// The duplicate drill's three reconnects, 120 ms apart, need a
		// lane each for their labels.
		if attr(svg, "data-bands") == 3 && attr(svg, "data-lanes") < 2 {
			t.Errorf("the duplicate drill's labels share lanes: %s", svg)
		}
	}
	// No text covers another, nor leaves its drawing, in any SVG (the
	// boxes the browser laid out).
	all := regexp.MustCompile(`<svg [^>]*>`).FindAllString(dom, -1)
	for _, svg := range all {
		if attr(svg, "data-overlaps") != 0 || attr(svg, "data-outside") != 0 {
			t.Errorf("labels overlap or overflow: %s", svg)
		}
	}
	if !strings.Contains(dom, `<svg class="legend"`) || !strings.Contains(dom, "p95 budget") {
		t.Error("no legend")
	}
	// Per timing cell, the distribution: a dot per run (gap cells: per
	// gap), the ECDF and the budget line where there is a budget.
	strips := regexp.MustCompile(`<svg class="strip"[^>]*>`).FindAllString(dom, -1)
	// short and long: tfc, gap, tail, close; cancel: no close (no end
	// marker after a cancel); the duplicate card has no class.
	if len(strips) != 11 {
		t.Errorf("%d distribution plots, want 11", len(strips))
	}
	for _, svg := range strips {
		if attr(svg, "data-dots-rendered") != attr(svg, "data-n") || attr(svg, "data-ecdf-rendered") != 1 {
			t.Errorf("distribution plot: %s", svg)
		}
		if strings.Contains(svg, "data-budget=") != (attr(svg, "data-budgets-rendered") == 1) {
			t.Errorf("budget line: %s", svg)
		}
	}
	if !strings.Contains(dom, `data-row="tfc" data-sample="short" data-n="5"`) {
		t.Error("the short TFC cell does not plot its 5 runs")
	}
	chromiumtest.Screenshot(t, "file://"+page, 1100, 1400, 10000)
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

// Labels closer than their width go to separate lanes; labels far apart
// share one; a label past the edge is moved back inside.
func TestLayout(t *testing.T) {
	got := layout([]label{{x: 10, text: "reconnect, handshake 90 ms"}, {x: 60, text: "reconnect, handshake 95 ms"}, {x: 400, text: "end"}, {x: 955, text: "TFC 9 ms"}}, 958)
	lanes := []int{got[0].lane, got[1].lane, got[2].lane, got[3].lane}
	if !slices.Equal(lanes, []int{0, 1, 0, 0}) {
		t.Errorf("lanes %v", lanes)
	}
	if got[3].x+labelWidth(got[3].text) > 958 {
		t.Errorf("label past the edge: %+v", got[3])
	}
}
