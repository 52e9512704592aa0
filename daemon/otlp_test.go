package daemon

import (
	"bytes"
	"context"
	"fmt"
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
	"github.com/streamprobe/streamprobe/internal/metricnames"
	"github.com/streamprobe/streamprobe/internal/testenv/leak"
	"github.com/streamprobe/streamprobe/internal/testenv/otelcol"
	"github.com/streamprobe/streamprobe/probe"
)

// logRecords is the results log's records less those cancelled by the
// shutdown; none while it does not exist yet.
func logRecords(t *testing.T, path string) []probe.Record {
	t.Helper()
	if _, err := os.Stat(path); err != nil {
		return nil
	}
	var out []probe.Record
	for _, r := range readRecords(t, path) {
		if r.Error != "cancelled by shutdown" {
			out = append(out, r)
		}
	}
	return out
}

// lastPoints is, of the last export that carries metric name, its data
// points with the resource's attributes, and the metric.
func lastPoints(t *testing.T, exports []otelcol.Export, name string) (otelcol.Metric, map[string]string, bool) {
	t.Helper()
	return lastOf(exports, name, func(otelcol.Metric) bool { return true })
}

// lastOf is lastPoints of the exports whose metric passes kind.
func lastOf(exports []otelcol.Export, name string, kind func(otelcol.Metric) bool) (otelcol.Metric, map[string]string, bool) {
	for i := len(exports) - 1; i >= 0; i-- {
		for _, rm := range exports[i].ResourceMetrics {
			for _, sm := range rm.ScopeMetrics {
				for _, m := range sm.Metrics {
					if m.Name == name && kind(m) {
						return m, otelcol.Attrs(rm.Resource.Attributes), true
					}
				}
			}
		}
	}
	return otelcol.Metric{}, nil, false
}

// pointFor is m's data point whose attributes hold want.
func pointFor(m otelcol.Metric, want map[string]string) (otelcol.Point, bool) {
	var pts []otelcol.Point
	switch {
	case m.Histogram != nil:
		pts = m.Histogram.DataPoints
	case m.ExponentialHistogram != nil:
		pts = m.ExponentialHistogram.DataPoints
	case m.Sum != nil:
		pts = m.Sum.DataPoints
	}
	for _, p := range pts {
		a := otelcol.Attrs(p.Attributes)
		ok := true
		for k, v := range want {
			ok = ok && a[k] == v
		}
		if ok {
			return p, true
		}
	}
	return otelcol.Point{}, false
}

// The OTLP export against the OpenTelemetry Collector's OTLP receiver on
// loopback: the GenAI names for an OpenAI-compatible target (time to
// first chunk, time per output chunk, operation duration, token usage,
// with the provider and model), MCP's client operation duration and
// streamprobe's own TFC for an MCP target, streamprobe's names for runs
// by outcome; host and region as resource attributes; explicit buckets at
// the conventions' boundaries, then, after a reload, exponential ones.
// Each histogram counts exactly the results log's runs, and its sum is
// theirs. The export's token shows in no output.
func TestOTLPExportToCollector(t *testing.T) {
	col := otelcol.Start(t)
	const auth = "Bearer otlp-secret-0123456789abcdef"
	results := filepath.Join(t.TempDir(), "results.jsonl")
	text := func(hist string) string {
		return fmt.Sprintf(`region = "eu-test"
host = "h1"
results_log = %q
[labels]
team = "probes"
[otlp]
url = %q
interval = "1s"
timeout = "1s"
histograms = %q
authorization_env = "OTLP_AUTH"
[[target]]
name = "chat"
builtin = true
dialect = "openai-chat"
model = "gpt-test"
samples = ["short"]
every = "1s"
jitter = "0s"
[[target]]
name = "tools"
builtin = true
dialect = "mcp"
samples = ["short"]
every = "1s"
jitter = "0s"
`, results, col.URL, hist)
	}
	env := map[string]string{"OTLP_AUTH": auth}
	d, logs := testDaemon(t, text("explicit"), env)
	reload := make(chan *config.Config)
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx, reload) }()
	count := func(target string) int {
		n := 0
		for _, r := range logRecords(t, results) {
			if r.Target == target {
				n++
			}
		}
		return n
	}
	waitFor(t, "3 runs of each target and an export", 60*time.Second, func() bool {
		_, _, ok := lastPoints(t, col.Received(t), metricnames.OTelTimeToFirstChunk)
		return count("chat") >= 3 && count("tools") >= 3 && ok
	})
	m, res, _ := lastPoints(t, col.Received(t), metricnames.OTelTimeToFirstChunk)
	if m.Histogram == nil || m.Unit != "s" {
		t.Fatalf("%s: not an explicit-bucket histogram in seconds: %+v", m.Name, m)
	}
	if res["host.name"] != "h1" || res["cloud.region"] != "eu-test" || res["service.name"] != "streamprobe" || res["team"] != "probes" {
		t.Errorf("resource attributes %v", res)
	}
	p, ok := pointFor(m, map[string]string{"streamprobe.target": "chat", "gen_ai.provider.name": "openai", "gen_ai.request.model": "gpt-test", "gen_ai.operation.name": "chat"})
	if !ok || !slices.Equal(p.ExplicitBounds, genAIDurationBuckets) {
		t.Errorf("chat's point: %+v (bounds want %v)", p, genAIDurationBuckets)
	}

	// Exponential histograms from a reload on: a new provider.
	nc, err := config.Parse("test.toml", []byte(text("exponential")), jobs.Env(func(k string) string { return env[k] }))
	if err != nil {
		t.Fatal(err)
	}
	reload <- nc
	waitFor(t, "an exponential export", 60*time.Second, func() bool {
		m, _, _ := lastPoints(t, col.Received(t), metricnames.OTelTimeToFirstChunk)
		return m.ExponentialHistogram != nil
	})
	stop()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	// Each provider exported once more as it stopped (the explicit one at
	// the reload, the exponential one at the stop): their last points
	// together hold every run, cumulative.
	checkAgainstLog(t, col.Received(t), logRecords(t, results))
	var metricsOut bytes.Buffer
	d.Metrics.Set.WritePrometheus(&metricsOut)
	for name, out := range map[string]string{"log": logs.String(), "metrics": metricsOut.String()} {
		if p := leak.Any(out, strings.TrimPrefix(auth, "Bearer ")); p != "" {
			t.Errorf("the %s shows %q of the OTLP token", name, p)
		}
	}
}

