package daemon

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"os"
	"path/filepath"
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

// fleetRecords reads a daemon's results log: the runs it counted (not cut
// by the shutdown), and the TFC of each short run that the TFC histogram
// took (intended, not resumed).
func fleetRecords(t *testing.T, path string) (runs int, shortTFC []float64) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var r probe.Record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if r.Error == "cancelled by shutdown" {
			continue
		}
		runs++
		if r.Sample == "short" && r.Drill == probe.DrillNone && r.Intended() && !r.Resumed && r.TFCMs != nil {
			shortTFC = append(shortTFC, *r.TFCMs/1000)
		}
	}
	return runs, shortTFC
}

// vmBucket is one vmrange bucket, in seconds.
type vmBucket struct{ lo, hi float64 }

func parseBucket(t *testing.T, s string) vmBucket {
	t.Helper()
	lo, hi, ok := strings.Cut(s, "...")
	l, err1 := strconv.ParseFloat(lo, 64)
	h, err2 := strconv.ParseFloat(hi, 64)
	if !ok || err1 != nil || err2 != nil {
		t.Fatalf("vmrange %q", s)
	}
	return vmBucket{l, h}
}

// bucketIndex is the position of v on VictoriaMetrics' vmrange grid (18
// buckets per decade, bounds 10^(k/18)): two values one bucket apart differ
// by one.
func bucketIndex(v float64) int { return int(math.Ceil(math.Log10(v)*18 - 1e-9)) }

// A fleet of two daemons in two regions pushes through a real vmagent to a
// real VictoriaMetrics. VictoriaMetrics goes away while the daemons go on
// running: vmagent buffers what they push (its pending bytes grow, the
// daemons see no failed push), and once VictoriaMetrics is back every
// sample arrives, the ones stamped during the outage included. Then
// sum(runs_total) by region equals each region's results log, each
// region's p95 TFC from the summed buckets is within one bucket of the p95
// of its raw per-run values, and every dashboard query, the
// region-against-region panels with one series per region, has data.
func TestFleetThroughVmagent(t *testing.T) {
	vmtest.Bin(t, "vmagent")
	vm := vmtest.Start(t)
	agent := vmtest.StartAgent(t, vm)

	regions := []string{"eu-west", "us-east"}
	type member struct {
		d       *Daemon
		results string
		done    chan error
	}
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	var fleet []member
	var logs []string
	for i, region := range regions {
		results := filepath.Join(t.TempDir(), "results.jsonl")
		cfgText := fmt.Sprintf(`region = %q
host = "edge-%d"
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
`, region, i+1, results, agent.Addr)
		cfg, err := config.Parse(region+".toml", []byte(cfgText), jobs.Env(os.Getenv))
		if err != nil {
			t.Fatal(err)
		}
		m := member{d: New(cfg, slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))), results: results, done: make(chan error, 1)}
		go func() { m.done <- m.d.Run(ctx, nil) }()
		fleet = append(fleet, m)
		logs = append(logs, results)
	}
	stopFleet := func() {
		stop()
		for _, m := range fleet {
			if err := <-m.done; err != nil {
				t.Error(err)
			}
		}
		fleet = nil
	}
	defer func() {
		if fleet != nil {
			stopFleet()
		}
	}()

	// Both regions land in VictoriaMetrics through vmagent, with their
	// labels, and every dashboard query has data.
	waitFor(t, "both regions' short runs in VictoriaMetrics", 90*time.Second, func() bool {
		got := vm.Query(t, `sum by (region) (streamprobe_runs_total{outcome="success",sample="short"})`)
		return len(got) == 2
	})
	hosts := vm.Query(t, `count by (region, host) (streamprobe_runs_total)`)
	if len(hosts) != 2 {
		t.Errorf("series by region and host: %+v, want eu-west/edge-1 and us-east/edge-2", hosts)
	}
	for _, h := range hosts {
		if want := map[string]string{"eu-west": "edge-1", "us-east": "edge-2"}[h.Labels["region"]]; h.Labels["host"] != want {
			t.Errorf("region %q has host %q, want %q", h.Labels["region"], h.Labels["host"], want)
		}
	}
	checkDashboard(t, vm, "../deploy/grafana-dashboard.json")
	checkRegionPanels(t, vm, "../deploy/grafana-dashboard.json", regions)

	// The outage: VictoriaMetrics stops; the daemons go on running and
	// pushing to vmagent, which keeps what they push on disk. It lasts
	// until each region has made more runs and vmagent holds data.
	lines := func(path string) int {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return bytes.Count(b, []byte("\n"))
	}
	before := map[string]int{}
	for i, m := range fleet {
		before[regions[i]] = lines(m.results)
	}
	vm.Stop()
	outageStart := time.Now()
	waitFor(t, "runs in both regions during the outage, buffered by vmagent", 120*time.Second, func() bool {
		if time.Since(outageStart) < 6*time.Second {
			return false // long enough for several pushes to be held
		}
		for i, m := range fleet {
			if lines(m.results) < before[regions[i]]+3 {
				return false
			}
		}
		return agent.Metric(t, "vmagent_remotewrite_pending_data_bytes") > 0
	})
	outageEnd := time.Now()
	vm.Restart(t)
	// Enough short runs in each region for a p95 worth comparing (a busy
	// machine makes fewer in the same time).
	waitFor(t, "5 short runs in each region's results log", 120*time.Second, func() bool {
		for _, l := range logs {
			if shortRunsSoFar(l) < 5 {
				return false
			}
		}
		return true
	})
	stopFleet()

	// Once VictoriaMetrics is back, vmagent delivers what it kept: the
	// counters equal the results logs, however long the drain takes.
	runs, tfc := map[string]int{}, map[string][]float64{}
	for i, region := range regions {
		runs[region], tfc[region] = fleetRecords(t, logs[i])
	}
	var got []vmtest.Sample
	waitFor(t, "sum(runs_total) by (region) to equal the results logs", 180*time.Second, func() bool {
		got = vm.Query(t, `sum by (region) (streamprobe_runs_total)`)
		if len(got) != len(regions) {
			return false
		}
		for _, s := range got {
			if int(s.Value) != runs[s.Labels["region"]] {
				return false
			}
		}
		return true
	})
	// The samples vmagent took during the outage are there, stamped with
	// the time it took them: buffered, not just overtaken by later totals.
	window := outageEnd.Sub(outageStart) - 2*time.Second
	for _, region := range regions {
		q := fmt.Sprintf(`count_over_time(streamprobe_runs_total{region=%q,sample="short",outcome="success"}[%ds])`, region, int(window.Seconds()))
		if s := vm.QueryAt(t, q, outageEnd.Add(-time.Second)); len(s) != 1 || s[0].Value < 2 {
			t.Errorf("%s: samples stamped during the %s outage: %+v, want vmagent's buffered pushes", region, window.Round(time.Second), s)
		}
	}

	// Per region, the p95 TFC from the summed buckets against the p95 of
	// the raw per-run values of the results log: within one bucket.
	const sel = `streamprobe_tfc_seconds_bucket{sample="short",drill="none",resumed="false"}`
	est := map[string]float64{}
	for _, s := range vm.Query(t, `histogram_quantile(0.95, sum by (region, vmrange) (`+sel+`))`) {
		est[s.Labels["region"]] = s.Value
	}
	counts := map[string]float64{}
	for _, s := range vm.Query(t, `sum by (region) (streamprobe_tfc_seconds_count{sample="short",drill="none",resumed="false"})`) {
		counts[s.Labels["region"]] = s.Value
	}
	for _, region := range regions {
		vals := slices.Sorted(slices.Values(tfc[region]))
		raw, ok := probe.Percentile(vals, 95)
		if !ok || len(vals) < 5 {
			t.Fatalf("%s: only %d short runs in the results log", region, len(vals))
		}
		if int(counts[region]) != len(vals) {
			t.Errorf("%s: the TFC histogram counts %v runs, the results log %d", region, counts[region], len(vals))
		}
		var holding []string
		for _, s := range vm.Query(t, fmt.Sprintf(`sum by (vmrange) (%s)`, strings.Replace(sel, "{", fmt.Sprintf("{region=%q,", region), 1))) {
			if b := parseBucket(t, s.Labels["vmrange"]); raw > b.lo && raw <= b.hi {
				holding = append(holding, s.Labels["vmrange"])
			}
		}
		if len(holding) != 1 {
			t.Errorf("%s: raw p95 %.4f s is in buckets %v, want exactly one pushed bucket", region, raw, holding)
		}
		e, ok := est[region]
		if d := bucketIndex(e) - bucketIndex(raw); !ok || d < -1 || d > 1 {
			t.Errorf("%s: p95 TFC from buckets %.4f s, from the raw runs %.4f s (bucket %v): more than one bucket apart", region, e, raw, holding)
		}
		t.Logf("%s: %d runs, %d short; p95 TFC raw %.1f ms (bucket %v), from the summed buckets %.1f ms", region, runs[region], len(vals), raw*1000, holding, e*1000)
	}
}

