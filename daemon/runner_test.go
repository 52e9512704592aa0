package daemon

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// A run skipped because the target asked to wait (Retry-After) takes no
// slot and adds nothing to the schedule lag: only the one run made did.
func TestRetryAfterSkipTakesNoSlot(t *testing.T) {
	limited := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "60")
		http.Error(w, "slow down", http.StatusTooManyRequests)
	}))
	defer limited.Close()
	c := startClockDaemon(t, fmt.Sprintf("[[target]]\nname = \"t\"\nurl = %q\nsamples = [\"short\"]\nevery = \"1h\"\njitter = \"0s\"\n", limited.URL))
	t0 := c.fc.Now()
	waitFor(t, "the run that was told to wait", 30*time.Second, func() bool { return runsOf(c.Daemon, "t") == 1 })
	// The run is counted before its task is done: the hold and the job's
	// busy flag come after. The clock moves on only once the task before
	// is done and the next run is planned (else, on a slow machine, the
	// hour's run finds the job busy, an overlap, or is never due).
	settled := func(i int) bool {
		c.Daemon.busy.mu.Lock()
		_, busy := c.Daemon.busy.m["t/short"]
		c.Daemon.busy.mu.Unlock()
		_, held := c.Daemon.backoff.notBefore("t/short", time.Now())
		return !busy && held && nextRun(t, c.Daemon, "t/short").Equal(t0.Add(time.Duration(i)*time.Hour))
	}
	// Each hour on is a run due while the 60 s (real time) have not passed.
	for i := 1; i <= 5; i++ {
		waitFor(t, "the task before done and the next run planned", 30*time.Second, func() bool { return settled(i) })
		c.fc.Advance(time.Hour)
		waitFor(t, "a run skipped for Retry-After", 30*time.Second, func() bool {
			return seriesSum(c.Daemon, "streamprobe_runs_skipped_total{", `reason="retry_after"`) == i
		})
	}
	if n := runsOf(c.Daemon, "t"); n != 1 {
		t.Fatalf("%d runs, want 1", n)
	}
	if lag := seriesSum(c.Daemon, "streamprobe_schedule_lag_seconds_count{"); lag != 1 {
		t.Errorf("the schedule lag histogram counts %d runs, want 1: skipped runs entered it", lag)
	}
}
