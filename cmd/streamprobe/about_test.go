package main

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/streamprobe/streamprobe/internal/version"
	"github.com/streamprobe/streamprobe/probe"
)

// junitProps are the properties of each testsuite of a JUnit file.
func junitProps(t *testing.T, path string) []map[string]string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Suites []struct {
			Props []struct {
				Name  string `xml:"name,attr"`
				Value string `xml:"value,attr"`
			} `xml:"properties>property"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(b, &doc); err != nil {
		t.Fatalf("junit: %v\n%s", err, b)
	}
	var out []map[string]string
	for _, s := range doc.Suites {
		m := map[string]string{}
		for _, p := range s.Props {
			m[p.Name] = p.Value
		}
		out = append(out, m)
	}
	return out
}

// check's outputs say where they come from: the page verdict first, the
// host, the config, the plan and the version, in the text, JSON, JUnit
// and HTML; 2 runs per sample get the small-sample note, and decide no
// p95: INCONCLUSIVE, exit 3.
func TestCheckSaysWhatItIs(t *testing.T) {
	cfg := writeConfig(t, `host = "probe-7"
[[target]]
name = "chat"
builtin = true
dialect = "openai-chat"
samples = ["short"]
[budget.short]
tfc = "10s"
gap = "5s"
tail = "20s"
`+noStallBudget)
	dir := t.TempDir()
	junit, page := filepath.Join(dir, "c.xml"), filepath.Join(dir, "c.html")
	code, out, stderr := runCmd(t, "check", "-config", cfg, "-runs", "2", "-junit", junit, "-html", page)
	if code != exitInconclusive {
		t.Fatalf("exit %d\n%s%s", code, out, stderr)
	}
	const verdict, plan = "INCONCLUSIVE (1 of 1 target(s) inconclusive, none failed)", "2 runs per sample, one look at 95% confidence"
	head := fmt.Sprintf("streamprobe check: %s\n  host:    probe-7\n  config:  %s\n  plan:    %s\n  version: %s\n\ntarget chat\n", verdict, cfg, plan, version.String())
	if !strings.HasPrefix(out, head) {
		t.Errorf("text head:\n%s\nwant:\n%s", out, head)
	}
	if !strings.Contains(out, "small samples (a note, not a verdict: the marks stand)\n    short: p95 on 2 run(s), fewer than the 20 a p95 needs\n") {
		t.Errorf("no small-sample note:\n%s", out)
	}
	props := junitProps(t, junit)
	if len(props) != 1 || props[0]["verdict"] != verdict || props[0]["plan"] != plan || props[0]["host"] != "probe-7" || props[0]["config"] != cfg ||
		props[0]["version"] != version.String() || !strings.HasPrefix(props[0]["small_sample.short"], "p95 on 2 run(s)") {
		t.Errorf("junit properties %v", props)
	}
	html, _ := os.ReadFile(page)
	for _, want := range []string{`<p class="verdict" id="verdict"><b class="inconclusive">` + verdict + `</b></p>`, "<th>host</th><td>probe-7</td>", "<th>plan</th><td>" + plan + "</td>",
		"<th>config</th><td>" + cfg + "</td>", "<th>version</th><td>" + version.String() + "</td>", "Small samples (a note, not a verdict"} {
		if !strings.Contains(string(html), want) {
			t.Errorf("html lacks %q", want)
		}
	}
	code, out, _ = runCmd(t, "check", "-config", cfg, "-runs", "2", "-json")
	var doc struct {
		Verdict string `json:"verdict"`
		Result  string `json:"result"`
		About   struct {
			Host, Config, Plan, Version string
		} `json:"about"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || code != exitInconclusive {
		t.Fatalf("exit %d, %v\n%s", code, err, out)
	}
	if doc.Verdict != verdict || doc.Result != "INCONCLUSIVE" || doc.About.Host != "probe-7" || doc.About.Config != cfg || doc.About.Plan != plan || doc.About.Version != version.String() {
		t.Errorf("json %+v", doc)
	}
}

