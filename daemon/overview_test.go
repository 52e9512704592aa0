package daemon

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/streamprobe/streamprobe/internal/testenv/chromiumtest"
)

// exampleConf is probe.example.toml (its eleven jobs on the built-in
// target) listening on addr, every job every few seconds, plus a target
// that answers 500 (a red cell).
func exampleConf(t *testing.T, addr, broken string) string {
	t.Helper()
	b, err := os.ReadFile("../probe.example.toml")
	if err != nil {
		t.Fatal(err)
	}
	s := regexp.MustCompile(`(?m)^listen = .*$`).ReplaceAllString(string(b), fmt.Sprintf("listen = %q", addr))
	s = regexp.MustCompile(`(?m)^(every|drill_every) = "1m"`).ReplaceAllString(s, `$1 = "10s"`)
	s = regexp.MustCompile(`(?m)^timeout = "30s"`).ReplaceAllString(s, `timeout = "5s"`)
	s = regexp.MustCompile(`(?m)^max_stream = "5m"`).ReplaceAllString(s, `max_stream = "9s"`)
	s = regexp.MustCompile(`(?m)^jitter = "5s"`).ReplaceAllString(s, `jitter = "0s"`)
	// The tables that follow the targets (budgets, SLOs) come after the
	// new target's, so it goes before the first of them.
	i := strings.Index(s, "\n[budget.")
	return s[:i] + fmt.Sprintf("\n[[target]]\nname = \"broken\"\nurl = \"%s/v1\"\ndialect = \"openai-chat\"\nsamples = [\"short\"]\nevery = \"10s\"\njitter = \"0s\"\n", broken) + s[i:]
}

