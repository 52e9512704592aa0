package probe

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/streamprobe/streamprobe/dialect"
	"github.com/streamprobe/streamprobe/internal/refserver"
	"github.com/streamprobe/streamprobe/internal/testenv/reftest"
)

// drillSchedule is the demo's drill stream: ids 1..12, then [DONE] (13).
func drillSchedule() []refserver.Step { return refserver.DrillEvents() }

// gapAfter is drillSchedule with every event after the nth one gap later.
func gapAfter(n int, gap time.Duration) []refserver.Step {
	at := make([]time.Duration, 12)
	for i := range at {
		at[i] = time.Duration(100+40*i) * time.Millisecond
		if i >= n {
			at[i] += gap
		}
	}
	return refserver.Events(at, 600*time.Millisecond+gap)
}

// firstSentAfter is the id of the first event the server sent on the
// connection that asked to resume from lastID, from the server's log.
func firstSentAfter(t *testing.T, srv *refserver.Server, lastID string) string {
	t.Helper()
	for i := 0; i < 4; i++ {
		if c := reftest.ClosedConn(t, srv, i); c.LastEventID == lastID {
			if len(c.Sent) == 0 {
				t.Fatalf("the server sent nothing on the connection from %q", lastID)
			}
			return c.Sent[0].ID
		}
	}
	t.Fatalf("no connection resumed from %q", lastID)
	return ""
}

func runDrill(t *testing.T, srv *refserver.Server, d Drill) Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), reftest.RunDeadline)
	defer cancel()
	return Run(ctx, dialect.Target{Name: "t", URL: srv.URL, Dialect: "sse", EndData: "[DONE]"},
		Options{Sample: dialect.Samples["long"], Client: reftest.NewClient(t), Drill: d})
}

