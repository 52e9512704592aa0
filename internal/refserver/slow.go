package refserver

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// SlowPrefix starts a path that asks the server to play its streams
// slower: /slow/1.2/v1/chat/completions is /v1/chat/completions with
// every step 1.2 times as far from the start (and the MCP progress tool's
// steps 1.2 times as far apart, the LangGraph runs and the resumable AI SDK
// app's answers likewise). A candidate slower by a known factor, for
// compare's tests: the same server, the same schedule, stretched.
const SlowPrefix = "/slow/"

// MaxSlowdown bounds a slowdown factor the server takes.
const MaxSlowdown = 100

type slowKey struct{}

// WithSlowdown returns ctx with the slowdown factor f.
func WithSlowdown(ctx context.Context, f float64) context.Context {
	return context.WithValue(ctx, slowKey{}, f)
}

// Slowdown is the slowdown factor of ctx: 1 when none was asked for.
func Slowdown(ctx context.Context) float64 {
	if f, ok := ctx.Value(slowKey{}).(float64); ok {
		return f
	}
	return 1
}

// Stretch is d times ctx's slowdown factor.
func Stretch(ctx context.Context, d time.Duration) time.Duration {
	f := Slowdown(ctx)
	if f == 1 {
		return d
	}
	return time.Duration(float64(d) * f)
}

// SlowPath is path asked for slowdown f: path itself when f is 0 or 1.
func SlowPath(path string, f float64) string {
	if f == 0 || f == 1 {
		return path
	}
	return SlowPrefix + strconv.FormatFloat(f, 'g', -1, 64) + path
}

// slowed is r with a /slow/F prefix taken off its path and F in its
// context; r itself when it has none (or F is not a factor from 0.1 to
// MaxSlowdown, which is then an unknown path).
func slowed(r *http.Request) *http.Request {
	rest, ok := strings.CutPrefix(r.URL.Path, SlowPrefix)
	if !ok {
		return r
	}
	num, path, _ := strings.Cut(rest, "/")
	f, err := strconv.ParseFloat(num, 64)
	if err != nil || !(f >= 0.1 && f <= MaxSlowdown) {
		return r
	}
	r = r.WithContext(WithSlowdown(r.Context(), f))
	u := *r.URL
	u.Path, u.RawPath = "/"+path, ""
	r.URL = &u
	return r
}

// stretched is steps with every offset times ctx's slowdown factor (steps
// itself without one): the application servers' answers, produced on
// their schedule whoever reads them, play slower as the streams do.
func stretched(ctx context.Context, steps []Step) []Step {
	if Slowdown(ctx) == 1 {
		return steps
	}
	out := append([]Step(nil), steps...)
	for i := range out {
		out[i].At = Stretch(ctx, out[i].At)
	}
	return out
}
