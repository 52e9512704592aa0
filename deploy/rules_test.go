package deploy

import (
	"bytes"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/streamprobe/streamprobe/config"
	"github.com/streamprobe/streamprobe/daemon"
	"github.com/streamprobe/streamprobe/internal/jobs"
	"github.com/streamprobe/streamprobe/internal/metricnames"
	"github.com/streamprobe/streamprobe/probe"
)

// daemonSeries returns what a daemon with one job of each kind writes to
// /metrics after the given records.
func daemonSeries(t *testing.T, recs ...probe.Record) string {
	t.Helper()
	cfg, err := config.Parse("a.toml", []byte("region = \"eu\"\nhost = \"h1\"\n[[target]]\nname = \"api\"\nurl = \"http://x\"\nsamples = [\"short\", \"long\", \"cancel\"]\ndrills = [\"drop\"]\n[budget.short]\ntfc = \"600ms\"\n[slo.short]\ntfc_within = 0.99\nno_stall = 0.95\n[slo.long]\ndrills_pass = 0.99\n"), jobs.Env(os.Getenv))
	if err != nil {
		t.Fatal(err)
	}
	js, err := jobs.Build(cfg, "", os.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	m := daemon.NewMetrics(cfg)
	m.Reconfigure(cfg, js)
	for _, r := range recs {
		m.Observe(r)
	}
	var out bytes.Buffer
	m.Set.WritePrometheus(&out)
	return out.String()
}

// Every series the rules read is one the daemon exports: a rule on a
// misspelt name would never fire.
func TestRulesReadSeriesTheDaemonExports(t *testing.T) {
	tfc := 412.0
	exported := daemonSeries(t, probe.Record{Target: "api", Sample: "long", Dialect: "sse", Drill: probe.DrillDrop, Outcome: probe.Success, Verdict: probe.VerdictPass},
		probe.Record{Target: "api", Sample: "short", Dialect: "sse", Drill: probe.DrillNone, Outcome: probe.Success, Chunks: 3, TFCMs: &tfc})
	for _, file := range []string{"alerts.yml", "hosts.example.yml", "slo.yml"} {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		names := regexp.MustCompile(`streamprobe_[a-z_]+`).FindAllString(string(b), -1)
		if len(names) == 0 {
			t.Fatalf("%s: only %d series names", file, len(names))
		}
		for _, n := range names {
			base := strings.TrimSuffix(n, "_bucket")
			if !strings.Contains(exported, "\n"+base) && !strings.HasPrefix(exported, base) {
				t.Errorf("%s reads %s, which the daemon does not export", file, n)
			}
		}
	}
}

// Every outcome's streamprobe_runs_total series of every job is there at
// 0 before a run ends so: increase() in a rule (StreamprobeRefusals) sees
// the first one as a step from 0, not as a series that appears at 1.
func TestEveryOutcomeSeriesStartsAtZero(t *testing.T) {
	out := daemonSeries(t)
	for _, sample := range []string{"short", "long", "cancel"} {
		for _, o := range probe.Outcomes {
			line := `streamprobe_runs_total{region="eu",host="h1",target="api",sample="` + sample + `",dialect="sse",drill="none",outcome="` + string(o) + `"} 0`
			if !strings.Contains(out, line+"\n") {
				t.Errorf("missing %s", line)
			}
		}
	}
}

// streamprobe_runs_failed_total counts exactly the runs that are not
// Record.Intended, the rule of check: a cancel sample that never
// cancelled fails, one that cancelled after a chunk does not; a 404
// fails; a success of the short sample does not.
func TestRunsFailedCountsWhatIntendedRejects(t *testing.T) {
	rec := func(sample string, o probe.Outcome, chunks int) probe.Record {
		return probe.Record{Target: "api", Sample: sample, Dialect: "sse", Drill: probe.DrillNone, Outcome: o, Chunks: chunks}
	}
	recs := []probe.Record{
		rec("cancel", probe.Success, 10), rec("cancel", probe.ClientCancelled, 3),
		rec("short", probe.UpstreamError, 0), rec("short", probe.Success, 10), rec("short", probe.Success, 10),
	}
	out := daemonSeries(t, recs...)
	for sample, want := range map[string]int{"cancel": 1, "short": 1, "long": 0} {
		n := 0
		for _, r := range recs {
			if r.Sample == sample && !r.Intended() {
				n++
			}
		}
		if n != want {
			t.Fatalf("%s: Intended rejects %d, the test expects %d", sample, n, want)
		}
		line := `streamprobe_runs_failed_total{region="eu",host="h1",target="api",sample="` + sample + `",dialect="sse",drill="none"}`
		if !strings.Contains(out, line+" "+string(rune('0'+want))+"\n") {
			t.Errorf("want %s %d in:\n%s", line, want, grep(out, "streamprobe_runs_failed_total"))
		}
	}
}

func grep(s, prefix string) string {
	var b strings.Builder
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, prefix) {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}

// streamprobe_over_budget_total counts a run as check judges a cell: over
// when strictly greater than the budget; resumed runs and failed runs do
// not count.
func TestOverBudgetCountsAsCheck(t *testing.T) {
	ms := func(v float64) *float64 { return &v }
	rec := func(tfc float64) probe.Record {
		return probe.Record{Target: "api", Sample: "short", Dialect: "sse", Drill: probe.DrillNone, Outcome: probe.Success, Chunks: 3, TFCMs: ms(tfc)}
	}
	resumed, failed := rec(900), rec(900)
	resumed.Resumed = true
	failed.Outcome = probe.Timeout
	out := daemonSeries(t, rec(599.9), rec(600), rec(600.001), rec(1200), resumed, failed)
	line := `streamprobe_over_budget_total{region="eu",host="h1",target="api",sample="short",dialect="sse",drill="none",metric="tfc"} 2`
	if !strings.Contains(out, line+"\n") {
		t.Errorf("want %s in:\n%s", line, grep(out, "streamprobe_over_budget_total"))
	}
}

// The SLO rules' own series (streamprobe:...) are the names
// internal/metricnames gives them, and each SLI the rules know is one the
// config can set: a rule on another name would record or read nothing.
func TestSLORulesUseMetricNames(t *testing.T) {
	b, err := os.ReadFile("slo.yml")
	if err != nil {
		t.Fatal(err)
	}
	known := map[string]bool{}
	for _, n := range []string{metricnames.SLOErrorRatio5m, metricnames.SLOErrorRatio30m, metricnames.SLOErrorRatio1h, metricnames.SLOErrorRatio6h, metricnames.SLOObjectiveRule, metricnames.SLOBurningFast} {
		known[n] = true
		if !strings.Contains(string(b), n) {
			t.Errorf("slo.yml does not use %s", n)
		}
	}
	for _, n := range regexp.MustCompile(`streamprobe:[a-z_0-9:]+`).FindAllString(string(b), -1) {
		if !known[n] {
			t.Errorf("slo.yml names %s, which is not in internal/metricnames", n)
		}
	}
	slis := regexp.MustCompile(`slo: ([a-z_]+)\}`).FindAllStringSubmatch(string(b), -1)
	want := config.SLO{TFCWithin: new(float64), NoStall: new(float64), DrillsPass: new(float64)}.Objectives()
	seen := map[string]bool{}
	for _, m := range slis {
		seen[m[1]] = true
		if _, ok := want[m[1]]; !ok {
			t.Errorf("slo.yml records the SLI %s, which no config sets", m[1])
		}
	}
	for k := range want {
		if !seen[k] {
			t.Errorf("slo.yml has no rule for the SLI %s", k)
		}
	}
}