func TestDrillVerdicts(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		schedule   []refserver.Step // nil: drillSchedule()
		setup      func(*refserver.Server)
		drill      Drill
		verdict    Verdict
		duplicates int
		missed     int
		replayed   int
		chunks     int
		sent       string
		stale      string
		detail     string
	}{
		{name: "drop, correct server", drill: Drill{Name: DrillDrop}, verdict: VerdictPass, chunks: 12, sent: "3",
			detail: "every event once, in order"},
		{name: "drop, off-by-one replay", setup: func(s *refserver.Server) { s.Bug = refserver.Inclusive }, drill: Drill{Name: DrillDrop},
			verdict: VerdictDuplicate, duplicates: 1, replayed: 1, chunks: 12, sent: "3",
			detail: "resume replayed id 3 again: off-by-one replay (sent Last-Event-ID: 3)"},
		{name: "drop, skip", setup: func(s *refserver.Server) { s.Bug = refserver.Skip }, drill: Drill{Name: DrillDrop},
			verdict: VerdictMissed, missed: 1, chunks: 11, sent: "3",
			detail: "resume skipped 1 event(s): sent Last-Event-ID: 3, next id was 5"},
		{name: "drop, restart", setup: func(s *refserver.Server) { s.Bug = refserver.Restart }, drill: Drill{Name: DrillDrop},
			verdict: VerdictRestarted, duplicates: 3, replayed: 3, chunks: 12, sent: "3",
			detail: "server ignored Last-Event-ID: 3 and restarted from the first event (id 1)"},
		{name: "drop, mismatch", setup: func(s *refserver.Server) { s.Bug = refserver.Mismatch }, drill: Drill{Name: DrillDrop},
			verdict: VerdictMismatch, replayed: 1, chunks: 13, sent: "3",
			detail: "id 3 arrived again with different data"},
		// Event 4 comes at 220 ms, event 5 a second later: the drop at
		// 720 ms has half a second of margin on either side, whatever the
		// load on the machine (at 230 ms between events 40 ms apart, a busy
		// CI machine once delivered event 4 after the drop).
		// The id sent is the last one read by then: 4 unless a busy
		// machine read the first events later still (sent: "" checks
		// it against the client's timeline).
		{name: "drop at a time, mid-stream", schedule: gapAfter(4, time.Second), drill: Drill{Name: DrillDrop, DropAt: 720 * time.Millisecond}, verdict: VerdictPass, chunks: 12},
		{name: "duplicate, correct server", drill: Drill{Name: DrillDuplicate}, verdict: VerdictPass,
			// 1-3, drop; from 3: 4-6, drop; from 3 again: 4-6 again, drop;
			// three back from 6 is 3, already sent twice, so from 2: 3-6
			// again, then 7-12.
			duplicates: 7, replayed: 7, chunks: 12, sent: "2"},
		{name: "duplicate, off-by-one replay", setup: func(s *refserver.Server) { s.Bug = refserver.Inclusive }, drill: Drill{Name: DrillDuplicate},
			// 1-3, drop; from 3: 3-5, drop; from 3: 3-5, drop; from 2
			// (three back from 5): 2-5 again, then 6-12.
			verdict: VerdictDuplicate, chunks: 12, duplicates: 8, replayed: 8, sent: "2",
			detail: "resume replayed id 3 again: off-by-one replay (sent Last-Event-ID: 3)"},
		{name: "server drops, client resumes by itself", setup: func(s *refserver.Server) { s.ResetAfter = 5 }, drill: Drill{Name: DrillDuplicate, DropAfter: 100},
			verdict: VerdictPass, chunks: 12, sent: "5"},
		{name: "id on a cut-off event is not trusted", setup: func(s *refserver.Server) { s.CutAt = 4 }, drill: Drill{Name: DrillDrop, DropAfter: 100},
			verdict: VerdictPass, chunks: 12, sent: "4"},
		{name: "stale, error event", drill: Drill{Name: DrillStale}, verdict: VerdictStaleOK, chunks: 3, sent: dialect.DefaultStaleID, stale: "error_event"},
		{name: "stale, 410", setup: func(s *refserver.Server) { s.Stale = refserver.StaleGone }, drill: Drill{Name: DrillStale},
			verdict: VerdictStaleOK, chunks: 3, sent: dialect.DefaultStaleID, stale: "http_410"},
		{name: "stale, 409 (not retried: the answer to the stale id)", setup: func(s *refserver.Server) {
			s.StatusFor = func(r *http.Request, _ []byte) (int, string) {
				if r.Header.Get("Last-Event-ID") == dialect.DefaultStaleID {
					return http.StatusConflict, ""
				}
				return 0, ""
			}
		}, drill: Drill{Name: DrillStale}, verdict: VerdictStaleOK, chunks: 3, sent: dialect.DefaultStaleID, stale: "http_409"},
		{name: "stale, 204", setup: func(s *refserver.Server) { s.Stale = refserver.StaleNoContent }, drill: Drill{Name: DrillStale},
			verdict: VerdictStaleOK, chunks: 3, sent: dialect.DefaultStaleID, stale: "http_204"},
		{name: "stale, reset marker", setup: func(s *refserver.Server) { s.Stale = refserver.StaleReset }, drill: Drill{Name: DrillStale},
			verdict: VerdictStaleOK, chunks: 3, sent: dialect.DefaultStaleID, stale: "reset_event"},
		// The live tail starts where the server's clock stands when the
		// client comes back: event 4 after a second of quiet after event
		// 3, unless a busy machine reconnects later still (ids 5 and 10
		// seen under load). The id named is the first the server sent on
		// the stale connection (%s, from its log).
		{name: "stale, silent live tail", schedule: gapAfter(3, time.Second), setup: func(s *refserver.Server) { s.Stale = refserver.StaleLive }, drill: Drill{Name: DrillStale},
			verdict: VerdictUndefinedStale, chunks: 3, sent: dialect.DefaultStaleID, detail: "carried on from id %s with no reset marker (live tail)"},
		{name: "stale, evicted by the retention window", setup: func(s *refserver.Server) { s.Retention = 2 }, drill: Drill{Name: DrillStale, StaleID: "1"},
			verdict: VerdictStaleOK, chunks: 3, sent: "1", stale: "error_event"},
		// A given id the server still has is not stale: it resumes from it
		// (id 2 follows 1) as it should, and the drill says so, no failure.
		{name: "stale id inside the retention window: a normal resume", drill: Drill{Name: DrillStale, StaleID: "1"},
			verdict: VerdictNotStale, chunks: 3, sent: "1", detail: "Last-Event-ID: 1 is not stale on this server: it resumed from it as from any id, with id 2 next"},
		// ... but one it let go, answered with the live tail, is still the bug.
		{name: "stale id evicted, answered with the live tail", schedule: gapAfter(3, time.Second), setup: func(s *refserver.Server) { s.Retention = 2; s.Stale = refserver.StaleLive },
			drill: Drill{Name: DrillStale, StaleID: "1"}, verdict: VerdictUndefinedStale, chunks: 3, sent: "1", detail: "carried on from id 4 with no reset marker (live tail)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			sched := tt.schedule
			if sched == nil {
				sched = drillSchedule()
			}
			srv := refserver.NewUnstarted(sched)
			if tt.setup != nil {
				tt.setup(srv)
			}
			reftest.Serve(t, srv)
			res := runDrill(t, srv, tt.drill)
			rec := res.Record
			if rec.Verdict != tt.verdict {
				t.Fatalf("verdict %s (%s), want %s; outcome %s %s", rec.Verdict, rec.ResumeDetail, tt.verdict, rec.Outcome, rec.Error)
			}
			if rec.Outcome != Success {
				t.Errorf("outcome %s: %s", rec.Outcome, rec.Error)
			}
			if rec.Duplicates != tt.duplicates || rec.Missed != tt.missed || rec.Replayed != tt.replayed {
				t.Errorf("duplicates %d missed %d replayed %d; want %d %d %d", rec.Duplicates, rec.Missed, rec.Replayed, tt.duplicates, tt.missed, tt.replayed)
			}
			if rec.Chunks != tt.chunks {
				t.Errorf("chunks %d, want %d", rec.Chunks, tt.chunks)
			}
			sent := tt.sent
			if tl := res.Timeline; sent == "" && len(tl.Breaks) > 0 && len(tl.Reconnects) > 0 {
				sent = strconv.Itoa(tl.Breaks[0]) // ids 1, 2, ... in order: the last read before the drop
				if drop := tl.Reconnects[0].Drop.Sub(tl.Start); drop < tt.drill.DropAt || tl.Breaks[0] < 1 || tl.Breaks[0] >= 12 {
					t.Errorf("dropped at %v after %d chunks, want mid-stream, no earlier than %v", drop, tl.Breaks[0], tt.drill.DropAt)
				}
			}
			if rec.LastEventIDSent != sent || !rec.Resumed {
				t.Errorf("last_event_id_sent %q resumed %v, want %q", rec.LastEventIDSent, rec.Resumed, sent)
			}
			if rec.StaleAnswer != tt.stale {
				t.Errorf("stale_answer %q, want %q", rec.StaleAnswer, tt.stale)
			}
			detail := tt.detail
			if strings.Contains(detail, "%s") {
				detail = fmt.Sprintf(detail, firstSentAfter(t, srv, dialect.DefaultStaleID))
			}
			if !strings.Contains(rec.ResumeDetail, detail) {
				t.Errorf("resume_detail %q lacks %q", rec.ResumeDetail, detail)
			}
			if rec.Drill != tt.drill.Name {
				t.Errorf("drill %q", rec.Drill)
			}
		})
	}
}

