package probe

import (
	"context"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/streamprobe/streamprobe/dialect"
	"github.com/streamprobe/streamprobe/internal/refserver"
	"github.com/streamprobe/streamprobe/internal/testenv/reftest"
	"github.com/streamprobe/streamprobe/internal/testenv/tools"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(tools.M{M: m}) }

// Client readings against the server's schedule. A read never returns
// bytes before the server wrote them, and refserver writes no step before
// it is due (its clock starts when the request arrives, after the
// client's start), so a client reading of a step is never earlier than
// the step's due time: a lower bound that holds whatever the scheduler
// does. There is no upper bound of that kind: a busy machine delays a
// read by any amount (a clean-clone run with a load of 13 on 2 cores
// measured a close_ms 10 ms shorter than the server's interval, its read
// of the last chunk late). Where a test must catch a value that is too
// large, it compares it with the client's own readings, exactly, or with
// a bound derived from them and the schedule. How close the readings come
// to the server's writes on a quiet machine is bench/accuracy's to
// measure.

func runProbe(t *testing.T, tg dialect.Target, sample string, timeout time.Duration) Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	s, err := dialect.LookupSample(sample)
	if err != nil {
		t.Fatal(err)
	}
	c := NewClient(tg) // as the daemon builds it: TLS settings, fresh connections
	t.Cleanup(c.HTTP.CloseIdleConnections)
	// Timeout named, as the daemon's jobs do: read back from ctx's
	// deadline, it is what is left of it when Run starts (990ms of 1s once
	// the steps above took over 5 ms on a busy machine).
	return Run(ctx, tg, Options{Sample: s, Client: c, Timeout: timeout})
}

func TestGenericWorkedExampleOverLoopback(t *testing.T) {
	t.Parallel()
	steps := []refserver.Step{{At: 100 * time.Millisecond, Comment: " heartbeat"}, {At: 300 * time.Millisecond, Comment: " heartbeat"}}
	steps = append(steps, refserver.Events(refserver.Ms(412, 452, 497, 541, 588, 634, 691, 950, 998, 1044), 1051*time.Millisecond)...)
	srv := reftest.Serve(t, refserver.NewUnstarted(steps))
	res := runProbe(t, dialect.Target{Name: "t", URL: srv.URL, Dialect: "sse", EndData: "[DONE]"}, "short", reftest.RunDeadline)
	rec, tl := res.Record, res.Timeline
	if rec.Outcome != Success {
		t.Fatalf("outcome %s: %s", rec.Outcome, rec.Error)
	}
	conn := reftest.ClosedConn(t, srv, 0)
	sent := conn.Sent
	if len(sent) != 13 || rec.Chunks != 10 || tl.ChunkCount() != 10 {
		t.Fatalf("server sent %d steps, client saw %d chunks", len(sent), rec.Chunks)
	}
	if rec.Comments != 2 {
		t.Errorf("comments = %d, want 2", rec.Comments)
	}
	for i, c := range tl.Chunks() {
		reftest.NotBefore(t, "chunk "+sent[i+2].ID, c, reftest.Due(srv, conn, i+2))
	}
	reftest.MsNotBefore(t, "tfc_ms", rec.TFCMs, tl.Start, reftest.Due(srv, conn, 2))
	reftest.MsNotBefore(t, "end_ms", rec.EndMs, tl.Start, reftest.Due(srv, conn, 12))
	reftest.MsNotBefore(t, "headers_ms", rec.HeadersMs, tl.Start, conn.Start)
	if rec.TFCMs == nil || *rec.TFCMs < 400 {
		t.Errorf("heartbeats became TFC: tfc_ms = %v", reftest.Shown(rec.TFCMs))
	}
	// The milestones are the client's readings of those events, and the
	// reduction is of the client's readings, whatever the scheduler did to
	// them: gaps between consecutive chunks, tail first to last chunk,
	// close last chunk to the end marker, a stall per gap over the
	// threshold.
	reftest.MsIs(t, "tfc_ms", rec.TFCMs, reftest.MsSince(tl.Start, tl.Chunks()[0]))
	reftest.MsIs(t, "first_event_ms", rec.FirstEventMs, reftest.MsSince(tl.Start, tl.Chunks()[0]))
	reftest.MsIs(t, "first_effective_ms", rec.FirstEffectiveMs, reftest.MsSince(tl.Start, tl.Chunks()[0]))
	reftest.MsIs(t, "end_ms", rec.EndMs, reftest.MsSince(tl.Start, tl.End))
	reftest.MsIs(t, "headers_ms", rec.HeadersMs, reftest.MsSince(tl.Start, tl.Headers))
	chunksMs, endMs := tl.Millis()
	want := Reduce(chunksMs, endMs)
	reftest.MsIs(t, "tail_ms", rec.TailMs, reftest.MsSince(tl.Chunks()[0], tl.Chunks()[9]))
	reftest.MsIs(t, "close_ms", rec.CloseMs, reftest.MsSince(tl.Chunks()[9], tl.End))
	reftest.MsIs(t, "gaps.p50_ms", rec.Gaps.P50Ms, *want.GapP50)
	reftest.MsIs(t, "gaps.p95_ms", rec.Gaps.P95Ms, *want.GapP95)
	reftest.MsIs(t, "gaps.max_ms", rec.Gaps.MaxMs, *want.GapMax)
	if rec.Gaps.Count != 9 || len(rec.Gaps.Last5) != 5 || len(rec.Gaps.Values) != 9 {
		t.Fatalf("gaps %d, values %v, last5 %v", rec.Gaps.Count, rec.Gaps.Values, rec.Gaps.Last5)
	}
	stalls := 0
	for i, g := range rec.Gaps.Values {
		reftest.MsIs(t, "gap "+sent[i+3].ID, &g, reftest.MsSince(tl.Chunks()[i], tl.Chunks()[i+1]))
		if g > StallThresholdMs {
			stalls++
		}
	}
	if rec.Stalls != stalls {
		t.Errorf("stalls %d, the client's gaps %v give %d", rec.Stalls, rec.Gaps.Values, stalls)
	}
	if rec.LastEventID != "11" {
		t.Errorf("last_event_id = %q, want 11", rec.LastEventID)
	}
}

