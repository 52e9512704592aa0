package probe

import (
	"math"
	"testing"
	"time"
)

func TestRetryAfterWait(t *testing.T) {
	f := func(ms *float64, want time.Duration) {
		t.Helper()
		if got := RetryAfterWait(ms); got != want {
			t.Errorf("RetryAfterWait(%v) = %s, want %s", ms, got, want)
		}
	}
	f(nil, 0)
	f(ptr(-5.0), 0)
	f(ptr(math.NaN()), 0)
	f(ptr(1500.0), 1500*time.Millisecond)
	f(ptr(1e13), MaxRetryAfter) // Retry-After: 10000000000
	f(ptr(math.Inf(1)), MaxRetryAfter)
	f(ptr(float64(MaxRetryAfter/time.Millisecond)), MaxRetryAfter)
}