// A slow reconnect is a resume stall: it stays out of the gaps, goes into
// reconnect_ms and resume_handshake_ms, and TFC stays the first connection's.
func TestSlowReconnectStaysOutOfGaps(t *testing.T) {
	t.Parallel()
	srv := refserver.NewUnstarted(drillSchedule())
	srv.ResumeDelay = 500 * time.Millisecond
	reftest.Serve(t, srv)
	res := runDrill(t, srv, Drill{Name: DrillDrop})
	rec, tl := res.Record, res.Timeline
	if rec.Verdict != VerdictPass || rec.Reconnects != 1 {
		t.Fatalf("verdict %s (%s), reconnects %d", rec.Verdict, rec.ResumeDetail, rec.Reconnects)
	}
	if rec.Gaps.Count != 10 || tl.ChunkCount() != 12 || len(tl.Breaks) != 1 || len(tl.Reconnects) != 1 {
		t.Fatalf("gaps %d, %d chunks, breaks %v (want 10 gaps: 11 intervals less the reconnect)", rec.Gaps.Count, tl.ChunkCount(), tl.Breaks)
	}
	// The gaps are the intervals between the client's readings of
	// consecutive chunks on one connection; the one across the reconnect
	// is not among them. That one is at least the server's 500 ms delay:
	// the chunk before it was read before the drop, the one after it no
	// earlier than ResumeDelay after the new request reached the server.
	b := tl.Breaks[0]
	var want []float64
	for i := 1; i < tl.ChunkCount(); i++ {
		if i != b {
			want = append(want, reftest.MsSince(tl.Chunks()[i-1], tl.Chunks()[i]))
		}
	}
	stalls := 0
	for i, g := range rec.Gaps.Values {
		reftest.MsIs(t, fmt.Sprintf("gap %d", i), &g, want[i])
		if g > StallThresholdMs {
			stalls++ // the schedule has none; a busy machine can make one
		}
	}
	if rec.Stalls != stalls {
		t.Errorf("stalls %d, the gaps %v give %d", rec.Stalls, rec.Gaps.Values, stalls)
	}
	if across := reftest.MsSince(tl.Chunks()[b-1], tl.Chunks()[b]); across < 500 {
		t.Errorf("the interval across the reconnect is %.1f ms, shorter than the server's 500 ms delay", across)
	}
	conns := srv.Conns()
	if len(conns) != 2 || conns[1].LastEventID != "3" {
		t.Fatalf("server saw %d connections", len(conns))
	}
	c1 := reftest.ClosedConn(t, srv, 1)
	// The server's delay: its first event went out no earlier than
	// ResumeDelay after the reconnect came in; the client's handshake is
	// its request's start to that first chunk.
	rc := tl.Reconnects[0]
	reftest.MsNotBefore(t, "resume_handshake_ms", rec.ResumeHandshakeMs, rc.Start, c1.Start.Add(srv.ResumeDelay))
	reftest.MsIs(t, "resume_handshake_ms", rec.ResumeHandshakeMs, reftest.MsSince(rc.Start, rc.FirstChunk))
	if *rec.ResumeHandshakeMs < 500 {
		t.Errorf("resume_handshake_ms %.1f shorter than the server's delay", *rec.ResumeHandshakeMs)
	}
	// TFC is the first connection's: read before the drop.
	reftest.MsNotBefore(t, "tfc_ms (first connection)", rec.TFCMs, tl.Start, reftest.Due(srv, reftest.ClosedConn(t, srv, 0), 0))
	reftest.MsIs(t, "tfc_ms (first connection)", rec.TFCMs, reftest.MsSince(tl.Start, tl.Chunks()[0]))
	if !tl.Chunks()[0].Before(rc.Drop) {
		t.Errorf("the first chunk was read at %v, not before the drop at %v", tl.Chunks()[0].Sub(tl.Start), rc.Drop.Sub(tl.Start))
	}
	if rec.TailMs == nil || rec.TailExclReconnectMs == nil || *rec.TailMs-*rec.TailExclReconnectMs < 500 {
		t.Errorf("tail %v, tail without reconnect %v", reftest.Shown(rec.TailMs), reftest.Shown(rec.TailExclReconnectMs))
	}
	// reconnect_ms is the drop to the reconnect's headers, which came
	// before the server's 500 ms delay: not the drop to the first chunk.
	reftest.MsIs(t, "reconnect_ms", rec.ReconnectMs, reftest.MsSince(rc.Drop, rc.Headers))
	if !conns[0].ClientGone {
		t.Error("the server did not see the first connection dropped")
	}
}

