package scorecard

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/streamprobe/streamprobe/internal/testenv/chromiumtest"
	"github.com/streamprobe/streamprobe/probe"
)

// The HTML report rendered by a real browser: one tick per chunk for each
// run shown, the stall highlighted, the reconnect band present.
func TestHTMLInChromium(t *testing.T) {
	chromiumtest.Bin(t)
	dir := t.TempDir()
	page := filepath.Join(dir, "report.html")
	var b bytes.Buffer
	cards := []*Card{fixedCard(), duplicateCard()}
	p := Page{Title: "streamprobe check", Generated: time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC), RunsPerSample: 5,
		Verdict: Verdict(cards, nil, "target"), About: &About{Command: "check", Version: "v1.2.3", Host: "probe-1", Config: "/etc/streamprobe/probe.toml"}}
	if err := WritePage(&b, p, cards); err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(b.Bytes(), []byte("http://")) || bytes.Contains(b.Bytes(), []byte("https://")) || bytes.Contains(b.Bytes(), []byte("src=")) {
		t.Error("the report refers to something outside itself")
	}
	os.WriteFile(page, b.Bytes(), 0o644)
	dom := domWithoutConsole(t, "file://"+page)
	if !strings.Contains(dom, `data-rendered="1"`) {
		t.Fatalf("the page's script did not run in the browser:\n%.500s", dom)
	}
	// The page-level verdict first, then what the page covers.
	if !regexp.MustCompile(`<h1>streamprobe check</h1>\s*<p class="verdict" id="verdict"><b class="fail">FAIL \(1 of 2 target\(s\) failed\)</b></p>`).MatchString(dom) {
		t.Errorf("no FAIL verdict at the top:\n%.1500s", dom)
	}
	for _, want := range []string{"<th>host</th><td>probe-1</td>", "<th>config</th><td>/etc/streamprobe/probe.toml</td>", "<th>version</th><td>v1.2.3</td>",
		"Small samples (a note, not a verdict: the marks stand): short: p95 on 5 run(s), fewer than the 20 a p95 needs"} {
		if !strings.Contains(dom, want) {
			t.Errorf("the page lacks %q", want)
		}
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
	// The long tail's 30 s budget lies far beyond its 1170 ms tails: the
	// axis fits the tails, and the budget is named at the edge.
	longTail := regexp.MustCompile(`<svg class="strip"[^>]*data-row="tail" data-sample="long"[^>]*>.*?</svg>`).FindString(dom)
	if !strings.Contains(longTail, `data-budget-off="30000"`) || !strings.Contains(longTail, "budget 30 s →") || strings.Contains(longTail, `class="budget"`) ||
		!strings.Contains(longTail, ">1500 ms<") {
		t.Errorf("the long tail's plot does not fit its data:\n%s", longTail)
	}
	chromiumtest.Screenshot(t, "file://"+page, 1100, 1400, 10000)
}

// The HTML of a folded row draws its ECDF in at most ecdfPoints steps,
// without a mark per bucket: the page of 200,000 runs stays small.
func TestFoldedRowsDrawBounded(t *testing.T) {
	b, _, _ := feed(200_000)
	c := BuildClasses("api", []Class{b.Class()}, nil, nil)
	var page strings.Builder
	if err := WritePage(&page, Page{Title: "report"}, []*Card{c}); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(page.String(), `class="bucket"`); n != 0 {
		t.Errorf("%d bucket marks for the folded rows", n)
	}
	for _, path := range strings.Split(page.String(), `<path class="ecdf" d="`)[1:] {
		if steps := strings.Count(path[:strings.Index(path, `"`)], " L"); steps > ecdfPoints+2 {
			t.Errorf("an ECDF of %d steps, over %d", steps, ecdfPoints+2)
		}
	}
	if page.Len() > 200<<10 {
		t.Errorf("the page is %d KiB", page.Len()>>10)
	}
	t.Logf("page %d KiB", page.Len()>>10)
}

// Every text of a card reaches the page through html/template: names,
// errors, details and request ids that hold markup show as text, in
// elements and in attributes, and the page runs no script but its own.
func TestHTMLEscapesEveryText(t *testing.T) {
	const evil = `<script>alert(1)</script><b onmouseover="x">'`
	r := run("short"+evil, 0, probe.Success, []float64{100, 140, 600}, ptr(700), 3)
	r.Record.RequestID = "id" + evil
	drill := run("long", 1, probe.UpstreamError, []float64{100}, nil, 0)
	drill.Record.Drill, drill.Record.Verdict, drill.Record.Error, drill.Record.ResumeDetail = "drop"+evil, probe.Verdict("v"+evil), "boom"+evil, "detail"+evil
	c := Build("api"+evil, []string{"short" + evil}, map[string][]Run{"short" + evil: {r}}, []Run{drill}, map[string]Budget{"short" + evil: {TFC: 10}})
	c.Source, c.Resolution = "source"+evil, "resolution"+evil
	var b bytes.Buffer
	if err := WritePage(&b, Page{Title: "title" + evil, Window: "window" + evil}, []*Card{c}); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	if n := strings.Count(page, "<script"); n != 1 {
		t.Errorf("%d script elements, want the page's own", n)
	}
	if strings.Contains(page, "<b ") || strings.Contains(page, `"x"`) {
		t.Errorf("markup from the card reached the page:\n%s", page)
	}
	for _, want := range []string{"title&lt;script&gt;", "api&lt;script&gt;", `data-request-id="id&lt;script&gt;alert(1)&lt;/script&gt;&lt;b onmouseover=&#34;x&#34;&gt;&#39;"`,
		"boom&lt;script&gt;", "detail&lt;script&gt;", "source&lt;script&gt;", "resolution&lt;script&gt;", "window&lt;script&gt;"} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
}

// domWithoutConsole loads url in headless Chromium and returns its DOM
// once the page's scripts ran, failing the test when the page logged
// anything to the console (a script error, a warning).
func domWithoutConsole(t *testing.T, url string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), chromiumtest.Timeout)
	defer cancel()
	args := append(append([]string(nil), chromiumtest.Flags...), "--user-data-dir="+t.TempDir(), "--enable-logging=stderr", "--v=0", "--dump-dom", url)
	cmd := exec.CommandContext(ctx, chromiumtest.Bin(t), args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, errb.String())
	}
	for _, line := range strings.Split(errb.String(), "\n") {
		if strings.Contains(line, ":CONSOLE") {
			t.Errorf("console: %s", line)
		}
	}
	return out.String()
}
