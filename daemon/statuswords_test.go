package daemon

import (
	"bytes"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/streamprobe/streamprobe/config"
	"github.com/streamprobe/streamprobe/internal/jobs"
	"github.com/streamprobe/streamprobe/probe"
)

// statusOf is the status of cfgText's jobs, each run of runs observed
// (jobs keyed target/sample), at t0.
func statusOf(t *testing.T, cfgText string, runs ...probe.Record) *status {
	t.Helper()
	cfg, err := config.Parse("words.toml", []byte(cfgText), jobs.Env(os.Getenv))
	if err != nil {
		t.Fatal(err)
	}
	js, err := jobs.Build(cfg, "http://127.0.0.1:0", os.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	s := &status{}
	s.configured(cfg, js, time.Now())
	for _, r := range runs {
		s.observe(probe.Result{Record: r})
	}
	return s
}

// page is the status page s makes with facts f.
func (s *status) page(t *testing.T, f pageFacts) string {
	t.Helper()
	var b bytes.Buffer
	if err := statusTemplate.Execute(&b, s.view(f)); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// erroredRun is a run of target/short at 12:0m:00 that ended as o with err.
func erroredRun(target string, m int, o probe.Outcome, err string) probe.Record {
	return probe.Record{Target: target, Sample: "short", Dialect: "openai-chat", Drill: probe.DrillNone, Outcome: o, Error: err,
		RequestID: fmt.Sprintf("%032x", m), StartedAt: time.Date(2030, 1, 1, 12, m, 0, 0, time.UTC).Format(time.RFC3339Nano)}
}

// The words of the status page: of three runs that failed with the same
// error, only the newest row says it is the last error, the older ones
// that they failed the same way; a config with no region says no
// "(region )"; health "ok" beside a FAIL headline says whose each is.
func TestStatusPageWords(t *testing.T) {
	const boom = "HTTP 500: backend down"
	s := statusOf(t, "host = \"edge-7\"\n[[target]]\nname = \"chat\"\nurl = \"http://127.0.0.1:9/v1\"\ndialect = \"openai-chat\"\nsamples = [\"short\"]\n[budget.short]\ntfc = \"1ms\"\n",
		erroredRun("chat", 1, probe.UpstreamError, boom), erroredRun("chat", 2, probe.UpstreamError, boom),
		erroredRun("chat", 3, probe.Timeout, "no chunk in 30s"), erroredRun("chat", 4, probe.UpstreamError, boom))
	page := s.page(t, pageFacts{now: time.Date(2030, 1, 1, 12, 5, 0, 0, time.UTC), health: health{Status: "ok"}})
	notes := regexp.MustCompile(`<tr class="run"><td>([^<]*)</td>.*<td class="(?:err|end)">([^<]*)</td></tr>`).FindAllStringSubmatch(page, -1)
	want := [][2]string{
		{"2030-01-01 12:04:00Z", "the last error (above)"},
		{"2030-01-01 12:03:00Z", "no chunk in 30s"},
		{"2030-01-01 12:02:00Z", "the same error as the last"},
		{"2030-01-01 12:01:00Z", "the same error as the last"},
	}
	if len(notes) != len(want) {
		t.Fatalf("%d run rows, want %d:\n%s", len(notes), len(want), page)
	}
	for i, n := range notes {
		if n[1] != want[i][0] || n[2] != want[i][1] {
			t.Errorf("row %d: started %s says %q, want started %s saying %q", i, n[1], n[2], want[i][0], want[i][1])
		}
	}
	if !strings.Contains(page, "<h1>streamprobe on edge-7</h1>") || strings.Contains(page, "(region") {
		t.Errorf("a config without a region: want the heading without one:\n%s", page[:strings.Index(page, "</h1>")+5])
	}
	if !strings.Contains(page, `class="fail">0 of 1 classes PASS`) {
		t.Fatalf("want a FAIL headline:\n%s", page)
	}
	if !strings.Contains(page, `Daemon health: <span id="health" class="pass">ok</span> (the daemon's own: it runs its schedule`) ||
		!strings.Contains(page, "the verdicts are the targets'") {
		t.Errorf("health ok beside a FAIL headline does not say whose each is:\n%s", regexp.MustCompile(`(?s)<p id="about">.*?</p>`).FindString(page))
	}
}

// The startup log names the status page's URL, with the port bound.
func TestStartupLogNamesTheStatusPage(t *testing.T) {
	addr := freeAddr(t)
	d, logs := testDaemon(t, fmt.Sprintf("listen = %q\n[[target]]\nname = \"a\"\nurl = \"http://127.0.0.1:9/\"\nevery = \"1h\"\n", addr), nil)
	stop := runDaemon(t, d, nil)
	waitFor(t, "the listener's log line", 30*time.Second, func() bool { return strings.Contains(logs.String(), `"addr":"`+addr+`"`) })
	stop()
	if want := `"status_page":"http://` + addr + `/"`; !strings.Contains(logs.String(), want) {
		t.Errorf("the startup log does not name the status page (%s):\n%s", want, logs)
	}
}
