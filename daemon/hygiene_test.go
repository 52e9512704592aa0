package daemon

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/streamprobe/streamprobe/dialect"
	"github.com/streamprobe/streamprobe/internal/refserver"
)

// metricSum adds up every series of the metric called name.
func metricSum(d *Daemon, name string) float64 {
	var out bytes.Buffer
	d.Metrics.Set.WritePrometheus(&out)
	var sum float64
	for _, l := range strings.Split(out.String(), "\n") {
		if strings.HasPrefix(l, name+"{") || strings.HasPrefix(l, name+" ") {
			v, _ := strconv.ParseFloat(l[strings.LastIndexByte(l, ' ')+1:], 64)
			sum += v
		}
	}
	return sum
}

// waitUntil polls cond until it holds or d passes; it reports whether it
// held. Nothing depends on how fast the machine is, only on the order of
// events.
func waitUntil(d time.Duration, cond func() bool) bool {
	for deadline := time.Now().Add(d); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if cond() {
			return true
		}
	}
	return cond()
}

// Retry-After: 10000000000 (seconds) overflowed a time.Duration and the
// daemon hammered the target; the wait is now capped at MaxRetryAfter and
// the next runs are skipped.
func TestHugeRetryAfterIsCapped(t *testing.T) {
	var hits int
	var mu sync.Mutex
	limited := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hits++
		mu.Unlock()
		w.Header().Set("Retry-After", "10000000000")
		http.Error(w, "slow down", http.StatusTooManyRequests)
	}))
	defer limited.Close()
	d, _ := testDaemon(t, fmt.Sprintf("[[target]]\nname = \"t\"\nurl = %q\nsamples = [\"short\"]\nevery = \"100ms\"\njitter = \"0s\"\n", limited.URL), nil)
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx, nil) }()
	// Runs never overlap themselves, so the first run's backoff is in place
	// before the second starts: that one is skipped, however slow the
	// machine.
	skipped := waitUntil(20*time.Second, func() bool { return metricSum(d, "streamprobe_runs_skipped_total") >= 2 })
	stop()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if !skipped || hits != 1 {
		t.Errorf("after Retry-After: 10000000000 the target was hit %d times and %v runs were skipped", hits, metricSum(d, "streamprobe_runs_skipped_total"))
	}
}

// Targets of every dialect whose in-stream error echoes the API key, cut
// around the message bound: no piece of the key is in the daemon's log,
// its results log or its metrics.
func TestEchoedKeyNeverLeaksFromTheDaemon(t *testing.T) {
	const key = "sk-daemon-echo-0123456789abcdefghijklmno"
	results := filepath.Join(t.TempDir(), "results.jsonl")
	cfg := fmt.Sprintf("results_log = %q\n", results)
	for i, echo := range refserver.EchoKeyDialects {
		srv := refserver.NewUnstarted(nil)
		srv.ScheduleFor = refserver.EchoKey(echo)
		srv.Start()
		t.Cleanup(srv.Close)
		pad := dialect.MaxMessage - len(key) + 2*i - 4 // the key straddles the cut
		cfg += fmt.Sprintf("[[target]]\nname = \"echo-%d\"\nurl = \"%s/v1?pad=%d\"\ndialect = %q\nmodel = \"m\"\nbearer_env = \"TEST_KEY\"\nsamples = [\"short\"]\nevery = \"300ms\"\njitter = \"0s\"\n",
			i, srv.URL, pad, refserver.EchoKeyDialect(echo))
	}
	d, logs := testDaemon(t, cfg, map[string]string{"TEST_KEY": key})
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx, nil) }()
	// Every target has run at least once (a job's first run may be an
	// interval late: gocron skips a start time that passed while the jobs
	// were being set up).
	ran := waitUntil(30*time.Second, func() bool {
		b, _ := os.ReadFile(results)
		for i := range refserver.EchoKeyDialects {
			if !strings.Contains(string(b), fmt.Sprintf(`"target":"echo-%d","sample":"short","sample_version":"short-v1","dialect":`, i)) {
				return false
			}
		}
		return strings.Count(string(b), `"outcome":"upstream_error"`) >= len(refserver.EchoKeyDialects)
	})
	var metricsOut bytes.Buffer
	d.Metrics.Set.WritePrometheus(&metricsOut)
	stop()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	rec, _ := os.ReadFile(results)
	if !ran {
		t.Fatalf("the targets did not answer as planned:\n%s", rec)
	}
	for name, out := range map[string]string{"log": logs.String(), "results log": string(rec), "metrics": metricsOut.String()} {
		for n := len(key); n >= 8; n-- {
			if strings.Contains(out, key[:n]) {
				t.Errorf("the %s shows %q", name, key[:n])
				break
			}
		}
	}
}
