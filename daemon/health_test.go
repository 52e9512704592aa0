package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/streamprobe/streamprobe/internal/refserver"
	"github.com/streamprobe/streamprobe/internal/testenv/vmtest"
)

// getHealth asks /healthz of the daemon's listener.
func getHealth(t *testing.T, addr string) (int, health) {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/healthz")
	if err != nil {
		return 0, health{} // not listening yet
	}
	defer resp.Body.Close()
	var h health
	if err := json.NewDecoder(resp.Body).Decode(&h); err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, h
}

// waitHealth polls /healthz until ok says the answer is the one awaited,
// or fails after a generous deadline.
func waitHealth(t *testing.T, addr, what string, ok func(int, health) bool) health {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	var code int
	var h health
	for time.Now().Before(deadline) {
		if code, h = getHealth(t, addr); ok(code, h) {
			return h
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("/healthz never became %s: %d %+v", what, code, h)
	return h
}

// /healthz during a real push outage: ok while VictoriaMetrics takes the
// pushes; 503 with the reason once pushes have failed for PushFailWindow
// intervals, last_push_success kept apart from the last attempt; ok again
// when VictoriaMetrics is back.
func TestHealthzDuringPushOutage(t *testing.T) {
	vm := vmtest.Start(t)
	listen := freeAddr(t)
	d, _ := testDaemon(t, fmt.Sprintf(`listen = %q
[push]
url = "http://%s/api/v1/import/prometheus"
interval = "1s"
timeout = "1s"
[[target]]
name = "ref"
builtin = true
dialect = "openai-chat"
samples = ["short"]
every = "2s"
jitter = "0s"
`, listen, vm.Addr), nil)
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx, nil) }()
	defer func() {
		stop()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()

	h := waitHealth(t, listen, "ok after a successful push", func(code int, h health) bool {
		return code == 200 && h.Status == "ok" && h.LastPushSuccess != ""
	})
	if h.Version == "" || len(h.Reasons) != 0 {
		t.Errorf("healthy answer: %+v", h)
	}
	var v []vmtest.Sample
	for end := time.Now().Add(30 * time.Second); time.Now().Before(end); time.Sleep(200 * time.Millisecond) {
		if v = vm.Query(t, `streamprobe_build_info{version!="",goversion=~"go.+"}`); len(v) > 0 {
			break
		}
	}
	if len(v) != 1 || v[0].Value != 1 {
		t.Errorf("streamprobe_build_info in VictoriaMetrics: %+v", v)
	}

	outage := time.Now() // before the stop: pushes may fail from its start
	vm.Stop()
	h = waitHealth(t, listen, "unhealthy during the outage", func(code int, h health) bool { return code == 503 })
	if el := time.Since(outage); el < PushFailWindow*time.Second-time.Second {
		t.Errorf("unhealthy %v after the outage began, before the %d-interval window", el, PushFailWindow)
	}
	if h.Status != "unhealthy" || len(h.Reasons) != 1 || !strings.Contains(h.Reasons[0], "pushes have failed for") || h.LastPushError == "" {
		t.Errorf("answer during the outage: %+v", h)
	}
	okAt, _ := time.Parse(time.RFC3339, h.LastPushSuccess)
	lastAt, _ := time.Parse(time.RFC3339, h.LastPush)
	if !lastAt.After(okAt) || okAt.After(outage) {
		t.Errorf("last_push %s and last_push_success %s: the success must predate the outage, the attempt follow it", h.LastPush, h.LastPushSuccess)
	}

	vm.Restart(t)
	waitHealth(t, listen, "ok once VictoriaMetrics is back", func(code int, h health) bool { return code == 200 && h.Status == "ok" })
}

// A refused reload makes /healthz unhealthy until a reload applies; a job
// past its deadline (judged at a later time) too, by name.
func TestHealthReloadAndOverdueJobs(t *testing.T) {
	results := filepath.Join(t.TempDir(), "r.jsonl")
	text := fmt.Sprintf(`results_log = %q
[[target]]
name = "ref"
builtin = true
dialect = "sse"
samples = ["short"]
drills = ["drop"]
every = "1m"
drill_every = "0 0 1 1 *"
jitter = "0s"
max_stream = "30s"
timeout = "10s"
`, results)
	d, _ := testDaemon(t, text, nil)
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx, nil) }()
	defer func() {
		stop()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if b, _ := os.ReadFile(results); strings.Contains(string(b), `"sample":"short"`) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	now := time.Now()
	if h := d.health(now); h.Status != "ok" {
		t.Fatalf("at start: %+v", h)
	}
	// The interval job is due by 1m + 30s (max_stream) + DeadlineGrace
	// after its last run; the yearly cron drill by its next New Year +
	// 30s + DeadlineGrace.
	h := d.health(now.Add(2*time.Minute + 31*time.Second))
	if h.Status != "unhealthy" || len(h.Reasons) != 1 || !strings.HasPrefix(h.Reasons[0], "job ref/short has not run since 20") {
		t.Errorf("2m31s later: %+v", h)
	}
	h = d.health(now.AddDate(1, 0, 1))
	if len(h.Reasons) != 2 || !strings.HasPrefix(h.Reasons[0], "job ref/drop has not run since the start") {
		t.Errorf("a year later: %+v", h)
	}
	d.ReloadFailed(errors.New("probe.toml:3: target[0].evrey: unknown key"))
	if h := d.health(time.Now()); h.Status != "unhealthy" || len(h.Reasons) != 1 || !strings.Contains(h.Reasons[0], "the last reload was refused, the old config keeps running: probe.toml:3") {
		t.Errorf("after a refused reload: %+v", h)
	}
	// The status page says what /healthz says, with the reason, and each
	// job's next run as its scheduler has it: the yearly drill's is next
	// New Year at midnight (local time, the cron's), the interval job's
	// within its minute.
	rec := httptest.NewRecorder()
	d.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
	page := rec.Body.String()
	if !strings.Contains(page, `<span id="health" class="fail">unhealthy</span>: <span class="err">the last reload was refused, the old config keeps running: probe.toml:3`) ||
		!strings.Contains(page, "a reload was refused at ") {
		t.Errorf("the status page does not say the daemon is unhealthy and why:\n%.3000s", page)
	}
	newYear := time.Date(time.Now().Year()+1, 1, 1, 0, 0, 0, 0, time.Local).UTC().Format(time.RFC3339)
	if !strings.Contains(page, "next run "+newYear) {
		t.Errorf("the drill's next run %s is not on the page:\n%.3000s", newYear, page)
	}
	if m := regexp.MustCompile(`(?s)data-drill="none".*?next run [0-9TZ:-]+ \(in ([0-9hms]+)\)`).FindStringSubmatch(page); m == nil {
		t.Errorf("the interval job's next run is not on the page:\n%.3000s", page)
	} else if in, err := time.ParseDuration(m[1]); err != nil || in > 61*time.Second {
		t.Errorf("the interval job's next run is in %s, more than its minute", m[1])
	}
}

