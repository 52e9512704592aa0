package report

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/streamprobe/streamprobe/config"
	"github.com/streamprobe/streamprobe/daemon"
	"github.com/streamprobe/streamprobe/internal/jobs"
	"github.com/streamprobe/streamprobe/internal/testenv/vmtest"
	"github.com/streamprobe/streamprobe/probe"
)

// sloRuns are a region's runs: 20 short runs, over the 600 ms TFC budget
// every fifth in eu (4) and every tenth in us (2), each stalled (the
// worked example's 259 ms gap); a resumed run (not counted); 4 drop
// drills, one failing its verdict in us and one failing before it could
// judge in eu.
func sloRuns(region string) []probe.Record {
	var out []probe.Record
	every := map[string]int{"eu": 5, "us": 10}[region]
	for i := range 20 {
		tfc := 400.0
		if i%every == 0 {
			tfc = 700
		}
		r := rec("api", "short", i, tfc)
		out = append(out, r)
	}
	resumed := rec("api", "short", 30, 900)
	resumed.Resumed = true
	out = append(out, resumed)
	for i := range 4 {
		d := rec("api", "long", 40+i, 100)
		d.Drill, d.Verdict = "drop", probe.VerdictPass
		if i == 0 && region == "us" {
			d.Verdict = probe.VerdictDuplicate
		}
		if i == 1 && region == "eu" {
			d.Outcome, d.Verdict, d.TFCMs = probe.UpstreamError, "", nil
		}
		out = append(out, d)
	}
	return out
}

const sloConfig = `[budget.short]
tfc = "600ms"
[slo.short]
tfc_within = 0.9
no_stall = 0.5
[slo.long]
drills_pass = 0.95
`

// The error budget of each objective, per region and for the fleet, from
// results logs and from VictoriaMetrics (the daemon's real series, pushed):
// the same runs and bad runs from both; the budget used is the bad share
// over 1 - objective.
func TestErrorBudget(t *testing.T) {
	cfg, err := config.Parse("slo.toml", []byte(sloConfig+"[[target]]\nname = \"api\"\nurl = \"http://x\"\n"), jobs.Env(nil))
	if err != nil {
		t.Fatal(err)
	}
	obj := Objectives{}
	for s, o := range cfg.SLOs {
		obj[s] = o.Objectives()
	}
	dir := t.TempDir()
	var files []LogFile
	for _, region := range []string{"eu", "us"} {
		p := filepath.Join(dir, region+".jsonl")
		var lines []any
		for _, r := range sloRuns(region) {
			lines = append(lines, r)
		}
		writeLog(t, p, region, lines...)
		files = append(files, LogFile{Path: p})
	}
	l, err := ReadLogsSLO(context.Background(), files, Filter{}, map[string]float64{"short": 600})
	if err != nil {
		t.Fatal(err)
	}
	fromLogs := l.ErrorBudget(obj)
	var text []string
	for _, b := range fromLogs {
		text = append(text, b.String())
	}
	want := []string{
		"api long eu: drills_pass objective 95%: 1 of 4 runs bad (25.00%): 500% of the error budget used",
		"api short eu: no_stall objective 50%: 20 of 20 runs bad (100.00%): 200% of the error budget used",
		"api short eu: tfc_within objective 90%: 4 of 20 runs bad (20.00%): 200% of the error budget used",
		"api long us: drills_pass objective 95%: 1 of 4 runs bad (25.00%): 500% of the error budget used",
		"api short us: no_stall objective 50%: 20 of 20 runs bad (100.00%): 200% of the error budget used",
		"api short us: tfc_within objective 90%: 2 of 20 runs bad (10.00%): 100% of the error budget used",
		"api long fleet: drills_pass objective 95%: 2 of 8 runs bad (25.00%): 500% of the error budget used",
		"api short fleet: no_stall objective 50%: 40 of 40 runs bad (100.00%): 200% of the error budget used",
		"api short fleet: tfc_within objective 90%: 6 of 40 runs bad (15.00%): 150% of the error budget used",
	}
	if !slices.Equal(text, want) {
		t.Errorf("from the logs:\n%s\nwant\n%s", strings.Join(text, "\n"), strings.Join(want, "\n"))
	}

	vmSrv := vmtest.Start(t)
	for _, region := range []string{"eu", "us"} {
		c, err := config.Parse(region+".toml", []byte(fmt.Sprintf("region = %q\nhost = \"%s-1\"\n%s[[target]]\nname = \"api\"\nurl = \"http://x\"\nsamples = [\"short\"]\ndrills = [\"drop\"]\n", region, region, sloConfig)), jobs.Env(os.Getenv))
		if err != nil {
			t.Fatal(err)
		}
		js, err := jobs.Build(c, "", os.Getenv)
		if err != nil {
			t.Fatal(err)
		}
		m := daemon.NewMetrics(c)
		m.Reconfigure(c, js)
		push(t, vmSrv.URL, m) // every counter at 0 first, as a daemon that just started
		time.Sleep(20 * time.Millisecond)
		for _, r := range sloRuns(region) {
			m.Observe(r)
		}
		push(t, vmSrv.URL, m)
	}
	v := VM{URL: vmSrv.URL}
	var fromVM []BudgetLine
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		vmSrv.Flush()
		if fromVM, err = v.ErrorBudget(context.Background(), Filter{Since: time.Now().Add(-time.Hour)}, obj); err != nil {
			t.Fatal(err)
		}
		if len(fromVM) == len(fromLogs) || time.Now().After(deadline) {
			break
		}
	}
	for i := range fromLogs {
		if i >= len(fromVM) || fromVM[i] != fromLogs[i] {
			t.Errorf("VictoriaMetrics says\n%v\nthe logs say\n%v", fromVM, fromLogs)
			break
		}
	}
}

// A target with a TFC budget of its own ([target.budget.<sample>] tfc, as
// "target/sample") is judged against it in the error budget; another
// target against the sample's.
func TestErrorBudgetTakesATargetsOwnTFCBudget(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "eu.jsonl")
	var lines []any
	for i, target := range []string{"global", "own"} {
		tfc := 1000.0
		lines = append(lines, probe.Record{RequestID: fmt.Sprintf("r%d", i), Target: target, Sample: "short", Drill: probe.DrillNone, Outcome: probe.Success,
			Chunks: 2, TFCMs: &tfc, Gaps: probe.Gaps{Count: 1, Values: []float64{10}}, StartedAt: "2026-12-03T10:00:00Z"})
	}
	writeLog(t, p, "eu", lines...)
	l, err := ReadLogsSLO(context.Background(), []LogFile{{Path: p}}, Filter{}, map[string]float64{"short": 600, "own/short": 2000})
	if err != nil {
		t.Fatal(err)
	}
	bad := map[string]int{}
	for _, b := range l.ErrorBudget(Objectives{"short": {SLITFCWithin: 0.9}}) {
		if b.Region == "" {
			bad[b.Target] = b.Bad
		}
	}
	if bad["global"] != 1 || bad["own"] != 0 {
		t.Errorf("bad runs %v: want global's 1000 ms over 600, own's within its own 2000", bad)
	}
}
