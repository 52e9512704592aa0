package report

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/streamprobe/streamprobe/config"
	"github.com/streamprobe/streamprobe/daemon"
	"github.com/streamprobe/streamprobe/internal/jobs"
	"github.com/streamprobe/streamprobe/internal/testenv/vmtest"
	"github.com/streamprobe/streamprobe/probe"
	"github.com/streamprobe/streamprobe/scorecard"
)

// agent is one daemon's metrics: the real daemon.Metrics of a config with
// this region and histogram flavour, pushed as the daemon pushes.
func agent(t *testing.T, region, histograms, target string) *daemon.Metrics {
	t.Helper()
	cfg, err := config.Parse(region+".toml", []byte(fmt.Sprintf(`region = %q
host = "%s-1"
[push]
url = "http://127.0.0.1:1/api/v1/import/prometheus"
histograms = %q
[[target]]
name = %q
builtin = true
dialect = "openai-chat"
samples = ["short"]
drills = ["drop"]
`, region, region, histograms, target)), jobs.Env(os.Getenv))
	if err != nil {
		t.Fatal(err)
	}
	return daemon.NewMetrics(cfg)
}

func push(t *testing.T, vm string, m *daemon.Metrics) {
	t.Helper()
	if err := m.Set.PushMetrics(context.Background(), vm+"/api/v1/import/prometheus", nil); err != nil {
		t.Fatal(err)
	}
}

// Two regions push the daemon's real series, in both histogram flavours
// (target "vm" with vmrange buckets, "le" with Prometheus buckets): the
// report reads them back per region and for the fleet from the summed
// buckets, and each p95 TFC lies in the bucket of the raw per-run p95.
func TestVictoriaMetricsCards(t *testing.T) {
	vmSrv := vmtest.Start(t)
	vm := vmSrv.URL
	raw := map[string][]float64{}
	pushedBuckets := 0.0
	for _, fl := range []struct{ histograms, target string }{{"vmrange", "vm"}, {"prometheus", "le"}} {
		for r, region := range []string{"eu", "us"} {
			m := agent(t, region, fl.histograms, fl.target)
			// A first push while every counter is at 0, as a daemon that
			// just started pushes.
			for i := range 10 {
				rc := rec(fl.target, "short", i, 400+float64(r*100+i*10))
				rc.Outcome = probe.Success
				if i == 0 {
					m.Observe(probe.Record{Target: fl.target, Sample: "short", Dialect: "openai-chat", Drill: "none", Outcome: probe.Timeout})
					push(t, vm, m)
				}
				m.Observe(rc)
				raw[fl.target+"/"+region] = append(raw[fl.target+"/"+region], *rc.TFCMs)
				raw[fl.target+"/fleet"] = append(raw[fl.target+"/fleet"], *rc.TFCMs)
			}
			d := rec(fl.target, "long", 20, 100)
			d.Drill, d.Resumed, d.Verdict = "drop", true, probe.VerdictPass
			if region == "us" {
				d.Verdict = probe.VerdictDuplicate
			}
			m.Observe(d)
			time.Sleep(20 * time.Millisecond)
			push(t, vm, m)
			var exp strings.Builder
			m.Set.WritePrometheus(&exp)
			for _, line := range strings.Split(exp.String(), "\n") {
				for _, h := range []string{"gap", "tail", "close", "tfc"} {
					if strings.HasPrefix(line, "streamprobe_"+h+"_seconds_bucket{") {
						pushedBuckets++
					}
				}
			}
		}
	}
	// Wait until VictoriaMetrics serves every pushed series: per agent 11
	// plain runs and a drill run, and per job every gap bucket.
	v := VM{URL: vm}
	deadline := time.Now().Add(60 * time.Second)
	for {
		vmSrv.Flush()
		runs, err := queryAll(v, `sum(last_over_time(streamprobe_runs_total[1h]))`)
		if err != nil {
			t.Fatal(err)
		}
		series, err := queryAll(v, `count(last_over_time({__name__=~"streamprobe_(gap|tail|close|tfc)_seconds_bucket"}[1h]))`)
		if err != nil {
			t.Fatal(err)
		}
		if len(runs) == 1 && runs[0].value == 48 && len(series) == 1 && series[0].value == pushedBuckets {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("VictoriaMetrics serves %v runs and %v bucket series after 60 s, want 48 and %v", runs, series, pushedBuckets)
		}
		time.Sleep(100 * time.Millisecond)
	}
	now := time.Now()
	cards, seen, err := v.CardsSeen(context.Background(), Filter{Since: now.Add(-time.Hour), Until: now.Add(2 * time.Second)}, budgets)
	if err != nil {
		t.Fatal(err)
	}
	// The hosts and regions of the series read; the buckets hold no
	// run's start time.
	if !slices.Equal(seen.Hosts, []string{"eu-1", "us-1"}) || !slices.Equal(seen.Regions, []string{"eu", "us"}) || !seen.First.IsZero() {
		t.Errorf("seen %+v, want hosts eu-1, us-1, regions eu, us, no first run", seen)
	}
	var names []string
	for _, c := range cards {
		scope := c.Region
		if c.Fleet {
			scope = "fleet"
		}
		names = append(names, c.Target+"/"+scope)
	}
	if strings.Join(names, " ") != "le/eu le/us le/fleet vm/eu vm/us vm/fleet" {
		t.Fatalf("cards %v", names)
	}
	for i, c := range cards {
		tfc := cell(t, c, "tfc").Timing
		raw95 := pct95(raw[names[i]])
		if tfc.P95Bucket == nil || raw95 < tfc.P95Bucket[0] || raw95 > tfc.P95Bucket[1] {
			t.Errorf("%s: p95 TFC %v in bucket %v, the raw per-run p95 %v is not in it", names[i], deref(tfc.P95), tfc.P95Bucket, raw95)
		}
		n := 10
		if c.Fleet {
			n = 20
		}
		out := cell(t, c, "outcomes")
		if tfc := cell(t, c, "tfc"); tfc.N != n || out.Outcomes.Counts["success"] != n || out.Outcomes.Counts["timeout"] != n/10 || !out.Over {
			t.Errorf("%s: tfc n %d, outcomes %v", names[i], tfc.N, out.Outcomes.Counts)
		}
		flav := "vmrange"
		if c.Target == "le" {
			flav = "le buckets"
		}
		if !strings.Contains(c.Resolution, flav) {
			t.Errorf("%s: resolution %q does not name %s", names[i], c.Resolution, flav)
		}
		if len(c.Drills) != 1 || c.Drills[0].Failed != (c.Region != "eu") {
			t.Errorf("%s: drills %+v", names[i], c.Drills)
		}
		if b := cell(t, c, "buffering"); !b.Buffering.Unknown {
			t.Errorf("%s: buffering from metrics should be unknown", names[i])
		}
	}
	text := cards[5].Text(false, 0)
	for _, want := range []string{"target vm, fleet (every region)", "resolution: VictoriaMetrics vmrange buckets", "runs: short 22", "drop       DUPLICATE        1 of 2 runs failed (duplicate 1, pass 1)"} {
		if !strings.Contains(text, want) {
			t.Errorf("fleet card lacks %q:\n%s", want, text)
		}
	}
}