func TestDrillNotSupportedForChat(t *testing.T) {
	t.Parallel()
	srv := reftest.Serve(t, refserver.NewUnstarted(smallChat()))
	ctx, cancel := context.WithTimeout(context.Background(), reftest.RunDeadline)
	defer cancel()
	rec := Run(ctx, dialect.Target{Name: "t", URL: srv.URL, Dialect: "openai-chat"},
		Options{Sample: dialect.Samples["short"], Client: reftest.NewClient(t), Drill: Drill{Name: DrillDrop}}).Record
	if rec.Verdict != VerdictNotSupported || rec.Outcome != Success || rec.Resumed || rec.Drill != DrillDrop {
		t.Errorf("verdict %s outcome %s resumed %v drill %s", rec.Verdict, rec.Outcome, rec.Resumed, rec.Drill)
	}
}

func TestDrillNoIDs(t *testing.T) {
	t.Parallel()
	steps := drillSchedule()
	for i := range steps {
		steps[i].ID = ""
	}
	srv := reftest.Serve(t, refserver.NewUnstarted(steps))
	rec := runDrill(t, srv, Drill{Name: DrillDrop}).Record
	if rec.Verdict != VerdictNotSupported || rec.Outcome != UpstreamError || !strings.Contains(rec.ResumeDetail, "no event ids") {
		t.Errorf("verdict %s (%s) outcome %s", rec.Verdict, rec.ResumeDetail, rec.Outcome)
	}
}

