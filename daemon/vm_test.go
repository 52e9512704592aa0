package daemon

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/streamprobe/streamprobe/config"
	"github.com/streamprobe/streamprobe/internal/jobs"
	"github.com/streamprobe/streamprobe/internal/testenv/vmtest"
	"github.com/streamprobe/streamprobe/probe"
)

func freeAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// countRuns counts the records in the results log, less those cancelled by
// the shutdown (which are logged but never counted as runs).
func countRuns(t *testing.T, path string) int {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if !strings.Contains(sc.Text(), `"error":"cancelled by shutdown"`) {
			n++
		}
	}
	return n
}

// The daemon against the built-in reference target and a real
// VictoriaMetrics: series with the right labels, the TFC quantile from the
// aggregated buckets, and an outage that loses nothing.
func TestDaemonWithVictoriaMetrics(t *testing.T) {
	vm := vmtest.Start(t)
	dir := t.TempDir()
	results := filepath.Join(dir, "results.jsonl")
	cfgText := fmt.Sprintf(`region = "test-region"
host = "test-host"
results_log = %q
[labels]
env = "ci"
[push]
url = "http://%s/api/v1/import/prometheus"
interval = "1s"
timeout = "1s"
[[target]]
name = "ref"
builtin = true
dialect = "openai-chat"
samples = ["short", "long", "cancel"]
every = "2s"
jitter = "0s"
[[target]]
name = "ref-sse"
builtin = true
dialect = "sse"
samples = []
drills = ["drop"]
drill_every = "2s"
jitter = "0s"
[budget.short]
tfc = "600ms"
gap = "100ms"
tail = "2s"
[budget.long]
tfc = "1500ms"
gap = "150ms"
tail = "30s"
[budget.cancel]
tfc = "1500ms"
gap = "150ms"
tail = "30s"
`, results, vm.Addr)
	cfg, err := config.Parse("vm-test.toml", []byte(cfgText), jobs.Env(os.Getenv))
	if err != nil {
		t.Fatal(err)
	}
	d := New(cfg, slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx, nil) }()

	// Two successful short runs pushed and visible (the short sample runs
	// every 2 s; a loaded machine may take longer).
	waitFor(t, "two successful short runs in VictoriaMetrics", 60*time.Second, func() bool {
		got := vm.Query(t, `streamprobe_runs_total{outcome="success",sample="short"}`)
		return len(got) == 1 && got[0].Value >= 2
	})
	// The series, with their labels.
	got := vm.Query(t, `streamprobe_runs_total{outcome="success",sample="short"}`)
	if len(got) != 1 {
		t.Fatalf("runs_total series: %+v", got)
	}
	for k, v := range map[string]string{"target": "ref", "sample": "short", "dialect": "openai-chat", "drill": "none",
		"region": "test-region", "host": "test-host", "env": "ci"} {
		if got[0].Labels[k] != v {
			t.Errorf("label %s = %q, want %q", k, got[0].Labels[k], v)
		}
	}
	if got[0].Value < 2 {
		t.Errorf("only %v successful runs pushed", got[0].Value)
	}
	// p95 of TFC and p50 of the gaps from the summed buckets (once two
	// pushes give rate() its two points), checked against the results log
	// once the daemon has stopped.
	var q, gap []vmtest.Sample
	waitFor(t, "TFC and gap quantiles from the buckets", 60*time.Second, func() bool {
		q = vm.Query(t, `histogram_quantile(0.95, sum(rate(streamprobe_tfc_seconds_bucket{resumed="false",sample="short"}[1m])) by (vmrange))`)
		gap = vm.Query(t, `histogram_quantile(0.5, sum(rate(streamprobe_gap_seconds_bucket{sample="short"}[1m])) by (vmrange))`)
		return len(q) == 1 && len(gap) == 1
	})
	if b := vm.Query(t, `streamprobe_budget_seconds{sample="short",metric="tfc"}`); len(b) != 1 || b[0].Value != 0.6 {
		t.Errorf("budget gauge %+v", b)
	}

	// Every query of the Grafana dashboard returns data.
	checkDashboard(t, vm, "../deploy/grafana-dashboard.json")

	// Outage: the endpoint goes away for several push intervals.
	// It stays away until the daemon has counted two failed pushes,
	// however slowly a busy machine runs the push loop.
	vm.Stop()
	waitFor(t, "two failed pushes during the outage", 60*time.Second, func() bool {
		var out strings.Builder
		d.Metrics.Set.WritePrometheus(&out)
		for _, line := range strings.Split(out.String(), "\n") {
			if name, v, ok := strings.Cut(line, " "); ok && strings.HasPrefix(name, "streamprobe_push_errors_total") {
				n, err := strconv.ParseFloat(v, 64)
				return err == nil && n >= 2
			}
		}
		return false
	})
	vm.Restart(t)
	time.Sleep(3 * time.Second)
	stop()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	runs := countRuns(t, results)
	// Each quantile lies in the buckets of the raw values the results log
	// holds (every run the query saw, and more): a busy machine moves the
	// client's readings and the histograms alike. No TFC came before the
	// schedule's first chunk at 412 ms.
	tfcRange, gapRange := shortRange(t, results)
	inBuckets := func(what string, q []vmtest.Sample, r [2]float64) {
		t.Helper()
		// The vmrange bucket edges around the values (a zero is below
		// every bucket).
		edge := func(v float64, k int) float64 {
			if v <= 0 {
				return 0
			}
			return math.Pow(10, float64(bucketIndex(v)+k)/18)
		}
		if lo, hi := edge(r[0], -1), edge(r[1], 0); len(q) != 1 || q[0].Value < lo*(1-1e-9) || q[0].Value > hi*(1+1e-9) {
			t.Errorf("%s from buckets = %+v, the results log's values range from %.4f to %.4f s (buckets %.4f to %.4f)", what, q, r[0], r[1], lo, hi)
		}
	}
	inBuckets("p95 TFC", q, tfcRange)
	inBuckets("p50 gap", gap, gapRange)
	if tfcRange[0] < 0.412 {
		t.Errorf("a short run's TFC was %.4f s, before the schedule's first chunk at 0.412 s", tfcRange[0])
	}
	// The final push lands; nothing measured may be lost, however long
	// VictoriaMetrics takes to show it.
	var total []vmtest.Sample
	waitFor(t, "sum(runs_total) to equal the results log", 30*time.Second, func() bool {
		total = vm.Query(t, `sum(streamprobe_runs_total)`)
		return len(total) == 1 && int(total[0].Value) == runs
	})
	if len(total) != 1 || int(total[0].Value) != runs {
		t.Errorf("runs_total in VictoriaMetrics = %+v, results log has %d runs: something measured was lost", total, runs)
	}
	errs := vm.Query(t, `streamprobe_push_errors_total`)
	if len(errs) != 1 || errs[0].Value < 2 {
		t.Errorf("push_errors_total = %+v, want the outage's failed pushes counted", errs)
	}
}

