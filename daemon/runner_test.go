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
	waitFor(t, "the run that was told to wait", 30*time.Second, func() bool { return runsOf(c.Daemon, "t") == 1 })
	// Each hour on is a run due while the 60 s (real time) have not passed.
	for i := 1; i <= 5; i++ {
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