// checkRegionPanels runs the queries of the dashboard's "by region" panels
// and fails unless each returns a series for every region.
func checkRegionPanels(t *testing.T, vm *vmtest.VM, path string, regions []string) {
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
		t.Fatal(err)
	}
	n := 0
	for _, p := range dash.Panels {
		if !strings.HasSuffix(p.Title, "by region") {
			continue
		}
		for _, tg := range p.Targets {
			n++
			expr := strings.NewReplacer("$__rate_interval", "5m", "$window", "5m", "$region", ".*", "$host", ".*", "$target", ".*").Replace(tg.Expr)
			var seen []string
			for _, s := range vm.Query(t, expr) {
				if !slices.Contains(seen, s.Labels["region"]) {
					seen = append(seen, s.Labels["region"])
				}
			}
			slices.Sort(seen)
			if !slices.Equal(seen, regions) {
				t.Errorf("dashboard panel %q: regions %v, want %v (%s)", p.Title, seen, regions, expr)
			}
		}
	}
	if n < 4 {
		t.Errorf("only %d region-against-region queries in the dashboard", n)
	}
}

// shortRunsSoFar counts the successful short runs in a results log that a
// daemon is still writing (a line being written is not counted).
func shortRunsSoFar(path string) int {
	b, _ := os.ReadFile(path)
	n := 0
	for _, line := range bytes.Split(b[:bytes.LastIndexByte(b, '\n')+1], []byte("\n")) {
		var r probe.Record
		if json.Unmarshal(line, &r) == nil && r.Sample == "short" && r.Drill == probe.DrillNone && r.Intended() && !r.Resumed && r.TFCMs != nil {
			n++
		}
	}
	return n
}
