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

	"github.com/streamprobe/streamprobe/probe"
)

// reportFixture writes a config with budgets and two regions' results
// logs of n short runs each (TFC from base ms, step 10 ms).
func reportFixture(t *testing.T, tfcBudget string) (cfg, eu, us string) {
	t.Helper()
	dir := t.TempDir()
	cfg = filepath.Join(dir, "probe.toml")
	os.WriteFile(cfg, []byte(fmt.Sprintf(`[[target]]
name = "api"
url = "https://api.example/v1/chat/completions"
dialect = "openai-chat"
bearer_env = "STREAMPROBE_REPORT_TEST_KEY_UNSET"
samples = ["short"]
[budget.short]
tfc = %q
gap = "300ms"
tail = "2s"
stall_share = 1
`, tfcBudget)), 0o644)
	start := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	write := func(name string, base float64) string {
		var b strings.Builder
		for i := range 10 {
			chunks := []float64{base + float64(i*10), base + float64(i*10) + 40, base + float64(i*10) + 80}
			end := chunks[2] + 5
			s := probe.Reduce(chunks, &end)
			r := probe.Record{RequestID: fmt.Sprintf("%s-%d", name, i), Target: "api", Sample: "short", Drill: "none", Outcome: probe.Success,
				Chunks: 3, TFCMs: s.TFC, TailMs: s.Tail, CloseMs: s.Close, Gaps: probe.Gaps{Count: 2, Values: s.Gaps},
				StartedAt: start.Add(time.Duration(i) * time.Minute).Format(time.RFC3339Nano)}
			j, _ := json.Marshal(r)
			b.Write(append(j, '\n'))
		}
		p := filepath.Join(dir, name+".jsonl")
		os.WriteFile(p, []byte(b.String()), 0o644)
		return p
	}
	return cfg, write("eu", 400), write("us", 500)
}