func TestOpaqueIDs(t *testing.T) {
	t.Parallel()
	steps := drillSchedule()
	for i := range steps {
		steps[i].ID = "evt-" + string(rune('a'+i))
	}
	for _, bug := range []refserver.Bug{refserver.Correct, refserver.Inclusive, refserver.Skip} {
		srv := refserver.NewUnstarted(steps)
		srv.Bug = bug
		reftest.Serve(t, srv)
		rec := runDrill(t, srv, Drill{Name: DrillDrop, OpaqueIDs: true}).Record
		want := map[refserver.Bug]Verdict{refserver.Correct: VerdictPass, refserver.Inclusive: VerdictDuplicate, refserver.Skip: VerdictPass}[bug]
		if rec.Verdict != want {
			t.Errorf("bug %d: verdict %s (%s), want %s (a skip cannot be proven with opaque ids)", bug, rec.Verdict, rec.ResumeDetail, want)
		}
	}
}

// Drills on streams that do not go as planned: a drop by the server
// before the drill's, an id-less first event, a stream that ends before
// the drop, a duplicate drill's resume spans. Each failed before its fix.
func TestDrillEdgeCases(t *testing.T) {
	t.Parallel()
	t.Run("stale drill after a drop by the server", func(t *testing.T) {
		t.Parallel()
		srv := refserver.NewUnstarted(drillSchedule())
		srv.ResetAfter = 2 // the server drops first; the client's own drop comes later
		reftest.Serve(t, srv)
		rec := runDrill(t, srv, Drill{Name: DrillStale}).Record
		if rec.Verdict != VerdictStaleOK || rec.LastEventIDSent != dialect.DefaultStaleID {
			t.Errorf("verdict %s (%s), sent %q", rec.Verdict, rec.ResumeDetail, rec.LastEventIDSent)
		}
	})
	t.Run("an id-less first event does not hide a restart", func(t *testing.T) {
		t.Parallel()
		steps := append([]refserver.Step{{At: 50 * time.Millisecond, Data: "no id"}}, drillSchedule()...)
		srv := refserver.NewUnstarted(steps)
		srv.Bug = refserver.Restart
		reftest.Serve(t, srv)
		rec := runDrill(t, srv, Drill{Name: DrillDrop}).Record
		if rec.Verdict != VerdictRestarted {
			t.Errorf("verdict %s (%s)", rec.Verdict, rec.ResumeDetail)
		}
	})
	t.Run("a drill that never dropped is not a pass", func(t *testing.T) {
		t.Parallel()
		srv := reftest.Serve(t, refserver.NewUnstarted(refserver.Events(refserver.Ms(10, 20), 30*time.Millisecond)))
		rec := runDrill(t, srv, Drill{Name: DrillDrop}).Record
		if rec.Verdict != VerdictNotExercised || !rec.Verdict.Failed() || !strings.Contains(rec.ResumeDetail, "ended after 2 content chunks") {
			t.Errorf("verdict %s (%s)", rec.Verdict, rec.ResumeDetail)
		}
	})
	t.Run("duplicate drill: tail without the reconnects", func(t *testing.T) {
		t.Parallel()
		srv := refserver.NewUnstarted(drillSchedule())
		srv.ResumeDelay = 300 * time.Millisecond
		reftest.Serve(t, srv)
		res := runDrill(t, srv, Drill{Name: DrillDuplicate})
		rec := res.Record
		// New chunks: 1-3, 4-6, then 7-12; the user waited from the first
		// drop to chunk 4 and from the second drop to chunk 7 (the third
		// connection brought only re-deliveries).
		var waited float64
		for _, sp := range res.Timeline.ResumeSpans() {
			waited += float64(sp.End.Sub(sp.Drop)) / 1e6
		}
		if len(res.Timeline.ResumeSpans()) != 2 || waited < 900 {
			t.Fatalf("spans %d, waited %.0f ms", len(res.Timeline.ResumeSpans()), waited)
		}
		if got := *rec.TailMs - *rec.TailExclReconnectMs; got < waited-1 || got > waited+1 {
			t.Errorf("tail - tail_excl_reconnect = %.1f ms, the resume spans add to %.1f ms", got, waited)
		}
	})
}