func TestSplitWritesAndCRLF(t *testing.T) {
	t.Parallel()
	for _, le := range []string{"\n", "\r\n", "\r"} {
		steps := refserver.Events(refserver.Ms(100, 200, 300), 400*time.Millisecond)
		// Cut the second event at odd offsets: inside "id", inside the
		// data, and between the two characters of CRLF.
		steps[1].Splits = []int{1, 5, 9, 14, 15}
		srv := refserver.NewUnstarted(steps)
		srv.LineEnd = le
		srv.SplitDelay = 20 * time.Millisecond
		reftest.Serve(t, srv)
		res := runProbe(t, dialect.Target{Name: "t", URL: srv.URL, Dialect: "sse", EndData: "[DONE]"}, "short", reftest.RunDeadline)
		rec, tl := res.Record, res.Timeline
		if rec.Outcome != Success || rec.Chunks != 3 {
			t.Fatalf("line end %q: outcome %s (%s), %d chunks", le, rec.Outcome, rec.Error, rec.Chunks)
		}
		c := reftest.ClosedConn(t, srv, 0)
		s := c.Sent
		// Each event is dispatched by its last piece: the second's went out
		// after at least four pauses of SplitDelay.
		for i, earliest := range []time.Time{reftest.Due(srv, c, 0), reftest.Due(srv, c, 1).Add(4 * srv.SplitDelay), reftest.Due(srv, c, 2)} {
			reftest.NotBefore(t, "dispatch "+s[i].ID, tl.Chunks()[i], earliest)
		}
		if d := s[1].Done.Sub(s[1].First); d < 80*time.Millisecond {
			t.Errorf("split event went out in %v, want its pieces 20 ms apart", d)
		}
	}
}

func TestFaultOutcomes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		setup    func(*refserver.Server)
		steps    []refserver.Step
		want     Outcome
		status   int
		errHas   []string
		timeout  time.Duration
		noResume bool
	}{
		{name: "HTTP 500", setup: func(s *refserver.Server) { s.Status = 500 }, want: UpstreamError, status: 500,
			errHas: []string{"500", "Internal Server Error", "injected status"}},
		// The first event goes out with the headers, well inside the
		// client's 250 ms wait for an error body's first bytes.
		{name: "not text/event-stream", setup: func(s *refserver.Server) { s.ContentType = "text/html" }, steps: refserver.Events(refserver.Ms(0, 20, 30), 40*time.Millisecond),
			want: ProtocolError, status: 200,
			errHas: []string{"not text/event-stream", `"text/html"`, "id: 1"}},
		// Long enough for the headers to come first on a busy machine.
		{name: "headers then nothing", setup: func(s *refserver.Server) { s.Hold = true }, steps: []refserver.Step{}, want: Timeout, status: 200,
			errHas: []string{"timeout", "no first chunk within 5s"}, timeout: 5 * time.Second},
		{name: "reset mid-stream, resume off", setup: func(s *refserver.Server) { s.ResetAfter = 2 }, noResume: true, want: UpstreamError, status: 200,
			errHas: []string{"connection broken mid-stream", "after 2 content chunks"}},
		{name: "clean close before the end marker", steps: refserver.Events(refserver.Ms(10, 20), -1), want: UpstreamError, status: 200,
			errHas: []string{"before the end marker"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			steps := tt.steps
			if steps == nil {
				steps = refserver.Events(refserver.Ms(10, 20, 30), 40*time.Millisecond)
			}
			srv := refserver.NewUnstarted(steps)
			if tt.setup != nil {
				tt.setup(srv)
			}
			reftest.Serve(t, srv)
			timeout := tt.timeout
			if timeout == 0 {
				timeout = reftest.RunDeadline
			}
			rec := runProbe(t, dialect.Target{Name: "t", URL: srv.URL, Dialect: "sse", EndData: "[DONE]", NoResume: tt.noResume}, "short", timeout).Record
			if rec.Outcome != tt.want {
				t.Fatalf("outcome %s (%s), want %s", rec.Outcome, rec.Error, tt.want)
			}
			if rec.HTTPStatus != tt.status {
				t.Errorf("http_status %d, want %d", rec.HTTPStatus, tt.status)
			}
			for _, s := range tt.errHas {
				if !strings.Contains(rec.Error, s) {
					t.Errorf("error %q lacks %q", rec.Error, s)
				}
			}
			if strings.Contains(rec.Error, "\n") {
				t.Errorf("error is not one line: %q", rec.Error)
			}
		})
	}
}