// SIGTERM while a run is in flight that ends within shutdown_timeout: the
// run is waited for and recorded whole (a success), not cancelled.
func TestShutdownWaitsForRunsWithinTimeout(t *testing.T) {
	srv := refserver.NewServer(refserver.Events(refserver.Ms(100, 400, 800, 1200), 1300*time.Millisecond))
	defer srv.Close()
	results := filepath.Join(t.TempDir(), "results.jsonl")
	d, _ := testDaemon(t, fmt.Sprintf(`results_log = %q
shutdown_timeout = "20s"
[[target]]
name = "slow"
url = %q
end_data = ""
samples = ["short"]
every = "1m"
jitter = "0s"
`, results, srv.URL), nil)
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx, nil) }()
	// SIGTERM once the run is in flight: the server has its request.
	for end := time.Now().Add(30 * time.Second); time.Now().Before(end) && len(srv.Conns()) == 0; time.Sleep(20 * time.Millisecond) {
	}
	if len(srv.Conns()) == 0 {
		t.Fatal("the run never reached the server")
	}
	stop()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(results)
	if !strings.Contains(string(b), `"outcome":"success"`) || strings.Contains(string(b), "cancelled by shutdown") || strings.Count(string(b), "\n") != 1 {
		t.Errorf("results log after a graceful shutdown:\n%s", b)
	}
}
