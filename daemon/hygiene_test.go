package daemon

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
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
