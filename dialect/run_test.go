package dialect_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/streamprobe/streamprobe/dialect"
	"github.com/streamprobe/streamprobe/internal/refserver"
	"github.com/streamprobe/streamprobe/internal/testenv/reftest"
	"github.com/streamprobe/streamprobe/probe"
)

// The tests of this package's own files (package dialect) read events;
// the tests of package dialect_test run each dialect end to end, through
// probe.Run, against the reference target or a real peer.

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// runProbe runs sample against tg as the daemon does: a client of its own
// (TLS settings, fresh connections), the timeout named.
func runProbe(t *testing.T, tg dialect.Target, sample string, timeout time.Duration) probe.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	s, err := dialect.LookupSample(sample)
	if err != nil {
		t.Fatal(err)
	}
	c := probe.NewClient(tg)
	t.Cleanup(c.HTTP.CloseIdleConnections)
	return probe.Run(ctx, tg, probe.Options{Sample: s, Client: c, Timeout: timeout})
}

// play runs the short sample against steps served by the reference
// target, with tg's dialect (and tg's other settings), and returns the
// result with the server's log of the connection, whose step k was due
// at reftest.Due(srv, c, k).
func play(t *testing.T, steps []refserver.Step, tg dialect.Target) (probe.Result, *refserver.Server, refserver.Conn) {
	t.Helper()
	srv := refserver.NewUnstarted(steps)
	if tg.Dialect == "ollama" {
		srv.ContentType = refserver.NDJSON
	}
	reftest.Serve(t, srv)
	if tg.Name == "" {
		tg.Name = "t"
	}
	tg.URL = srv.URL + tg.URL
	res := runProbe(t, tg, "short", reftest.RunDeadline)
	return res, srv, reftest.ClosedConn(t, srv, 0)
}

// wantOutcome fails t unless rec ended as want with want's words (the
// reason's part of the error), naming the finish reason it gave.
func wantOutcome(t *testing.T, rec probe.Record, want probe.Outcome, finish dialect.Finish, words string) {
	t.Helper()
	if rec.Outcome != want || !strings.Contains(rec.Error, words) || rec.FinishReason != finish {
		t.Errorf("outcome %s, finish_reason %q, error %q; want %s, %q, %q", rec.Outcome, rec.FinishReason, rec.Error, want, finish, words)
	}
}

// wantReasoning fails t unless the record shows n reasoning events
// (inline: in a <think> block), the first and the last the client's
// readings of steps first and last.
func wantReasoning(t *testing.T, res probe.Result, srv *refserver.Server, c refserver.Conn, n, first, last int, inline bool) {
	t.Helper()
	rec, tl := res.Record, res.Timeline
	if rec.Reasoning == nil || tl.Reasoning == nil || rec.Reasoning.Chunks != n || rec.Reasoning.Inline != inline {
		t.Fatalf("reasoning %+v, want %d events (inline %v)", rec.Reasoning, n, inline)
	}
	reftest.Milestone(t, "reasoning.first_ms", rec.Reasoning.FirstMs, tl.Start, srv, c, first, tl.Reasoning.First)
	reftest.Milestone(t, "reasoning.last_ms", rec.Reasoning.LastMs, tl.Start, srv, c, last, tl.Reasoning.Last)
}