func TestConnectionRefused(t *testing.T) {
	srv := refserver.NewServer(nil)
	url := srv.URL
	srv.Close()
	rec := runProbe(t, dialect.Target{Name: "t", URL: url + "/x?key=secret", Dialect: "sse"}, "short", 2*time.Second).Record
	if rec.Outcome != UpstreamError || !strings.Contains(rec.Error, "refused") {
		t.Errorf("outcome %s, error %q", rec.Outcome, rec.Error)
	}
	if strings.Contains(rec.Error, "secret") {
		t.Errorf("error leaks the query string: %q", rec.Error)
	}
	if rec.HeadersMs != nil || rec.TFCMs != nil {
		t.Errorf("absent milestones reported: %+v", rec)
	}
}

func TestCancelSampleClosesAtOnce(t *testing.T) {
	t.Parallel()
	c := &refserver.Chat{}
	c.Role(10 * time.Millisecond)
	for i := range 20 {
		at := time.Duration(50+50*i) * time.Millisecond
		if i >= dialect.DefaultCancelAfter {
			// Quiet after the chunk that cancels: a client that closes at
			// once is gone long before the next chunk is due, however
			// busy the machine.
			at += 3 * time.Second
		}
		c.Text(at, "x")
	}
	c.Done(5 * time.Second)
	srv := reftest.Serve(t, refserver.NewUnstarted(c.Steps(false)))
	res := runProbe(t, dialect.Target{Name: "t", URL: srv.URL, Dialect: "openai-chat"}, "cancel", reftest.RunDeadline)
	rec := res.Record
	if rec.Outcome != ClientCancelled || rec.Chunks != dialect.DefaultCancelAfter {
		t.Fatalf("outcome %s, chunks %d", rec.Outcome, rec.Chunks)
	}
	conn, ok := srv.WaitClosed(0, 10*time.Second)
	if !ok || !conn.ClientGone {
		t.Fatalf("server did not see the client go away: %+v", conn)
	}
	if len(conn.Sent) != 1+dialect.DefaultCancelAfter {
		t.Errorf("the server wrote %d steps, want the role and %d chunks: the client did not close at the cancel", len(conn.Sent), dialect.DefaultCancelAfter)
	}
	if rec.Error == "" || rec.EndMs != nil {
		t.Errorf("cancel record: error %q end %v", rec.Error, reftest.Shown(rec.EndMs))
	}
}

func TestTruncatedEventAtEOF(t *testing.T) {
	t.Parallel()
	steps := refserver.Events(refserver.Ms(10, 20), -1)
	steps = append(steps, refserver.Step{At: 30 * time.Millisecond, Raw: "id: 99\ndata: cut"})
	srv := reftest.Serve(t, refserver.NewUnstarted(steps))
	rec := runProbe(t, dialect.Target{Name: "t", URL: srv.URL, Dialect: "sse"}, "short", 2*time.Second).Record
	if rec.Outcome != Success || rec.Chunks != 2 || rec.Truncated != 1 || rec.LastEventID != "2" {
		t.Errorf("outcome %s chunks %d truncated %d last id %q", rec.Outcome, rec.Chunks, rec.Truncated, rec.LastEventID)
	}
}

// machineStall is how late this test process may wake and still be
// taken as quiet by a test that judges the gaps a client saw through a
// third process (nginx): a third of the 150 ms that turns the upstream's
// 100 ms gap into a freeze (StallThresholdMs), since that process shares
// the cores and may have been held longer.
const machineStall = (StallThresholdMs - 100) * time.Millisecond / 3