// checkAgainstLog compares the last export's histograms with the runs of
// the results log that they hold: counts exact, sums to rounding.
func checkAgainstLog(t *testing.T, exports []otelcol.Export, recs []probe.Record) {
	t.Helper()
	want := map[string]struct {
		n   int
		sum float64
	}{}
	add := func(k string, v float64) {
		w := want[k]
		w.n++
		w.sum += v
		want[k] = w
	}
	for _, r := range recs {
		if !r.Intended() {
			continue
		}
		tfc, gap := metricnames.OTelTimeToFirstChunk, metricnames.OTelTimePerChunk
		dur := metricnames.OTelOperationDuration
		if r.Dialect == "mcp" {
			tfc, gap, dur = metricnames.OTelTFC, metricnames.OTelGap, metricnames.OTelMCPDuration
		}
		add(dur+" "+r.Target, r.DurationMs/1000)
		if r.TFCMs != nil && !r.Resumed {
			add(tfc+" "+r.Target, *r.TFCMs/1000)
		}
		for _, g := range r.Gaps.Values {
			add(gap+" "+r.Target, g/1000)
		}
	}
	if len(want) < 6 {
		t.Fatalf("the results log holds too few runs: %v", want)
	}
	for key, w := range want {
		name, target, _ := strings.Cut(key, " ")
		n, sum := 0, 0.0
		for _, kind := range []func(otelcol.Metric) bool{
			func(m otelcol.Metric) bool { return m.Histogram != nil },
			func(m otelcol.Metric) bool { return m.ExponentialHistogram != nil },
		} {
			m, _, ok := lastOf(exports, name, kind)
			if !ok {
				t.Errorf("%s: not exported as both kinds of histogram", name)
				continue
			}
			if p, ok := pointFor(m, map[string]string{"streamprobe.target": target}); ok && p.Sum != nil {
				c, _ := strconv.Atoi(p.Count)
				n, sum = n+c, sum+*p.Sum
			}
		}
		if n != w.n || math.Abs(sum-w.sum) > 1e-6*float64(w.n) {
			t.Errorf("%s of %s: count %d sum %.6f, the results log's %d runs say count %d sum %.6f", name, target, n, sum, len(recs), w.n, w.sum)
		}
	}
	if _, _, ok := lastPoints(t, exports, metricnames.OTelMCPDuration); !ok {
		t.Errorf("no %s", metricnames.OTelMCPDuration)
	}
	m, _, _ := lastPoints(t, exports, metricnames.OTelTimeToFirstChunk)
	if _, ok := pointFor(m, map[string]string{"streamprobe.target": "tools"}); ok {
		t.Errorf("an MCP target's TFC is exported under the GenAI name")
	}
	runs, _, _ := lastPoints(t, exports, metricnames.OTelRuns)
	if p, ok := pointFor(runs, map[string]string{"streamprobe.target": "chat", "streamprobe.outcome": "success"}); !ok || runs.Sum == nil || !runs.Sum.IsMonotonic || p.AsInt == "" {
		t.Errorf("%s: %+v", metricnames.OTelRuns, runs)
	}
	tok, _, _ := lastPoints(t, exports, metricnames.OTelTokenUsage)
	if _, ok := pointFor(tok, map[string]string{"streamprobe.target": "chat", "gen_ai.token.type": "output"}); !ok {
		t.Errorf("%s: no output tokens of chat", metricnames.OTelTokenUsage)
	}
}
