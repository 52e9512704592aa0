package probe

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/streamprobe/streamprobe/dialect"
	"github.com/streamprobe/streamprobe/internal/refserver"
	"github.com/streamprobe/streamprobe/internal/testenv/reftest"
)

// brokenChunked serves three events without ids as HTTP/1.1 chunks on a
// hijacked connection, then writes tail (a broken chunk) and closes.
func brokenChunked(t *testing.T, tail string) *httptest.Server {
	t.Helper()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, bw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return
		}
		defer conn.Close()
		bw.WriteString("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n")
		for i := 1; i <= 3; i++ {
			ev := fmt.Sprintf("data: chunk %d\n\n", i)
			fmt.Fprintf(bw, "%x\r\n%s\r\n", len(ev), ev)
		}
		bw.WriteString(tail)
		bw.Flush()
	}))
	t.Cleanup(func() { ts.CloseClientConnections(); ts.Close() })
	return ts
}

// A body that breaks with no event id to resume from names the break the
// transport saw, and why the probe did not resume: never the clean-close
// message of a server that ended the body.
func TestBrokenBodyWithoutIDsNamesTheBreak(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, tail, want string
	}{
		{"bad chunk size hex", "zz\r\ndata: x\n\n\r\n", "invalid byte in chunk length"},
		{"100 KB chunk extension", "5;" + strings.Repeat("x", 100<<10) + "\r\nhello\r\n", "header line too long"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ts := brokenChunked(t, tt.tail)
			for _, noResume := range []bool{false, true} {
				rec := runProbe(t, dialect.Target{Name: "t", URL: ts.URL, Dialect: "sse", EndData: "[DONE]", NoResume: noResume}, "short", reftest.RunDeadline).Record
				t.Logf("resume off %v: %s", noResume, rec.Error)
				wantOutcome(t, rec, UpstreamError, "connection broken mid-stream", tt.want, "after 3 content chunks")
				if strings.Contains(rec.Error, "closed by the server") {
					t.Errorf("resume off %v: error %q calls a broken body a clean close", noResume, rec.Error)
				}
				if !noResume && !strings.Contains(rec.Error, "not resumed: no event id to resume from") {
					t.Errorf("error %q does not say why it was not resumed", rec.Error)
				}
				if rec.Chunks != 3 || rec.Resumed {
					t.Errorf("chunks %d resumed %v", rec.Chunks, rec.Resumed)
				}
			}
		})
	}
}

// retrySchedule is two events with ids after a retry field, then a clean
// close before the end marker: the client must wait retry before resuming.
func retrySchedule(retry string) *refserver.Server {
	srv := refserver.NewUnstarted([]refserver.Step{
		{At: 0, Raw: "retry: " + retry + "\n\n"},
		{At: 10 * time.Millisecond, ID: "1", Data: "a"},
		{At: 20 * time.Millisecond, ID: "2", Data: "b"},
		{At: 30 * time.Millisecond, ID: "3", Data: "[DONE]"},
	})
	srv.CloseAfter = 3
	return srv
}

