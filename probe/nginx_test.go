package probe

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/streamprobe/streamprobe/dialect"
	"github.com/streamprobe/streamprobe/internal/refserver"
	"github.com/streamprobe/streamprobe/internal/testenv/nginxtest"
	"github.com/streamprobe/streamprobe/internal/testenv/reftest"
)

// smallChat is a short OpenAI-style answer that fits nginx's first buffer
// (one page, 4 KiB): 40 content chunks of about 60 bytes, 100 ms apart
// from 100 ms, then [DONE] at 4.1 s. 100 ms apart: a busy machine that
// stalls the client for a while merges a few chunks into one read, not
// half of them.
func smallChat() []refserver.Step {
	var steps []refserver.Step
	for i := range 40 {
		steps = append(steps, refserver.Step{At: time.Duration(100+100*i) * time.Millisecond, Data: fmt.Sprintf(`{"choices":[{"index":0,"delta":{"content":"w%d"}}]}`, i)})
	}
	return append(steps, refserver.Step{At: 4100 * time.Millisecond, Data: "[DONE]"})
}

// Behind a real nginx with its defaults (proxy_buffering on, HTTP/1.0 to
// the upstream, so a body that ends with the connection), a short answer
// is held whole, headers included: the 40 chunks come in one read when the
// upstream is done, with no freeze and no late first chunk to see. The
// record names it as one burst. The same answer is not flagged with
// proxy_buffering off, with an upstream that says X-Accel-Buffering: no,
// or over HTTP/1.1 to the upstream (nginx passes each chunk of a chunked
// body on as it comes, buffering on or not).
func TestNginxDefaultBufferingIsNamed(t *testing.T) {
	t.Parallel()
	nginxtest.Bin(t)
	for _, tt := range []struct {
		name, location string
		noAccel        bool // the upstream sends X-Accel-Buffering: no
		buffered       bool
	}{
		{"nginx defaults", "", false, true},
		{"proxy_buffering off", "proxy_buffering off;", false, false},
		{"upstream sends X-Accel-Buffering: no", "", true, false},
		{"proxy_http_version 1.1, buffering on", "proxy_http_version 1.1;", false, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			up := reftest.Serve(t, refserver.NewUnstarted(smallChat())) // its log is this run's alone
			upstream := up.URL
			if tt.noAccel {
				noAccel := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					w.Header().Set("X-Accel-Buffering", "no")
					up.Handler().ServeHTTP(w, r)
				}))
				t.Cleanup(noAccel.Close)
				upstream = noAccel.URL
			}
			px := nginxtest.Start(t, upstream, tt.location)
			stalled := reftest.StallWatch()
			res := runProbe(t, dialect.Target{Name: "nginx", URL: px.URL, Dialect: "openai-chat", Model: "m"}, "short", reftest.RunDeadline)
			stall := stalled()
			rec := res.Record
			if rec.Outcome != Success || rec.Chunks != 40 {
				t.Fatalf("outcome %s (%s), %d chunks", rec.Outcome, rec.Error, rec.Chunks)
			}
			b, ok := rec.Buffering()
			t.Logf("headers %v ms, TFC %v ms, gap p50 %v ms: buffering %v: %s; longest stall of this process %v", reftest.Shown(rec.HeadersMs), reftest.Shown(rec.TFCMs), reftest.Shown(rec.Gaps.P50Ms), ok, b, stall)
			if !tt.buffered {
				// Passed on as it comes, the first chunk reaches the
				// client before the upstream writes its last one; held,
				// after (by the server's log).
				last := reftest.ClosedConn(t, up, 0).Sent
				if first := res.Timeline.Chunks()[0]; !first.Before(last[len(last)-1].First) {
					t.Errorf("first chunk at %v, after the upstream's last write at %v: held", first, last[len(last)-1].First)
				}
				if stall >= machineStall {
					// A freeze is a gap over StallThresholdMs where the
					// upstream left 100 ms: the machine that held this
					// process that long may have held nginx or the client
					// too (freezes of 2.6 s seen with both cores busy).
					t.Logf("this process stalled %v (>= %v) during the run: the verdict and the gaps say nothing of nginx", stall, machineStall)
					return
				}
			}
			if ok != tt.buffered {
				t.Fatalf("suspected buffering %v, want %v: %s", ok, tt.buffered, b)
			}
			if tt.buffered {
				// Held until the upstream's last chunk went out (at 4 s):
				// headers and chunks together, and no gap the user saw.
				if rec.HeadersMs == nil || *rec.HeadersMs < 1000 || b.Bursts != 1 || b.Freezes != 0 || !strings.HasPrefix(b.String(), "one burst: the chunks came together; ") {
					t.Errorf("headers %v ms, %d bursts, %d freezes: %s", reftest.Shown(rec.HeadersMs), b.Bursts, b.Freezes, b)
				}
				return
			}
			if rec.Gaps.P50Ms == nil || *rec.Gaps.P50Ms < 20 {
				t.Errorf("gap p50 %v ms: the upstream's 100 ms gaps did not come through", reftest.Shown(rec.Gaps.P50Ms))
			}
		})
	}
}
