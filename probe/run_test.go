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

// tolerance is how far a client timestamp may be from the server's real
// send time over loopback. Typically it is well under 1 ms (bench/accuracy
// measures that); 15 ms leaves room for a machine with every core busy
// and still catches a timestamp taken at the wrong event (40 ms apart in
// these schedules) or after decoding.
const tolerance = 15 * time.Millisecond

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
	return Run(ctx, tg, Options{Sample: s, Client: c})
}

// closedConn waits for the server to finish connection i and returns its
// log, so that every step it wrote is in it.
func closedConn(t *testing.T, srv *refserver.Server, i int) refserver.Conn {
	t.Helper()
	c, ok := srv.WaitClosed(i, 2*time.Second)
	if !ok {
		t.Fatalf("connection %d not closed on the server", i)
	}
	return c
}

func near(t *testing.T, what string, got, want time.Time) {
	t.Helper()
	if d := got.Sub(want); d < -tolerance || d > tolerance {
		t.Errorf("%s: client %v vs server %v: off by %v (more than %v)", what, got.Format("15:04:05.000000"), want.Format("15:04:05.000000"), d, tolerance)
	}
}

// nearMs checks a record value against the server's real time, as ms from
// the client's start.
func nearMs(t *testing.T, what string, got *float64, start, want time.Time) {
	t.Helper()
	if got == nil {
		t.Errorf("%s absent, want %v", what, want.Sub(start))
		return
	}
	w := float64(want.Sub(start)) / 1e6
	if math.Abs(*got-w) > float64(tolerance)/1e6 {
		t.Errorf("%s = %.3f ms, server sent at %.3f ms", what, *got, w)
	}
}