// shortRange reads the results log's short runs: the range of their TFCs
// (not resumed) and of their gaps, in seconds.
func shortRange(t *testing.T, path string) (tfc, gap [2]float64) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	tfc, gap = [2]float64{math.Inf(1), math.Inf(-1)}, [2]float64{math.Inf(1), math.Inf(-1)}
	widen := func(r *[2]float64, v float64) { r[0], r[1] = min(r[0], v/1000), max(r[1], v/1000) }
	for _, line := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
		var r probe.Record
		if err := json.Unmarshal(line, &r); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if r.Sample != "short" {
			continue
		}
		if r.TFCMs != nil && !r.Resumed {
			widen(&tfc, *r.TFCMs)
		}
		for _, g := range r.Gaps.Values {
			widen(&gap, g)
		}
	}
	return tfc, gap
}

// checkDashboard runs every panel query of a Grafana dashboard, with its
// variables filled in, and fails on a query that returns nothing.
// dashboardGaps runs every query of the Grafana dashboard and returns the
// ones that have no data.
func dashboardGaps(t *testing.T, vm *vmtest.VM, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(b, &dash); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	n := 0
	var gaps []string
	for _, p := range dash.Panels {
		for _, tg := range p.Targets {
			expr := strings.NewReplacer("$__rate_interval", "5m", "$__range", "5m", "$window", "5m", "$region", ".*", "$host", ".*", "$target", ".*").Replace(tg.Expr)
			if len(vm.Query(t, expr)) == 0 {
				gaps = append(gaps, fmt.Sprintf("dashboard panel %q: no data for %s", p.Title, expr))
			}
			n++
		}
	}
	if n < 10 {
		t.Errorf("only %d dashboard queries", n)
	}
	return gaps
}

// checkDashboard waits until every dashboard query has data (every sample
// and drill has run and been pushed), and fails on the ones that never do.
func checkDashboard(t *testing.T, vm *vmtest.VM, path string) {
	t.Helper()
	var gaps []string
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(500 * time.Millisecond) {
		if gaps = dashboardGaps(t, vm, path); len(gaps) == 0 || time.Now().After(deadline) {
			break
		}
	}
	for _, g := range gaps {
		t.Error(g)
	}
}
