package probe

import (
	"context"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/streamprobe/streamprobe/internal/refserver"
	"github.com/streamprobe/streamprobe/resumeclient"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

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

// runDeadline bounds a run that is to end on its own: long, since a busy
// machine slows a run down by any amount, and a run returns as soon as it
// ends. (A run that is to time out has its own, short, deadline.)
const runDeadline = 30 * time.Second

// rounding is the record's: milliseconds rounded to the microsecond.
const rounding = time.Microsecond

// due is when step k that connection c sent was due: the connection's
// start plus the step's offset (on a first connection; a resumed one
// starts later on its schedule).
func due(srv *refserver.Server, c refserver.Conn, k int) time.Time {
	return c.Start.Add(srv.Schedule[c.Sent[k].Index].At)
}

// notBefore checks that a client reading is not earlier than the earliest
// time the server can have sent what it stamps.
func notBefore(t *testing.T, what string, got, earliest time.Time) {
	t.Helper()
	if got.Before(earliest.Add(-rounding)) {
		t.Errorf("%s: client reading %v before the server could send it at %v (%v early)", what,
			got.Format("15:04:05.000000"), earliest.Format("15:04:05.000000"), earliest.Sub(got))
	}
}

// msNotBefore is notBefore for a record milestone in ms from the client's
// start.
func msNotBefore(t *testing.T, what string, got *float64, start, earliest time.Time) {
	t.Helper()
	if got == nil {
		t.Errorf("%s absent, want a reading after %v", what, earliest.Sub(start))
		return
	}
	notBefore(t, what, start.Add(time.Duration(*got*float64(time.Millisecond))), earliest)
}

// milestone checks a record milestone that stamps step k of connection c:
// not before the step was due, and the client's reading of it.
func milestone(t *testing.T, what string, got *float64, tl Timeline, srv *refserver.Server, c refserver.Conn, k int, reading time.Time) {
	t.Helper()
	msNotBefore(t, what, got, tl.Start, due(srv, c, k))
	msIs(t, what, got, msSince(tl.Start, reading))
}

// msIs checks a record value against the one the client's own readings
// give, which scheduling cannot make differ (but for the rounding).
func msIs(t *testing.T, what string, got *float64, want float64) {
	t.Helper()
	if got == nil || math.Abs(*got-want) > 2*float64(rounding)/1e6 {
		t.Errorf("%s = %v, the client's readings give %.3f", what, deref(got), want)
	}
}

// msSince is t - start in ms.
func msSince(start, t time.Time) float64 { return float64(t.Sub(start)) / 1e6 }

func newClient(t *testing.T) *resumeclient.Client {
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	return &resumeclient.Client{HTTP: &http.Client{Transport: tr}}
}

func serve(t *testing.T, srv *refserver.Server) *refserver.Server {
	t.Helper()
	if srv.Server == nil {
		srv.Start()
	}
	t.Cleanup(srv.Close)
	return srv
}

func runProbe(t *testing.T, tg Target, sample string, timeout time.Duration) Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	s, err := LookupSample(sample)
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

// closedConn waits for the server to finish connection i and returns its
// log, so that every step it wrote is in it.
func closedConn(t *testing.T, srv *refserver.Server, i int) refserver.Conn {
	t.Helper()
	c, ok := srv.WaitClosed(i, 10*time.Second)
	if !ok {
		t.Fatalf("connection %d not closed on the server", i)
	}
	return c
}

func TestGenericWorkedExampleOverLoopback(t *testing.T) {
	t.Parallel()
	steps := []refserver.Step{{At: 100 * time.Millisecond, Comment: " heartbeat"}, {At: 300 * time.Millisecond, Comment: " heartbeat"}}
	steps = append(steps, refserver.Events(refserver.Ms(412, 452, 497, 541, 588, 634, 691, 950, 998, 1044), 1051*time.Millisecond)...)
	srv := serve(t, refserver.NewUnstarted(steps))
	res := runProbe(t, Target{Name: "t", URL: srv.URL, Dialect: "sse", EndData: "[DONE]"}, "short", runDeadline)
	rec, tl := res.Record, res.Timeline
	if rec.Outcome != Success {
		t.Fatalf("outcome %s: %s", rec.Outcome, rec.Error)
	}
	conn := closedConn(t, srv, 0)
	sent := conn.Sent
	if len(sent) != 13 || rec.Chunks != 10 || tl.ChunkCount() != 10 {
		t.Fatalf("server sent %d steps, client saw %d chunks", len(sent), rec.Chunks)
	}
	if rec.Comments != 2 {
		t.Errorf("comments = %d, want 2", rec.Comments)
	}
	for i, c := range tl.Chunks() {
		notBefore(t, "chunk "+sent[i+2].ID, c, due(srv, conn, i+2))
	}
	msNotBefore(t, "tfc_ms", rec.TFCMs, tl.Start, due(srv, conn, 2))
	msNotBefore(t, "end_ms", rec.EndMs, tl.Start, due(srv, conn, 12))
	msNotBefore(t, "headers_ms", rec.HeadersMs, tl.Start, conn.Start)
	if rec.TFCMs == nil || *rec.TFCMs < 400 {
		t.Errorf("heartbeats became TFC: tfc_ms = %v", deref(rec.TFCMs))
	}
	// The milestones are the client's readings of those events, and the
	// reduction is of the client's readings, whatever the scheduler did to
	// them: gaps between consecutive chunks, tail first to last chunk,
	// close last chunk to the end marker, a stall per gap over the
	// threshold.
	msIs(t, "tfc_ms", rec.TFCMs, msSince(tl.Start, tl.Chunks()[0]))
	msIs(t, "first_event_ms", rec.FirstEventMs, msSince(tl.Start, tl.Chunks()[0]))
	msIs(t, "first_effective_ms", rec.FirstEffectiveMs, msSince(tl.Start, tl.Chunks()[0]))
	msIs(t, "end_ms", rec.EndMs, msSince(tl.Start, tl.End))
	msIs(t, "headers_ms", rec.HeadersMs, msSince(tl.Start, tl.Headers))
	chunksMs, endMs := tl.Millis()
	want := Reduce(chunksMs, endMs)
	msIs(t, "tail_ms", rec.TailMs, msSince(tl.Chunks()[0], tl.Chunks()[9]))
	msIs(t, "close_ms", rec.CloseMs, msSince(tl.Chunks()[9], tl.End))
	msIs(t, "gaps.p50_ms", rec.Gaps.P50Ms, *want.GapP50)
	msIs(t, "gaps.p95_ms", rec.Gaps.P95Ms, *want.GapP95)
	msIs(t, "gaps.max_ms", rec.Gaps.MaxMs, *want.GapMax)
	if rec.Gaps.Count != 9 || len(rec.Gaps.Last5) != 5 || len(rec.Gaps.Values) != 9 {
		t.Fatalf("gaps %d, values %v, last5 %v", rec.Gaps.Count, rec.Gaps.Values, rec.Gaps.Last5)
	}
	stalls := 0
	for i, g := range rec.Gaps.Values {
		msIs(t, "gap "+sent[i+3].ID, &g, msSince(tl.Chunks()[i], tl.Chunks()[i+1]))
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

func TestOpenAIChatTimelineOverLoopback(t *testing.T) {
	t.Parallel()
	c := &refserver.Chat{Model: "m"}
	c.Heartbeat(50*time.Millisecond).Role(100*time.Millisecond).Heartbeat(150*time.Millisecond).
		Reasoning(200*time.Millisecond, "thinking").ToolArgs(220*time.Millisecond, `{"q":1}`).
		Text(300*time.Millisecond, "Hel").Text(340*time.Millisecond, "lo").Text(380*time.Millisecond, "!").
		Finish(390*time.Millisecond).Usage(395*time.Millisecond, 12, 3).Done(600 * time.Millisecond)
	srv := serve(t, refserver.NewUnstarted(c.Steps(false)))
	res := runProbe(t, Target{Name: "chat", URL: srv.URL, Dialect: "openai-chat", Model: "m"}, "short", runDeadline)
	rec, tl := res.Record, res.Timeline
	if rec.Outcome != Success {
		t.Fatalf("outcome %s: %s", rec.Outcome, rec.Error)
	}
	conn := closedConn(t, srv, 0)
	if conn.Method != http.MethodPost || conn.Path != "/v1/chat/completions" {
		t.Errorf("request %s %s", conn.Method, conn.Path)
	}
	for _, want := range []string{`"stream":true`, `"include_usage":true`, `"model":"m"`} {
		if !strings.Contains(string(conn.Body), want) {
			t.Errorf("request body lacks %s", want)
		}
	}
	// Sent: 0 hb, 1 role, 2 hb, 3 reasoning, 4 tool, 5-7 text, 8 finish, 9
	// usage, 10 done.
	msNotBefore(t, "first_event_ms (role-only delta)", rec.FirstEventMs, tl.Start, due(srv, conn, 1))
	msNotBefore(t, "first_effective_ms (reasoning)", rec.FirstEffectiveMs, tl.Start, due(srv, conn, 3))
	msNotBefore(t, "tfc_ms (first visible text)", rec.TFCMs, tl.Start, due(srv, conn, 5))
	msNotBefore(t, "end_ms ([DONE])", rec.EndMs, tl.Start, due(srv, conn, 10))
	if rec.Chunks != 3 || tl.ChunkCount() != 3 {
		t.Fatalf("chunks = %d, want 3 (role, reasoning, tool, finish and usage are not content)", rec.Chunks)
	}
	for i, c := range tl.Chunks() {
		notBefore(t, "text chunk", c, due(srv, conn, 5+i))
	}
	// Each milestone is the client's reading of its event; close runs from
	// the last text chunk (not the finish or usage chunk after it) to
	// [DONE], whose reading is not before it was due.
	msIs(t, "first_event_ms", rec.FirstEventMs, msSince(tl.Start, tl.FirstEvent))
	msIs(t, "first_effective_ms", rec.FirstEffectiveMs, msSince(tl.Start, tl.FirstEffective))
	msIs(t, "tfc_ms", rec.TFCMs, msSince(tl.Start, tl.Chunks()[0]))
	msIs(t, "end_ms", rec.EndMs, msSince(tl.Start, tl.End))
	msIs(t, "close_ms", rec.CloseMs, msSince(tl.Chunks()[2], tl.End))
	if rec.Tokens == nil || rec.Tokens.Prompt != 12 || rec.Tokens.Completion != 3 {
		t.Errorf("tokens = %+v", rec.Tokens)
	}
	// 3 completion tokens over the tail the client measured, to the
	// hundredth.
	if tail := msSince(tl.Chunks()[0], tl.Chunks()[2]); rec.VisibleTPS == nil || math.Abs(*rec.VisibleTPS-3/(tail/1000)) > 0.006 {
		t.Errorf("visible_output_tps = %v, want 3 tokens over the %.3f ms tail", deref(rec.VisibleTPS), tail)
	}
	if rec.Comments != 2 {
		t.Errorf("comments = %d", rec.Comments)
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
		serve(t, srv)
		res := runProbe(t, Target{Name: "t", URL: srv.URL, Dialect: "sse", EndData: "[DONE]"}, "short", runDeadline)
		rec, tl := res.Record, res.Timeline
		if rec.Outcome != Success || rec.Chunks != 3 {
			t.Fatalf("line end %q: outcome %s (%s), %d chunks", le, rec.Outcome, rec.Error, rec.Chunks)
		}
		c := closedConn(t, srv, 0)
		s := c.Sent
		// Each event is dispatched by its last piece: the second's went out
		// after at least four pauses of SplitDelay.
		for i, earliest := range []time.Time{due(srv, c, 0), due(srv, c, 1).Add(4 * srv.SplitDelay), due(srv, c, 2)} {
			notBefore(t, "dispatch "+s[i].ID, tl.Chunks()[i], earliest)
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
			serve(t, srv)
			timeout := tt.timeout
			if timeout == 0 {
				timeout = runDeadline
			}
			rec := runProbe(t, Target{Name: "t", URL: srv.URL, Dialect: "sse", EndData: "[DONE]", NoResume: tt.noResume}, "short", timeout).Record
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
	rec := runProbe(t, Target{Name: "t", URL: url + "/x?key=secret", Dialect: "sse"}, "short", 2*time.Second).Record
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
		if i >= DefaultCancelAfter {
			// Quiet after the chunk that cancels: a client that closes at
			// once is gone long before the next chunk is due, however
			// busy the machine.
			at += 3 * time.Second
		}
		c.Text(at, "x")
	}
	c.Done(5 * time.Second)
	srv := serve(t, refserver.NewUnstarted(c.Steps(false)))
	res := runProbe(t, Target{Name: "t", URL: srv.URL, Dialect: "openai-chat"}, "cancel", runDeadline)
	rec := res.Record
	if rec.Outcome != ClientCancelled || rec.Chunks != DefaultCancelAfter {
		t.Fatalf("outcome %s, chunks %d", rec.Outcome, rec.Chunks)
	}
	conn, ok := srv.WaitClosed(0, 10*time.Second)
	if !ok || !conn.ClientGone {
		t.Fatalf("server did not see the client go away: %+v", conn)
	}
	if len(conn.Sent) != 1+DefaultCancelAfter {
		t.Errorf("the server wrote %d steps, want the role and %d chunks: the client did not close at the cancel", len(conn.Sent), DefaultCancelAfter)
	}
	if rec.Error == "" || rec.EndMs != nil {
		t.Errorf("cancel record: error %q end %v", rec.Error, deref(rec.EndMs))
	}
}

func TestTruncatedEventAtEOF(t *testing.T) {
	t.Parallel()
	steps := refserver.Events(refserver.Ms(10, 20), -1)
	steps = append(steps, refserver.Step{At: 30 * time.Millisecond, Raw: "id: 99\ndata: cut"})
	srv := serve(t, refserver.NewUnstarted(steps))
	rec := runProbe(t, Target{Name: "t", URL: srv.URL, Dialect: "sse"}, "short", 2*time.Second).Record
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

// stallWatch measures how late this process wakes while a run goes: a
// goroutine asks to wake every 5 ms and keeps its longest lateness, which
// the returned func stops and reports.
func stallWatch() (stop func() time.Duration) {
	done, worst := make(chan struct{}), make(chan time.Duration)
	go func() {
		var w time.Duration
		for {
			at := time.Now()
			select {
			case <-done:
				worst <- w
				return
			case <-time.After(5 * time.Millisecond):
				w = max(w, time.Since(at)-5*time.Millisecond)
			}
		}
	}()
	return func() time.Duration { close(done); return <-worst }
}