func TestGenericWorkedExampleOverLoopback(t *testing.T) {
	t.Parallel()
	steps := []refserver.Step{{At: 100 * time.Millisecond, Comment: " heartbeat"}, {At: 300 * time.Millisecond, Comment: " heartbeat"}}
	steps = append(steps, refserver.Events(refserver.Ms(412, 452, 497, 541, 588, 634, 691, 950, 998, 1044), 1051*time.Millisecond)...)
	srv := serve(t, refserver.NewUnstarted(steps))
	res := runProbe(t, Target{Name: "t", URL: srv.URL, Dialect: "sse", EndData: "[DONE]"}, "short", 5*time.Second)
	rec, tl := res.Record, res.Timeline
	if rec.Outcome != Success {
		t.Fatalf("outcome %s: %s", rec.Outcome, rec.Error)
	}
	conn := closedConn(t, srv, 0)
	sent := conn.Sent
	if len(sent) != 13 || rec.Chunks != 10 || len(tl.Chunks) != 10 {
		t.Fatalf("server sent %d steps, client saw %d chunks", len(sent), rec.Chunks)
	}
	if rec.Comments != 2 {
		t.Errorf("comments = %d, want 2", rec.Comments)
	}
	for i, c := range tl.Chunks {
		near(t, "chunk "+sent[i+2].ID, c, sent[i+2].Done)
	}
	nearMs(t, "tfc_ms", rec.TFCMs, tl.Start, sent[2].Done)
	nearMs(t, "first_event_ms", rec.FirstEventMs, tl.Start, sent[2].Done)
	nearMs(t, "first_effective_ms", rec.FirstEffectiveMs, tl.Start, sent[2].Done)
	nearMs(t, "end_ms", rec.EndMs, tl.Start, sent[12].Done)
	nearMs(t, "headers_ms", rec.HeadersMs, tl.Start, conn.Start)
	if rec.TFCMs == nil || *rec.TFCMs < 400 {
		t.Errorf("heartbeats became TFC: tfc_ms = %v", deref(rec.TFCMs))
	}
	// The reduction of what the server really sent (its timers can fire
	// late on a loaded machine) must match the client's, within the
	// loopback tolerance.
	var sentMs []float64
	for _, st := range sent[2:12] {
		sentMs = append(sentMs, float64(st.Done.Sub(tl.Start))/1e6)
	}
	endMs := float64(sent[12].Done.Sub(tl.Start)) / 1e6
	want := Reduce(sentMs, &endMs)
	f := func(name string, got, want *float64) {
		t.Helper()
		if got == nil || want == nil || math.Abs(*got-*want) > float64(tolerance)/1e6 {
			t.Errorf("%s = %v, server's real value %v", name, deref(got), deref(want))
		}
	}
	f("tail_ms", rec.TailMs, want.Tail)
	f("close_ms", rec.CloseMs, want.Close)
	f("gaps.p50_ms", rec.Gaps.P50Ms, want.GapP50)
	f("gaps.p95_ms", rec.Gaps.P95Ms, want.GapP95)
	f("gaps.max_ms", rec.Gaps.MaxMs, want.GapMax)
	if rec.Gaps.Count != 9 || len(rec.Gaps.Last5) != 5 {
		t.Errorf("gaps %d, last5 %v", rec.Gaps.Count, rec.Gaps.Last5)
	}
	// The stall count of what the server really sent (the scheduled 259 ms
	// gap may really be 249 ms when a timer fires late), unless the client
	// and the server saw one gap on either side of the threshold (within
	// the tolerance checked above).
	ambiguous := len(want.Gaps) != len(rec.Gaps.Values)
	for i := 0; !ambiguous && i < len(want.Gaps); i++ {
		ambiguous = (want.Gaps[i] > StallThresholdMs) != (rec.Gaps.Values[i] > StallThresholdMs)
	}
	if !ambiguous && rec.Stalls != want.Stalls {
		t.Errorf("stalls %d, server's real gaps give %d", rec.Stalls, want.Stalls)
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
	res := runProbe(t, Target{Name: "chat", URL: srv.URL, Dialect: "openai-chat", Model: "m"}, "short", 5*time.Second)
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
	s := conn.Sent // 0 hb, 1 role, 2 hb, 3 reasoning, 4 tool, 5-7 text, 8 finish, 9 usage, 10 done
	nearMs(t, "first_event_ms (role-only delta)", rec.FirstEventMs, tl.Start, s[1].Done)
	nearMs(t, "first_effective_ms (reasoning)", rec.FirstEffectiveMs, tl.Start, s[3].Done)
	nearMs(t, "tfc_ms (first visible text)", rec.TFCMs, tl.Start, s[5].Done)
	nearMs(t, "end_ms ([DONE])", rec.EndMs, tl.Start, s[10].Done)
	if rec.Chunks != 3 {
		t.Errorf("chunks = %d, want 3 (role, reasoning, tool, finish and usage are not content)", rec.Chunks)
	}
	for i, c := range tl.Chunks {
		near(t, "text chunk", c, s[5+i].Done)
	}
	if wantClose := float64(s[10].Done.Sub(s[7].Done)) / 1e6; rec.CloseMs == nil || math.Abs(*rec.CloseMs-wantClose) > 5 || wantClose < 100 {
		t.Errorf("close_ms = %v, server sent [DONE] %.1f ms after the last chunk (scheduled 220)", deref(rec.CloseMs), wantClose)
	}
	if rec.Tokens == nil || rec.Tokens.Prompt != 12 || rec.Tokens.Completion != 3 {
		t.Errorf("tokens = %+v", rec.Tokens)
	}
	// 3 completion tokens over the tail the server really sent (80 ms
	// scheduled), within the loopback tolerance on each end.
	tail := s[7].Done.Sub(s[5].Done).Seconds()
	lo, hi := 3/(tail+0.01), 3/max(tail-0.01, 0.001)
	if rec.VisibleTPS == nil || *rec.VisibleTPS < lo-0.01 || *rec.VisibleTPS > hi+0.01 {
		t.Errorf("visible_output_tps = %v, want %.2f to %.2f (3 tokens over the real %.1f ms tail)", deref(rec.VisibleTPS), lo, hi, tail*1000)
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
		res := runProbe(t, Target{Name: "t", URL: srv.URL, Dialect: "sse", EndData: "[DONE]"}, "short", 5*time.Second)
		rec, tl := res.Record, res.Timeline
		if rec.Outcome != Success || rec.Chunks != 3 {
			t.Fatalf("line end %q: outcome %s (%s), %d chunks", le, rec.Outcome, rec.Error, rec.Chunks)
		}
		s := closedConn(t, srv, 0).Sent
		for i := range 3 {
			near(t, "dispatch "+s[i].ID, tl.Chunks[i], s[i].Done)
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
		{name: "not text/event-stream", setup: func(s *refserver.Server) { s.ContentType = "text/html" }, want: ProtocolError, status: 200,
			errHas: []string{"not text/event-stream", `"text/html"`, "id: 1"}},
		{name: "headers then nothing", setup: func(s *refserver.Server) { s.Hold = true }, steps: []refserver.Step{}, want: Timeout, status: 200,
			errHas: []string{"timeout", "no first chunk within 300ms"}, timeout: 300 * time.Millisecond},
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
				timeout = 5 * time.Second
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
		c.Text(time.Duration(50+50*i)*time.Millisecond, "x")
	}
	c.Done(2 * time.Second)
	srv := serve(t, refserver.NewUnstarted(c.Steps(false)))
	res := runProbe(t, Target{Name: "t", URL: srv.URL, Dialect: "openai-chat"}, "cancel", 5*time.Second)
	rec := res.Record
	if rec.Outcome != ClientCancelled || rec.Chunks != DefaultCancelAfter {
		t.Fatalf("outcome %s, chunks %d", rec.Outcome, rec.Chunks)
	}
	conn, ok := srv.WaitClosed(0, time.Second)
	if !ok || !conn.ClientGone {
		t.Fatalf("server did not see the client go away: %+v", conn)
	}
	if d := conn.Closed.Sub(res.Timeline.Closed); d > 100*time.Millisecond {
		t.Errorf("server saw the close %v after the cancel, want under 100 ms", d)
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
