package daemon

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/streamprobe/streamprobe/config"
	"github.com/streamprobe/streamprobe/internal/jobs"
	"github.com/streamprobe/streamprobe/internal/testenv/vmtest"
	"github.com/streamprobe/streamprobe/probe"
)

// bucketRatio is the width of a VictoriaMetrics vmrange bucket: 18
// buckets per decade. histogram_quantile answers inside the bucket that
// holds the true quantile, so it is within this factor of it.
var bucketRatio = math.Pow(10, 1.0/18)

// rawQuantile is check's percentile of vals (raw values, the index rule
// of docs/how-it-works.md "The reduction"), or false when there are none.
func rawQuantile(vals []float64, q float64) (float64, bool) {
	s := slices.Clone(vals)
	slices.Sort(s)
	return probe.Percentile(s, q*100)
}

// rankSpan returns the raw values a quantile estimate may stand for: check
// takes the value at index round(q*(n-1)), histogram_quantile the bucket
// of the value at rank ceil(q*n); in a sparse tail (a few slow gaps) the
// two can be buckets apart.
func rankSpan(vals []float64, q float64) (lo, hi float64) {
	s := slices.Clone(vals)
	slices.Sort(s)
	n := len(s)
	i := min(int(math.Floor(q*float64(n-1))), n-1)
	j := min(int(math.Ceil(q*float64(n)))-1, n-1) // the value at rank ceil(q*n)
	return s[i], s[max(i, j)]
}

var quantileQuery = regexp.MustCompile(`^histogram_quantile\((0\.\d+), sum by \(([a-z, ]+)\) \(increase_pure\((streamprobe_[a-z_]+)_seconds_bucket\{([^}]*)\}\[\$window\]\)\)\)$`)

// Every quantile query of the dashboard, against a real VictoriaMetrics
// fed by the daemon, agrees with the raw per-run values of the results
// log within one vmrange bucket: TFC, tail, handshake and reconnect of the
// runs, and every gap pooled, as check computes them (allowing for the two
// rank conventions, see rankSpan).
func TestDashboardAgreesWithTheResultsLog(t *testing.T) {
	vm := vmtest.Start(t)
	results := filepath.Join(t.TempDir(), "results.jsonl")
	cfg, err := config.Parse("dash.toml", []byte(fmt.Sprintf(`region = "r1"
host = "h1"
results_log = %q
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
`, results, vm.Addr)), jobs.Env(os.Getenv))
	if err != nil {
		t.Fatal(err)
	}
	d := New(cfg, slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError})))
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx, nil) }()
	// Enough runs of every sample and of the drill, however slow the
	// machine: counted in the results log, not waited for by the clock.
	enough := func() bool {
		n := map[string]int{}
		b, _ := os.ReadFile(results)
		for _, line := range strings.Split(string(b), "\n") {
			var r probe.Record
			if json.Unmarshal([]byte(line), &r) == nil && r.Intended() {
				n[r.Sample+"/"+r.Drill]++
			}
		}
		return n["short/none"] >= 6 && n["long/none"] >= 4 && n["cancel/none"] >= 6 && n["long/drop"] >= 4
	}
	for end := time.Now().Add(3 * time.Minute); time.Now().Before(end) && !enough(); time.Sleep(500 * time.Millisecond) {
	}
	stop()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if !enough() {
		t.Fatal("not enough runs in 3 minutes")
	}
	recs := readRecords(t, results)

	// The values check would reduce, by metric and sample (or drill).
	type key struct{ metric, group string }
	raw := map[key][]float64{}
	for _, r := range recs {
		if !r.Intended() {
			continue
		}
		add := func(metric, group string, v *float64) {
			if v != nil {
				raw[key{metric, group}] = append(raw[key{metric, group}], *v)
			}
		}
		if r.Drill == probe.DrillNone {
			if !r.Resumed {
				add("tfc", r.Sample, r.TFCMs)
			}
			add("tail", r.Sample, r.TailMs)
			// Every gap of the run, pooled across runs as check does
			// (the record carries them all, gaps.values_ms).
			raw[key{"gap", r.Sample}] = append(raw[key{"gap", r.Sample}], r.Gaps.Values...)
		} else {
			add("resume_handshake", r.Drill, r.ResumeHandshakeMs)
			add("reconnect", r.Drill, r.ReconnectMs)
		}
	}

	b, err := os.ReadFile("../deploy/grafana-dashboard.json")
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
		t.Fatal(err)
	}
	vars := strings.NewReplacer("$window", "30m", "$region", "r1", "$host", "h1", "$target", ".*")
	// The dashboard sees the gaps the log has, as many observations, once
	// the daemon's last push is searchable.
	for _, cls := range []string{"short", "long", "cancel"} {
		q := fmt.Sprintf(`sum(increase_pure(streamprobe_gap_seconds_count{sample=%q,drill="none"}[30m]))`, cls)
		waitFor(t, cls+" gaps in VictoriaMetrics equal to the results log", 30*time.Second, func() bool {
			got := vm.Query(t, q)
			return len(got) == 1 && int(math.Round(got[0].Value)) == len(raw[key{"gap", cls}])
		})
	}
	checked := 0
	for _, p := range dash.Panels {
		for _, tg := range p.Targets {
			if !strings.HasPrefix(tg.Expr, "histogram_quantile") {
				continue
			}
			m := quantileQuery.FindStringSubmatch(tg.Expr)
			if m == nil {
				t.Errorf("panel %q: a quantile query of an unknown shape (the test cannot check it): %s", p.Title, tg.Expr)
				continue
			}
			q, _ := strconv.ParseFloat(m[1], 64)
			metric := strings.TrimPrefix(m[3], "streamprobe_")
			sample := regexp.MustCompile(`sample="(\w+)"`).FindStringSubmatch(m[4])
			got := vm.Query(t, vars.Replace(tg.Expr))
			if len(got) == 0 {
				t.Errorf("panel %q: no data for %s", p.Title, tg.Expr)
				continue
			}
			for _, g := range got {
				group := g.Labels["drill"]
				if s := g.Labels["sample"]; s != "" { // a panel by region and class
					group = s
				}
				if sample != nil {
					group = sample[1]
				}
				dashMs := g.Value * 1000
				v, ok := rawQuantile(raw[key{metric, group}], q)
				if !ok {
					t.Errorf("panel %q (%s): the dashboard shows %.1f ms, the results log has no value", p.Title, group, dashMs)
					continue
				}
				lo, hi := rankSpan(raw[key{metric, group}], q)
				what := fmt.Sprintf("check's p%.0f %.1f ms of %d values (ranks span %.1f to %.1f ms)", q*100, v, len(raw[key{metric, group}]), lo, hi)
				if dashMs < lo/bucketRatio-0.001 || dashMs > hi*bucketRatio+0.001 {
					t.Errorf("panel %q (%s) p%.0f: the dashboard shows %.1f ms, %s: more than one bucket (x%.3f) apart", p.Title, group, q*100, dashMs, what, bucketRatio)
				} else {
					t.Logf("panel %q (%s) p%.0f: dashboard %.1f ms, %s", p.Title, group, q*100, dashMs, what)
				}
				checked++
			}
		}
	}
	if checked < 19 {
		t.Errorf("only %d quantiles compared", checked)
	}
}