// report over two regions' logs: exit 3 within budget (10 and 20 runs
// bound no p95 from above: inconclusive), 1 when the fleet's pooled p95 is
// over it (580 ms against 550, and the bottom of its interval, the 17th
// of 20 runs, 560 ms, too; the mean of the regions' p95s, 540, would
// pass), 2 for usage errors; -json, -junit and -html carry one card per
// region plus the fleet.
func TestReportFromLogs(t *testing.T) {
	cfg, eu, us := reportFixture(t, "600ms")
	code, out, stderr := runCmd(t, "report", "-config", cfg, "-log", "eu="+eu, "-log", "us="+us)
	if code != exitInconclusive {
		t.Fatalf("exit %d\n%s%s", code, out, stderr)
	}
	for _, want := range []string{"target api, region eu", "target api, region us", "target api, fleet (every region)", "TFC             500 / 580 ms [560..inf] (<= 600) INCONCLUSIVE"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(stderr, "20 run(s) kept") {
		t.Errorf("stderr %q", stderr)
	}

	// The whole day against 550 ms: eu (p95 490) and us (p95 590: red)
	// apart, and the fleet red from its pooled p95 580, where the mean of
	// the regions' p95s (540) would have passed.
	cfg, _, _ = reportFixture(t, "550ms")
	dir := t.TempDir()
	junit, page := filepath.Join(dir, "r.xml"), filepath.Join(dir, "r.html")
	code, out, stderr = runCmd(t, "report", "-config", cfg, "-log", "eu="+eu, "-log", "us="+us, "-json", "-junit", junit, "-html", page)
	if code != exitFail {
		t.Fatalf("exit %d, want 1\n%s%s", code, out, stderr)
	}
	type card struct {
		Region  string `json:"region"`
		Fleet   bool   `json:"fleet"`
		Pass    bool   `json:"pass"`
		Verdict string `json:"verdict"`
		Cells   []struct {
			Row string   `json:"row"`
			N   int      `json:"n"`
			P95 *float64 `json:"p95_ms"`
		} `json:"cells"`
	}
	var doc struct {
		Pass  bool   `json:"pass"`
		Cards []card `json:"cards"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if doc.Pass || len(doc.Cards) != 3 {
		t.Fatalf("json %+v", doc)
	}
	fleet := doc.Cards[2]
	if !fleet.Fleet || fleet.Verdict != "FAIL" || *fleet.Cells[0].P95 != 580 || doc.Cards[0].Verdict != "INCONCLUSIVE" || doc.Cards[1].Verdict != "FAIL" {
		t.Errorf("cards %+v", doc.Cards)
	}
	if b, err := os.ReadFile(junit); err != nil || xml.Unmarshal(b, new(struct{})) != nil || strings.Count(string(b), "<testsuite ") != 3 ||
		!strings.Contains(string(b), `name="streamprobe report api fleet"`) {
		t.Errorf("junit: %v\n%s", err, b)
	}
	if b, err := os.ReadFile(page); err != nil || !strings.Contains(string(b), "<title>streamprobe report</title>") || strings.Count(string(b), `<svg class="strip"`) != 12 {
		t.Errorf("html: %v, %d plots, want 4 timing cells x 3 cards", err, strings.Count(string(b), `<svg class="strip"`))
	}

	// A window keeps minutes 0..4 of each log: 5 runs per region, whose
	// p95s are within the budget and, on 5 runs, undecided.
	code, out, stderr = runCmd(t, "report", "-config", cfg, "-log", "eu="+eu, "-log", "us="+us, "-since", "2026-12-03T10:00:00Z", "-until", "2026-12-03T10:05:00Z", "-region", "us")
	if code != exitInconclusive || !strings.Contains(out, "runs: short 5;") || strings.Contains(out, "region eu") || !strings.Contains(stderr, "5 run(s) kept, 15 outside") {
		t.Errorf("window: exit %d\n%s%s", code, out, stderr)
	}
	// Nothing in the window is a failure, not a pass.
	code, _, stderr = runCmd(t, "report", "-config", cfg, "-log", eu, "-since", "2027-01-01T00:00:00Z")
	if code != exitFail || !strings.Contains(stderr, "no run in the window") {
		t.Errorf("empty window: exit %d, %q", code, stderr)
	}
}

func TestReportUsageErrors(t *testing.T) {
	cfg, eu, _ := reportFixture(t, "600ms")
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"-config", cfg}, "give -log FILE or -vm URL (one of them)"},
		{[]string{"-config", cfg, "-log", eu, "-vm", "http://127.0.0.1:1"}, "give -log FILE or -vm URL (one of them)"},
		{[]string{"-config", cfg, "-log", eu, "-since", "yesterday"}, `-since: "yesterday" is neither an RFC 3339 time`},
		{[]string{"-config", cfg, "-log", eu, "-since", "1h", "-until", "2h"}, "-since (" /* after -until */},
		{[]string{"-config", cfg, "-log", "/nonexistent/results.jsonl"}, `-log: "/nonexistent/results.jsonl": no such file`},
		{[]string{"-config", "/nonexistent.toml", "-log", eu}, "nonexistent.toml"},
		{[]string{"-config", cfg, "-vm", "http://127.0.0.1:1"}, "report: victoriametrics query:"},
	} {
		code, _, stderr := runCmd(t, append([]string{"report"}, tt.args...)...)
		if code != exitUsage || !strings.Contains(stderr, tt.want) || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
			t.Errorf("%v: exit %d, stderr %q, want %q on one line", tt.args, code, stderr, tt.want)
		}
	}
	code, help, _ := runCmd(t, "report", "-h") // help goes to stdout
	for _, flag := range []string{"-log", "-vm", "-since", "-until", "-target", "-region", "-json", "-junit", "-html", "-config"} {
		if code != exitOK || !(strings.Contains(help, "\n  "+flag+" ") || strings.Contains(help, "\n  "+flag+"\n")) {
			t.Errorf("report -h lacks %s (exit %d)", flag, code)
		}
	}
}

// A line over report.MaxLine in a log is skipped, counted next to the
// lines that are not a record and named (file and line) in a one-line
// note, and in -json's source; every other run is on the card.
func TestReportSkipsOversizedLines(t *testing.T) {
	cfg, eu, _ := reportFixture(t, "600ms")
	b, err := os.ReadFile(eu)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(b), "\n")
	huge := `{"request_id":"` + strings.Repeat("i", 20<<20) + `","target":"api"}` + "\n"
	log := filepath.Join(t.TempDir(), "big.jsonl")
	os.WriteFile(log, []byte(strings.Join(lines[:4], "")+huge+strings.Join(lines[4:], "")+"not json\n"), 0o644)
	code, out, stderr := runCmd(t, "report", "-config", cfg, "-log", "eu="+log)
	if code != exitInconclusive || !strings.Contains(out, "runs: short 10;") {
		t.Fatalf("exit %d\n%s%s", code, out, stderr)
	}
	want := "streamprobe report: 12 line(s) in 1 file(s): 10 run(s) kept, 0 outside the window or filters, 1 not a record, 1 over 16 MiB, 0 without a start time, 0 cut by a shutdown\n" +
		"streamprobe report: skipped 1 line(s) over 16 MiB, the first at " + log + " line 5\n"
	if stderr != want {
		t.Errorf("stderr\n%s\nwant\n%s", stderr, want)
	}
	code, out, _ = runCmd(t, "report", "-config", cfg, "-log", "eu="+log, "-json")
	var doc struct {
		Source map[string]any `json:"source"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || code != exitInconclusive {
		t.Fatalf("exit %d, not JSON: %v", code, err)
	}
	if doc.Source["lines_oversized"] != 1.0 || doc.Source["lines_not_a_record"] != 1.0 || doc.Source["first_oversized"] != log+" line 5" {
		t.Errorf("source %v", doc.Source)
	}
}