// The status page starts with the overview: a grid of target x class
// (and drill) cells, each coloured by check's verdict over the runs the
// page holds with its key figure and its runs' strip, each linking to its
// job's section; and each section shows its strip. Read in headless
// Chromium on probe.example.toml's eleven jobs and a target that answers
// 500: the grid is at the top and fits on the first screen (where eleven
// sections stack to a page thousands of pixels high), every cell links to
// a section that exists, every strip is laid out with a bar per run held,
// and /api/status gives the same grid. STATUS_OVERVIEW_SHOT=path saves
// the screenshot docs/metrics-and-alerts.md shows.
func TestStatusOverviewInChromium(t *testing.T) {
	chromiumtest.Bin(t)
	broken := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "backend down", http.StatusInternalServerError)
	}))
	defer broken.Close()
	addr := freeAddr(t)
	d, _ := testDaemon(t, exampleConf(t, addr, broken.URL), nil)
	defer runDaemon(t, d, nil)()
	var api struct {
		Overview overviewView `json:"overview"`
		Jobs     []apiJobRef  `json:"jobs"`
	}
	// The MCP target runs every minute (the example's default): one run
	// of each job, and two of those every 10 s.
	waitFor(t, "a run of each of the 12 jobs, two of the chat target's", 180*time.Second, func() bool {
		resp, err := http.Get("http://" + addr + "/api/status")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if err := json.Unmarshal(b, &api); err != nil {
			t.Fatalf("/api/status: %v", err)
		}
		for _, j := range api.Jobs {
			if len(j.History) < 1 || (j.Target == "reference-chat" && len(j.History) < 2) {
				return false
			}
		}
		return len(api.Jobs) == 12
	})
	// The API's grid: a row per target, a column per class and drill,
	// every job in one cell with its verdict, key figure and history.
	if got := strings.Join(api.Overview.Columns, ","); got != "short,long,cancel,drill drop,drill duplicate,drill stale" {
		t.Errorf("overview columns %s", got)
	}
	cells := map[string]overviewCell{}
	for _, r := range api.Overview.Rows {
		if len(r.Cells) != len(api.Overview.Columns) {
			t.Errorf("row %s has %d cells for %d columns", r.Target, len(r.Cells), len(api.Overview.Columns))
		}
		for _, c := range r.Cells {
			if c.Job != "" {
				cells[c.Job] = c
			}
		}
	}
	if len(api.Overview.Rows) != 4 || len(cells) != 12 {
		t.Fatalf("overview: %d rows, %d cells; want 4 targets, 12 jobs: %+v", len(api.Overview.Rows), len(cells), api.Overview)
	}
	for job, c := range cells {
		if c.Verdict == "" || c.Key == "" || len(c.History) < 1 || c.Anchor == "" {
			t.Errorf("%s: cell %+v, want a verdict, a key figure, its history and its section", job, c)
		}
	}
	if c := cells["broken/short"]; c.Verdict != "FAIL" || c.Key != "100% of runs failed" || c.History[0].Passed || c.History[0].Outcome != "upstream_error" {
		t.Errorf("the broken target's cell: %+v, want FAIL with its runs failed", c)
	}
	if c := cells["reference-sse/drop"]; !strings.HasSuffix(c.Key, " runs pass") {
		t.Errorf("a drill's key figure: %q", c.Key)
	}

	// In the browser.
	dom, console := chromiumtest.DumpDOMConsole(t, "http://"+addr+"/")
	if !strings.Contains(dom, `data-rendered="1"`) {
		t.Fatalf("the page's script did not run:\n%.500s", dom)
	}
	if len(console) > 0 {
		t.Errorf("the page wrote to the browser's console: %q", console)
	}
	num := func(tag, name string) int {
		m := regexp.MustCompile(name + `="(\d+)"`).FindStringSubmatch(tag)
		if m == nil {
			return -1
		}
		n, _ := strconv.Atoi(m[1])
		return n
	}
	grid := regexp.MustCompile(`<table class="overview" id="overview"[^>]*>`).FindString(dom)
	if grid == "" {
		t.Fatalf("no overview grid:\n%.2000s", dom)
	}
	if top, h := num(grid, "data-top"), num(grid, "data-height"); top < 0 || top > 400 || h <= 0 || top+h > 900 {
		t.Errorf("the overview is laid out at %d px, %d px high: want it on the first screen (top under 400, bottom under 900)", top, h)
	}
	if i, j := strings.Index(dom, `id="overview"`), strings.Index(dom, `<section class="job"`); i < 0 || j < i {
		t.Errorf("the overview does not come before the jobs' sections")
	}
	tds := regexp.MustCompile(`<td class="cell (pass|fail|inconclusive|none)" data-job="([^"]*)" data-verdict="([^"]*)"><a href="#([^"]*)"([^>]*)>`).FindAllStringSubmatch(dom, -1)
	if len(tds) != 12 {
		t.Fatalf("%d overview cells in the page, want 12", len(tds))
	}
	for _, td := range tds {
		if want := strings.ToLower(cells[td[2]].Verdict); td[1] != want || td[3] != cells[td[2]].Verdict {
			t.Errorf("%s: the page's cell is %s/%s, the API's verdict %s", td[2], td[1], td[3], cells[td[2]].Verdict)
		}
		if !strings.Contains(td[5], `data-target="found"`) || !strings.Contains(dom, `<h2 id="`+td[4]+`"`) {
			t.Errorf("%s: its link #%s leads to no section", td[2], td[4])
		}
	}
	strips := regexp.MustCompile(`<span class="history"[^>]*>`).FindAllString(dom, -1)
	if len(strips) != 24 {
		t.Errorf("%d history strips, want 24 (each job's in the grid and in its section)", len(strips))
	}
	for _, s := range strips {
		if num(s, "data-drawn-width") <= 0 || num(s, "data-bars") != num(s, "data-runs") || num(s, "data-runs") < 1 {
			t.Errorf("a strip not laid out with a bar per run: %s", s)
		}
	}
	png := chromiumtest.Screenshot(t, "http://"+addr+"/", 1200, 700, 10000)
	if out := os.Getenv("STATUS_OVERVIEW_SHOT"); out != "" {
		if err := os.WriteFile(out, png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