func cell(t *testing.T, c *scorecard.Card, row string) scorecard.Cell {
	t.Helper()
	for _, ce := range c.Cells {
		if ce.Row == row {
			return ce
		}
	}
	t.Fatalf("no %s cell", row)
	return scorecard.Cell{}
}

func pct95(vals []float64) float64 {
	s := append([]float64(nil), vals...)
	for i := range s {
		for j := i + 1; j < len(s); j++ {
			if s[j] < s[i] {
				s[i], s[j] = s[j], s[i]
			}
		}
	}
	v, _ := probe.Percentile(s, 95)
	return v
}

func deref(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}

// A query API that is not there, or answers an error, is one clear line.
func TestVictoriaMetricsErrors(t *testing.T) {
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(400)
		io.WriteString(w, `{"status":"error","error":"cannot parse query:\n bad"}`)
	})}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	_, err = VM{URL: "http://" + ln.Addr().String()}.Cards(context.Background(), Filter{}, nil)
	if err == nil || err.Error() != "victoriametrics query: cannot parse query: bad" {
		t.Errorf("err %v", err)
	}
	// Not a query API (a wrong path): the status, and the URL once in a
	// hint, without its user info.
	other := httptest.NewServer(http.NotFoundHandler())
	defer other.Close()
	_, err = VM{URL: strings.Replace(other.URL, "http://", "http://probe:s3cret@", 1)}.Cards(context.Background(), Filter{}, nil)
	if want := "victoriametrics query: HTTP 404, not a query API answer (is " + other.URL + " VictoriaMetrics, or vmselect's /select/0/prometheus?)"; err == nil || err.Error() != want {
		t.Errorf("not a query API:\n got %v\nwant %s", err, want)
	}
	// Nothing there: the cause, the URL once, no encoded query, no secret.
	_, err = VM{URL: "http://probe:s3cret@127.0.0.1:1"}.Cards(context.Background(), Filter{}, nil)
	if want := "victoriametrics query: connection refused (is VictoriaMetrics running at http://127.0.0.1:1?)"; err == nil || err.Error() != want || !errors.Is(err, ErrQuery) {
		t.Errorf("nothing there:\n got %v\nwant %s", err, want)
	}
}

// queryAll runs an instant query now and collects its series.
func queryAll(v VM, q string) ([]series, error) {
	var out []series
	err := v.query(context.Background(), q, time.Now(), func(s series) { out = append(out, s) })
	return out, err
}
