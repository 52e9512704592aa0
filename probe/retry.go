package probe

import (
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// MaxRetryAfter caps the wait a target can ask for with Retry-After: a
// larger value (or an HTTP date far ahead) waits this long, so neither an
// overflow nor a typo stops a job for good.
const MaxRetryAfter = time.Hour

// RetryAfterWait turns a record's retry_after_ms into a wait: 0 for a
// missing, negative or NaN value, at most MaxRetryAfter, and never an
// overflowed duration.
func RetryAfterWait(ms *float64) time.Duration {
	switch {
	case ms == nil || !(*ms > 0):
		return 0
	case *ms >= float64(MaxRetryAfter/time.Millisecond):
		return MaxRetryAfter
	}
	return time.Duration(*ms * float64(time.Millisecond))
}

// retryAfter reads a Retry-After header (seconds, or an HTTP date) as ms,
// capped at MaxRetryAfter.
func retryAfter(h http.Header, now time.Time) *float64 {
	v := h.Get("Retry-After")
	if v == "" {
		return nil
	}
	limit := float64(MaxRetryAfter.Milliseconds())
	if n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64); err == nil {
		return ptr(math.Min(float64(n)*1000, limit))
	}
	if t, err := http.ParseTime(v); err == nil {
		return ptr(math.Min(math.Max(0, float64(t.Sub(now).Milliseconds())), limit))
	}
	return nil
}