// report's outputs say what they cover: the first and last run, the
// window asked, the files read, the hosts and regions in them, the
// version; with a verdict first.
func TestReportSaysWhatItCovers(t *testing.T) {
	cfg, eu, us := reportFixture(t, "600ms")
	// A third file whose records carry their host and region.
	start := time.Date(2026, 12, 3, 9, 58, 0, 0, time.UTC)
	var b strings.Builder
	for i := range 2 {
		chunks := []float64{450, 490, 530}
		end := 540.0
		s := probe.Reduce(chunks, &end)
		r := probe.Record{RequestID: fmt.Sprintf("ap-%d", i), Target: "api", Sample: "short", Drill: "none", Outcome: probe.Success,
			Chunks: 3, TFCMs: s.TFC, TailMs: s.Tail, CloseMs: s.Close, Gaps: probe.Gaps{Count: 2, Values: s.Gaps},
			StartedAt: start.Add(time.Duration(i) * time.Minute).Format(time.RFC3339Nano), Host: "probe-ap-1", Region: "ap"}
		j, _ := json.Marshal(r)
		b.Write(append(j, '\n'))
	}
	ap := filepath.Join(t.TempDir(), "ap.jsonl")
	os.WriteFile(ap, []byte(b.String()), 0o644)
	dir := t.TempDir()
	junit, page := filepath.Join(dir, "r.xml"), filepath.Join(dir, "r.html")
	args := []string{"report", "-config", cfg, "-log", "eu=" + eu, "-log", "us=" + us, "-log", ap}
	// 2 to 10 runs a card decide no p95: INCONCLUSIVE, exit 3.
	code, out, stderr := runCmd(t, append(args, "-junit", junit, "-html", page)...)
	if code != exitInconclusive {
		t.Fatalf("exit %d\n%s%s", code, out, stderr)
	}
	covers := "first run 2026-12-03T09:58:00Z, last run 2026-12-03T10:09:00Z (window: every run in the data)"
	sources := "eu=" + eu + ", us=" + us + ", " + ap
	head := fmt.Sprintf("streamprobe report: INCONCLUSIVE (4 of 4 card(s) inconclusive, none failed)\n  covers:  %s\n  sources: %s\n  hosts:   probe-ap-1\n  regions: ap, eu, us\n  version: %s\n\n",
		covers, sources, version.String())
	if !strings.HasPrefix(out, head) {
		t.Errorf("text head:\n%.600s\nwant:\n%s", out, head)
	}
	for i, props := range junitProps(t, junit) {
		if props["covers"] != covers || props["sources"] != sources || props["hosts"] != "probe-ap-1" || props["regions"] != "ap, eu, us" || props["version"] != version.String() {
			t.Errorf("junit suite %d properties %v", i, props)
		}
	}
	html, _ := os.ReadFile(page)
	for _, want := range []string{`<b class="inconclusive">INCONCLUSIVE (4 of 4 card(s) inconclusive, none failed)</b>`, "<th>covers</th><td>" + covers + "</td>", "<th>sources</th><td>" + sources + "</td>",
		"<th>hosts</th><td>probe-ap-1</td>", "<th>regions</th><td>ap, eu, us</td>"} {
		if !strings.Contains(string(html), want) {
			t.Errorf("html lacks %q", want)
		}
	}
	// -json, over a window: the window asked and the runs in it.
	code, out, _ = runCmd(t, append(args, "-json", "-since", "2026-12-03T10:00:00Z", "-until", "2026-12-03T10:05:00Z")...)
	var doc struct {
		Verdict string `json:"verdict"`
		About   struct {
			FirstRun string   `json:"first_run"`
			LastRun  string   `json:"last_run"`
			Window   string   `json:"window"`
			Sources  []string `json:"sources"`
			Hosts    []string `json:"hosts"`
			Regions  []string `json:"regions"`
			Version  string   `json:"version"`
		} `json:"about"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || code != exitInconclusive {
		t.Fatalf("exit %d, %v\n%s", code, err, out)
	}
	a := doc.About
	if doc.Verdict != "INCONCLUSIVE (3 of 3 card(s) inconclusive, none failed)" || a.FirstRun != "2026-12-03T10:00:00Z" || a.LastRun != "2026-12-03T10:04:00Z" ||
		a.Window != "runs from 2026-12-03T10:00:00Z to 2026-12-03T10:05:00Z" || len(a.Sources) != 3 || len(a.Hosts) != 0 ||
		strings.Join(a.Regions, ",") != "eu,us" || a.Version != version.String() {
		t.Errorf("json %s %+v", doc.Verdict, a)
	}
}
