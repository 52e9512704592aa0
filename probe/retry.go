package probe

import "time"

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