// A server's retry that asks for a longer wait than the run has left ends
// the run at once, named as the server's wait, not as a timeout of the
// target; a retry that fits is waited and the stream resumed.
func TestServerRetryBeyondTheTimeout(t *testing.T) {
	t.Parallel()
	t.Run("retry: 3600000", func(t *testing.T) {
		t.Parallel()
		srv := reftest.Serve(t, retrySchedule("3600000"))
		start := time.Now()
		rec := runProbe(t, dialect.Target{Name: "t", URL: srv.URL, Dialect: "sse", EndData: "[DONE]"}, "short", 10*time.Second).Record
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("the run took %v: it slept on a wait it could never finish", d)
		}
		t.Log(rec.Error)
		wantOutcome(t, rec, UpstreamError, "the server asked (retry: 3600000) for a 1h0m0s wait before reconnecting, longer than the ", "s left of the run's timeout")
		if rec.Chunks != 2 || rec.ServerDrops != 1 || rec.Resumed || len(srv.Conns()) != 1 {
			t.Errorf("chunks %d server_drops %d resumed %v conns %d", rec.Chunks, rec.ServerDrops, rec.Resumed, len(srv.Conns()))
		}
	})
	t.Run("retry: 99999999999999999999", func(t *testing.T) {
		t.Parallel()
		// Over the parser's cap (a day): quoted as the cap it is, never
		// as if the server had written it.
		srv := reftest.Serve(t, retrySchedule("99999999999999999999"))
		rec := runProbe(t, dialect.Target{Name: "t", URL: srv.URL, Dialect: "sse", EndData: "[DONE]"}, "short", 10*time.Second).Record
		wantOutcome(t, rec, UpstreamError, "the server asked (retry: 86400000 or more: a day at least, the client's cap) for a 24h0m0s wait before reconnecting")
	})
	t.Run("retry: 300 fits", func(t *testing.T) {
		t.Parallel()
		srv := reftest.Serve(t, retrySchedule("300"))
		rec := runProbe(t, dialect.Target{Name: "t", URL: srv.URL, Dialect: "sse", EndData: "[DONE]"}, "short", 10*time.Second).Record
		wantOutcome(t, rec, Success)
		if !rec.Resumed || rec.ReconnectMs == nil || *rec.ReconnectMs < 300 {
			t.Errorf("resumed %v reconnect_ms %v: want a resume after the server's 300 ms", rec.Resumed, reftest.Shown(rec.ReconnectMs))
		}
	})
}

// A timeout that fires while the probe waits on the server's retry says
// so: here the first-chunk timeout, 300 ms into a 3 s wait.
func TestTimeoutDuringServerRetry(t *testing.T) {
	t.Parallel()
	r := &refserver.Responses{}
	r.Created(10 * time.Millisecond)
	steps := append([]refserver.Step{{Raw: "retry: 3000\n\n"}}, r.Steps()...)
	srv := refserver.NewUnstarted(steps)
	srv.CloseAfter = 2
	reftest.Serve(t, srv)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	tg := dialect.Target{Name: "t", URL: srv.URL, Dialect: "openai-responses"}
	c := NewClient(tg)
	t.Cleanup(c.HTTP.CloseIdleConnections)
	start := time.Now()
	rec := Run(ctx, tg, Options{Sample: dialect.Samples["short"], Client: c, FirstChunkTimeout: 300 * time.Millisecond}).Record
	if d := time.Since(start); d > 2500*time.Millisecond {
		t.Errorf("the run took %v: the first-chunk timeout did not end the wait", d)
	}
	t.Log(rec.Error)
	wantOutcome(t, rec, Timeout, "timeout: no first chunk within 300ms", "while waiting 3s before reconnecting, as the server asked (retry: 3000)")
}

// The first event arrived even when it cannot be decoded: first_event_ms
// is its reading, beside the protocol_error it makes (it was absent).
func TestFirstEventThatCannotBeDecoded(t *testing.T) {
	t.Parallel()
	srv := reftest.Serve(t, refserver.NewUnstarted([]refserver.Step{{At: 30 * time.Millisecond, Data: `{"choices":[{"delta":{"content":7}}]}`}}))
	res := runProbe(t, dialect.Target{Name: "t", URL: srv.URL, Dialect: "openai-chat"}, "short", reftest.RunDeadline)
	rec, tl := res.Record, res.Timeline
	if rec.Outcome != ProtocolError || !strings.Contains(rec.Error, "choices.delta.content: want a string") || rec.Events != 1 {
		t.Fatalf("outcome %s error %q events %d", rec.Outcome, rec.Error, rec.Events)
	}
	reftest.Milestone(t, "first_event_ms (the event that did not decode)", rec.FirstEventMs, tl.Start, srv, reftest.ClosedConn(t, srv, 0), 0, tl.FirstEvent)
}
