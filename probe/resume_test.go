package probe

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/streamprobe/streamprobe/dialect"
	"github.com/streamprobe/streamprobe/internal/refserver"
	"github.com/streamprobe/streamprobe/internal/testenv/reftest"
	"github.com/streamprobe/streamprobe/resumeclient"
)

// A server that ends the stream cleanly after event 5, before [DONE], is
// resumed with Last-Event-ID 5 as a browser would, and the run succeeds;
// the reconnect stays out of the gaps.
func TestServerDropResumedByDefault(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name  string
		setup func(*refserver.Server)
	}{
		{"clean close after event 5", func(s *refserver.Server) { s.CloseAfter = 5 }},
		{"connection broken after event 5", func(s *refserver.Server) { s.ResetAfter = 5 }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := refserver.NewUnstarted(drillSchedule())
			tt.setup(srv)
			srv.ResumeHeaderDelay = 300 * time.Millisecond
			reftest.Serve(t, srv)
			rec := runProbe(t, dialect.Target{Name: "t", URL: srv.URL, Dialect: "sse", EndData: "[DONE]"}, "long", reftest.RunDeadline).Record
			if rec.Outcome != Success || rec.Chunks != 12 {
				t.Fatalf("outcome %s (%s), chunks %d", rec.Outcome, rec.Error, rec.Chunks)
			}
			if !rec.Resumed || rec.ServerDrops != 1 || rec.Reconnects != 1 || rec.LastEventIDSent != "5" || rec.Drill != DrillNone {
				t.Errorf("resumed %v server_drops %d reconnects %d sent %q drill %s", rec.Resumed, rec.ServerDrops, rec.Reconnects, rec.LastEventIDSent, rec.Drill)
			}
			if rec.Verdict != VerdictPass || !strings.Contains(rec.ResumeDetail, "the server dropped the stream 1 time(s); resumed from Last-Event-ID: 5") {
				t.Errorf("verdict %s (%s)", rec.Verdict, rec.ResumeDetail)
			}
			// 12 chunks, 11 gaps, the one across the reconnect left out.
			if rec.Gaps.Count != 10 {
				t.Errorf("gaps %d, want 10: the reconnect is not a gap", rec.Gaps.Count)
			}
			if c := srv.Conns(); len(c) != 2 || c[1].LastEventID != "5" {
				t.Errorf("server saw %d connections, resume from %q", len(c), c[len(c)-1].LastEventID)
			}
			if rec.ReconnectMs == nil || *rec.ReconnectMs < 300 {
				t.Errorf("reconnect_ms %v, want >= the server's 300 ms header delay", reftest.Shown(rec.ReconnectMs))
			}
		})
	}
	t.Run("resume off", func(t *testing.T) {
		t.Parallel()
		srv := refserver.NewUnstarted(drillSchedule())
		srv.CloseAfter = 5
		reftest.Serve(t, srv)
		rec := runProbe(t, dialect.Target{Name: "t", URL: srv.URL, Dialect: "sse", EndData: "[DONE]", NoResume: true}, "long", reftest.RunDeadline).Record
		if rec.Outcome != UpstreamError || rec.Chunks != 5 || rec.Resumed || rec.Verdict != "" || !strings.Contains(rec.Error, "before the end marker") {
			t.Errorf("outcome %s (%s) chunks %d resumed %v verdict %q", rec.Outcome, rec.Error, rec.Chunks, rec.Resumed, rec.Verdict)
		}
	})
	t.Run("no ids: nothing to resume from", func(t *testing.T) {
		t.Parallel()
		steps := drillSchedule()
		for i := range steps {
			steps[i].ID = ""
		}
		srv := refserver.NewUnstarted(steps)
		srv.CloseAfter = 5
		reftest.Serve(t, srv)
		rec := runProbe(t, dialect.Target{Name: "t", URL: srv.URL, Dialect: "sse", EndData: "[DONE]"}, "long", reftest.RunDeadline).Record
		if rec.Outcome != UpstreamError || rec.Resumed || rec.ServerDrops != 1 || !strings.Contains(rec.Error, "no event id to resume from") {
			t.Errorf("outcome %s (%s) resumed %v server_drops %d", rec.Outcome, rec.Error, rec.Resumed, rec.ServerDrops)
		}
	})
	t.Run("openai-responses resumes by sequence_number", func(t *testing.T) {
		t.Parallel()
		r := &refserver.Responses{}
		r.Created(10 * time.Millisecond)
		for i := range 8 {
			r.Text(time.Duration(20+10*i)*time.Millisecond, "w")
		}
		r.Completed(120*time.Millisecond, 5, 8)
		srv := refserver.NewUnstarted(r.Steps())
		srv.CloseAfter = 4
		reftest.Serve(t, srv)
		rec := runProbe(t, dialect.Target{Name: "t", URL: srv.URL, Dialect: "openai-responses"}, "long", reftest.RunDeadline).Record
		if rec.Outcome != Success || rec.Chunks != 8 || rec.ServerDrops != 1 || rec.LastEventIDSent != "3" || rec.Verdict != VerdictPass {
			t.Fatalf("outcome %s (%s) chunks %d server_drops %d sent %q verdict %s (%s)", rec.Outcome, rec.Error, rec.Chunks, rec.ServerDrops, rec.LastEventIDSent, rec.Verdict, rec.ResumeDetail)
		}
		if c := srv.Conns(); len(c) != 2 || c[1].Method != http.MethodGet || !strings.Contains(c[1].Query, "starting_after=3") {
			t.Errorf("resume request %+v", c[len(c)-1])
		}
	})
}

// The answers to a stale id, as real servers give them.
func TestStaleAnswers(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		setup    func(*refserver.Server)
		verdict  Verdict
		answer   string
		detail   string
		schedule []refserver.Step // nil: drillSchedule()
	}{
		// Mercure 0.24 sends back Last-Event-ID naming where it resumed.
		// The retention window moves with the server's clock: a second of
		// quiet after event 3 keeps it at events 2 and 3 however late a
		// busy machine reconnects.
		{"Mercure-style Last-Event-ID header naming another id", func(s *refserver.Server) { s.Stale = refserver.StaleHeader; s.Retention = 2 },
			VerdictStaleOK, "header Last-Event-ID: 1", "stale Last-Event-ID: streamprobe-stale-id-0 answered by header Last-Event-ID: 1", gapAfter(3, time.Second)},
		{"full replay from the first event", func(s *refserver.Server) { s.Stale = refserver.StaleReplay },
			VerdictUndefinedStale, "", "replayed the whole stream from the first event (id 1) with no reset marker (full replay)", nil},
		{"live tail", func(s *refserver.Server) { s.Stale = refserver.StaleLive },
			// A second of quiet after event 3: the live tail starts at
			// event 4 however late a busy machine reconnects.
			VerdictUndefinedStale, "", "carried on from id 4 with no reset marker (live tail)", gapAfter(3, time.Second)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			sched := tt.schedule
			if sched == nil {
				sched = drillSchedule()
			}
			srv := refserver.NewUnstarted(sched)
			tt.setup(srv)
			reftest.Serve(t, srv)
			rec := runDrill(t, srv, Drill{Name: DrillStale}).Record
			if rec.Verdict != tt.verdict || rec.StaleAnswer != tt.answer || !strings.Contains(rec.ResumeDetail, tt.detail) {
				t.Errorf("verdict %s answer %q detail %q; want %s %q %q", rec.Verdict, rec.StaleAnswer, rec.ResumeDetail, tt.verdict, tt.answer, tt.detail)
			}
		})
	}
	// A position header equal to the id sent answers nothing, but the
	// detail says it came back.
	t.Run("header echoing the id sent", func(t *testing.T) {
		t.Parallel()
		ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			if id := r.Header.Get("Last-Event-ID"); id != "" {
				w.Header().Set("Last-Event-ID", id)
				io.WriteString(w, "id: 9\ndata: live\n\ndata: [DONE]\n\n")
				return
			}
			for i := 1; i <= 5; i++ {
				fmt.Fprintf(w, "id: %d\ndata: x\n\n", i)
			}
		}))
		t.Cleanup(ts.Close)
		rec := runDrill(t, &refserver.Server{URL: ts.URL}, Drill{Name: DrillStale}).Record
		if rec.Verdict != VerdictUndefinedStale || !strings.HasSuffix(rec.ResumeDetail, "(live tail); the response header Last-Event-ID: streamprobe-stale-id-0 came back") {
			t.Errorf("verdict %s detail %q", rec.Verdict, rec.ResumeDetail)
		}
	})
}

// The duplicate drill with the defaults asks for the same id twice, then
// for an older one: never the same id three times.
func TestDuplicateDrillRewindsBehind(t *testing.T) {
	t.Parallel()
	for _, d := range []Drill{{Name: DrillDuplicate}, {Name: DrillDuplicate, DropAfter: 1, Rewind: 1}, {Name: DrillDuplicate, DropAfter: 2, Rewind: 5}} {
		t.Run(fmt.Sprintf("drop after %d, rewind %d", d.DropAfter, d.Rewind), func(t *testing.T) {
			t.Parallel()
			srv := reftest.Serve(t, refserver.NewUnstarted(drillSchedule()))
			rec := runDrill(t, srv, d).Record
			if rec.Verdict != VerdictPass {
				t.Fatalf("verdict %s (%s)", rec.Verdict, rec.ResumeDetail)
			}
			conns := srv.Conns()
			var sent []string
			for _, c := range conns[1:] {
				sent = append(sent, c.LastEventID)
			}
			if len(sent) != 3 || sent[0] != sent[1] {
				t.Fatalf("ids sent %q: want the same id twice, then a rewind", sent)
			}
			dup, _ := strconv.Atoi(sent[0])
			rewound, _ := strconv.Atoi(sent[2])
			c2 := conns[2].Sent
			newest, _ := strconv.Atoi(c2[len(c2)-1].ID)
			if rewound >= newest {
				t.Errorf("ids sent %q: the rewind must ask for an id behind the newest delivered, %d", sent, newest)
			}
			if dup > 1 && rewound == dup {
				t.Errorf("ids sent %q: the same id three times, though an older one was there", sent)
			}
		})
	}
}

// A server that resumes correctly once and then restarts from the first
// event: the detail says so, and does not claim it ignored Last-Event-ID.
func TestRestartedOnlyLater(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	n := 0
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		n++
		req := n
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		from := 1
		if id, err := strconv.Atoi(r.Header.Get("Last-Event-ID")); err == nil && req < 3 {
			from = id + 1
		}
		for i := from; i <= 12; i++ {
			fmt.Fprintf(w, "id: %d\ndata: e%d\n\n", i, i)
			w.(http.Flusher).Flush()
			time.Sleep(5 * time.Millisecond)
		}
		io.WriteString(w, "data: [DONE]\n\n")
	}))
	t.Cleanup(ts.Close)
	rec := runDrill(t, &refserver.Server{URL: ts.URL}, Drill{Name: DrillDuplicate}).Record
	want := "server restarted from the first event (id 1) when sent Last-Event-ID: 3, though it had resumed correctly before"
	if rec.Verdict != VerdictRestarted || !strings.Contains(rec.ResumeDetail, want) {
		t.Errorf("verdict %s detail %q, want %q", rec.Verdict, rec.ResumeDetail, want)
	}
}

// Under the default integer check, ids that are not integers are checked
// as opaque ids, and the detail says so.
func TestNonIntegerIDsCheckedAsOpaque(t *testing.T) {
	t.Parallel()
	steps := drillSchedule()
	for i := range steps {
		if steps[i].ID != "" {
			steps[i].ID = fmt.Sprintf("evt-%c", 'a'+i)
		}
	}
	srv := reftest.Serve(t, refserver.NewUnstarted(steps))
	rec := runDrill(t, srv, Drill{Name: DrillDrop}).Record
	if rec.Verdict != VerdictPass || !strings.Contains(rec.ResumeDetail, `(ids are not integers, e.g. "evt-a": checked as opaque ids`) {
		t.Errorf("verdict %s detail %q", rec.Verdict, rec.ResumeDetail)
	}
}

// A DropAt that comes before the first event with an id drops right after
// that event: the drill is exercised, never judged not_supported.
func TestDropAtBeforeTheFirstEvent(t *testing.T) {
	t.Parallel()
	srv := reftest.Serve(t, refserver.NewUnstarted(drillSchedule())) // first event at 100 ms
	rec := runDrill(t, srv, Drill{Name: DrillDrop, DropAt: time.Millisecond}).Record
	if rec.Verdict != VerdictPass || rec.LastEventIDSent != "1" || rec.Outcome != Success {
		t.Errorf("verdict %s (%s), sent %q, outcome %s %s", rec.Verdict, rec.ResumeDetail, rec.LastEventIDSent, rec.Outcome, rec.Error)
	}
}

// Replays from further back than the check's window of ids are still
// named: a restart from the first event, and an integer id already passed.
func TestReplaysBeyondTheWindow(t *testing.T) {
	t.Parallel()
	const n = checkWindow + 100
	for _, tt := range []struct {
		name    string
		from    int // where the resumed stream starts
		verdict Verdict
		detail  string
	}{
		{"restart from the first event", 1, VerdictRestarted, "restarted from the first event (id 1)"},
		{"replay from an evicted id", 60, VerdictDuplicate, "resume replayed id 60 again, from before the sent Last-Event-ID: 1124 (older than the check's window of 1024 ids)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				from, end := 1, "" // the first connection ends cleanly, before [DONE]
				if r.Header.Get("Last-Event-ID") != "" {
					from, end = tt.from, "data: [DONE]\n\n"
				}
				var b strings.Builder
				for i := from; i <= n; i++ {
					fmt.Fprintf(&b, "id: %d\ndata: e%d\n\n", i, i)
				}
				io.WriteString(w, b.String()+end)
			}))
			t.Cleanup(ts.Close)
			rec := runProbe(t, dialect.Target{Name: "t", URL: ts.URL, Dialect: "sse", EndData: "[DONE]"}, "long", 10*time.Second).Record
			if rec.Verdict != tt.verdict || !strings.Contains(rec.ResumeDetail, tt.detail) {
				t.Errorf("verdict %s (%s), want %s (%s)", rec.Verdict, rec.ResumeDetail, tt.verdict, tt.detail)
			}
			if rec.Chunks != n {
				t.Errorf("chunks %d, want %d: a replay is not new content", rec.Chunks, n)
			}
		})
	}
}

// A resume request that fails before its headers is tried again: one drop
// by the server, two reconnect requests (every request counts), and the
// reconnect's time runs from the real drop.
func TestFailedReconnectIsRetried(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	n := 0
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		n++
		req := n
		mu.Unlock()
		switch req {
		case 1:
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "id: 1\ndata: a\n\nid: 2\ndata: b\n\n")
		case 2:
			time.Sleep(150 * time.Millisecond)
			panic(http.ErrAbortHandler) // closed before any header
		default:
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "id: 3\ndata: c\n\ndata: [DONE]\n\n")
		}
	}))
	t.Cleanup(ts.Close)
	rec := runProbe(t, dialect.Target{Name: "t", URL: ts.URL, Dialect: "sse", EndData: "[DONE]"}, "long", 10*time.Second).Record
	if rec.Outcome != Success || rec.ServerDrops != 1 || rec.Reconnects != 2 || rec.Verdict != VerdictPass || rec.Chunks != 3 {
		t.Fatalf("outcome %s (%s) server_drops %d reconnects %d verdict %s chunks %d", rec.Outcome, rec.Error, rec.ServerDrops, rec.Reconnects, rec.Verdict, rec.Chunks)
	}
	if rec.ReconnectMs == nil || *rec.ReconnectMs < 150 {
		t.Errorf("reconnect_ms %v: it must run from the drop, across the failed attempt of 150 ms", reftest.Shown(rec.ReconnectMs))
	}
}

// A resume answered 409 Conflict (the server still holds the connection
// the client dropped, as the MCP Go SDK answers a resume sent before it
// saw the drop) is sent again a little later, and the run goes on; a
// server that keeps answering 409 ends the run once the bound is spent.
func TestResumeConflictIsRetried(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name      string
		conflicts int
		ok        bool
	}{{"one 409", 1, true}, {"409 every time", 100, false}} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := refserver.NewUnstarted(drillSchedule())
			srv.CloseAfter = 5
			var mu sync.Mutex
			left := tt.conflicts
			srv.StatusFor = func(r *http.Request, _ []byte) (int, string) {
				mu.Lock()
				defer mu.Unlock()
				if r.Header.Get("Last-Event-ID") == "" || left == 0 {
					return 0, ""
				}
				left--
				return http.StatusConflict, `{"error":"stream already has an active connection"}`
			}
			reftest.Serve(t, srv)
			start := time.Now()
			rec := runProbe(t, dialect.Target{Name: "t", URL: srv.URL, Dialect: "sse", EndData: "[DONE]"}, "long", reftest.RunDeadline).Record
			took := time.Since(start)
			conns := srv.Conns()
			// Every request counts (the refused ones too), and the run's
			// duration is the run's, its failed attempts included (a run
			// of 1.7 s said 1.7 ms and one reconnect for 6 requests).
			if rec.Reconnects != len(conns)-1 {
				t.Errorf("reconnects %d, the server saw %d requests after the first", rec.Reconnects, len(conns)-1)
			}
			last := conns[len(conns)-1].Start
			if min := reftest.MsSince(conns[0].Start, last); rec.DurationMs < min || rec.DurationMs > float64(took.Milliseconds())+1 {
				t.Errorf("duration_ms %.1f: the last request came %.1f ms after the first, the run took %v", rec.DurationMs, min, took)
			}
			if tt.ok {
				if rec.Outcome != Success || rec.Chunks != 12 || rec.Verdict != VerdictPass || rec.Reconnects != 2 {
					t.Fatalf("outcome %s (%s) chunks %d verdict %s reconnects %d", rec.Outcome, rec.Error, rec.Chunks, rec.Verdict, rec.Reconnects)
				}
				if len(conns) != 3 || conns[1].LastEventID != "5" || conns[2].LastEventID != "5" {
					t.Errorf("server saw %d connections, want the first, the refused resume and its retry from 5", len(conns))
				}
				return
			}
			if rec.Outcome != UpstreamError || !strings.Contains(rec.Error, "409") || !strings.Contains(rec.Error, "gave up after") {
				t.Errorf("outcome %s (%s)", rec.Outcome, rec.Error)
			}
			if n := len(conns); n < 3 || n > resumeclient.DefaultMaxReconnects+3 {
				t.Errorf("server saw %d connections, want the first and a bounded number of resumes", n)
			}
		})
	}
}

func TestIDKeys(t *testing.T) {
	for _, id := range []string{"0", "5", "1200", "9223372036854775807"} {
		if k := keyOf(id); k >= 1<<63 || (idEntry{key: k}).value() != intID(id) {
			t.Errorf("id %q: key %#x, value %d; want the integer itself", id, k, (idEntry{key: k}).value())
		}
	}
	for _, id := range []string{"05", "+5", "00", "-1", "abc", "5a", "1e3", "9223372036854775808"} {
		if k := keyOf(id); k < 1<<63 || (idEntry{key: k}).value() != -1 {
			t.Errorf("id %q: key %#x; want a hash with the top bit set", id, k)
		}
	}
	if keyOf("05") == keyOf("5") || keyOf("+5") == keyOf("5") {
		t.Error("ids that read as the same integer share a key")
	}
}

// The check of a stream of rising integer ids builds no index until a
// resume needs one; ids written in other forms are still told apart and
// re-deliveries of either kind are found.
func TestResumeCheckIndexesOnlyWhenNeeded(t *testing.T) {
	show := func(s string) string { return s }
	c := newResumeCheck(false, false, show, show)
	typ := []byte("message")
	for i := 1; i <= 100; i++ {
		if c.event(strconv.Itoa(i), true, typ, []byte("d"+strconv.Itoa(i))) {
			t.Fatalf("id %d taken as a re-delivery", i)
		}
	}
	if c.seen != nil || c.texts != nil || !c.counting || c.window.len() != 0 || c.hashes.len() != 100 {
		t.Fatalf("100 ids counting up: index %d, texts %d, counting %v, window %d, hashes %d; want hashes only",
			len(c.seen), len(c.texts), c.counting, c.window.len(), c.hashes.len())
	}
	c.event("007", true, typ, []byte("x"))
	if c.counting || c.window.len() != 101 {
		t.Fatalf("an id that breaks the count: counting %v, window %d", c.counting, c.window.len())
	}
	c.reconnected("98")
	if !c.event("99", true, typ, []byte("d99")) || !c.event("007", true, typ, []byte("x")) {
		t.Error("re-deliveries of 99 and 007 were not recognised")
	}
	if c.seen == nil {
		t.Error("ids below the top were found without the index")
	}
	if c.event("101", true, typ, []byte("d101")) || c.duplicates != 2 || c.verdict != "" || c.goodResumes != 1 {
		t.Errorf("duplicates %d, good resumes %d, verdict %q %s", c.duplicates, c.goodResumes, c.verdict, c.detail)
	}
}

// While ids count up by one the window keeps hashes only; when an id
// breaks the count, every position the window still holds (after the
// ring went round) gets its key back, and lookups find the same events.
func TestResumeCheckCountingWindow(t *testing.T) {
	show := func(s string) string { return s }
	typ := []byte("message")
	data := func(i int) []byte { return []byte("d" + strconv.Itoa(i)) }
	const base, n = 7, 1500 // ids 7..1506: the ring went round
	c := newResumeCheck(false, false, show, show)
	for i := range n {
		c.event(strconv.Itoa(base+i), true, typ, data(base+i))
	}
	if !c.counting || c.hashes.len() != checkWindow || c.window.len() != 0 {
		t.Fatalf("counting %v, hashes %d, window %d", c.counting, c.hashes.len(), c.window.len())
	}
	found := func(id int) bool {
		s, ok := c.lookup(uint64(id))
		return ok && s.pos == id-base && s.hash == hash32(typ, data(id))
	}
	for _, id := range []int{base + n - checkWindow, 1000, base + n - 1} {
		if !found(id) {
			t.Errorf("counting: id %d not found at its position", id)
		}
	}
	if _, ok := c.lookup(uint64(base + n - checkWindow - 1)); ok {
		t.Error("counting: an evicted id was found")
	}
	if c.gone != base+n-checkWindow-1 {
		t.Errorf("gone %d, want %d", c.gone, base+n-checkWindow-1)
	}
	c.event("x-1", true, typ, []byte("x"))
	if c.counting || c.window.len() != checkWindow {
		t.Fatalf("after a text id: counting %v, window %d", c.counting, c.window.len())
	}
	for p := n + 1 - checkWindow; p < n; p++ {
		if !found(base + p) {
			t.Fatalf("after the count broke: id %d not found at position %d", base+p, p)
		}
	}
	if _, ok := c.lookup(keyOf("x-1")); !ok {
		t.Error("the text id was not kept")
	}
	c.reconnected("1400")
	if !c.event("1401", true, typ, data(1401)) || c.event("1402", true, typ, []byte("other")) || c.verdict != VerdictMismatch {
		t.Errorf("re-delivery after the count broke: duplicates %d, verdict %q %s", c.duplicates, c.verdict, c.detail)
	}
}

// A resume before the stream's first id (a foreign event carried the
// cursor) makes an empty index; counting ids that follow must not fill
// it, and a replay from before the window after the count broke is a
// duplicate, not a mismatch read from a recycled slot (found in review).
func TestResumeCheckCountingAfterEarlyResume(t *testing.T) {
	show := func(s string) string { return s }
	typ := []byte("message")
	data := func(i int) []byte { return []byte("d" + strconv.Itoa(i)) }
	c := newResumeCheck(false, false, show, show)
	c.reconnected("f1")
	for i := 1; i <= 3000; i++ {
		c.event(strconv.Itoa(i), true, typ, data(i))
	}
	if !c.counting || len(c.seen) != 0 {
		t.Fatalf("counting %v, index of %d entries", c.counting, len(c.seen))
	}
	c.event("5000", true, typ, data(5000))
	c.reconnected("5000")
	if !c.event("10", true, typ, data(10)) || c.verdict != VerdictMissed || c.duplicates != 1 {
		t.Errorf("replay of id 10 from before the window: duplicates %d, verdict %q %s", c.duplicates, c.verdict, c.detail)
	}
	if len(c.seen) > checkWindow {
		t.Errorf("index of %d entries, over the window of %d", len(c.seen), checkWindow)
	}
}

// withIDs is the drill stream with its ids replaced by ids(i) (the
// [DONE] event keeps no id).
func withIDs(ids func(i int) string) []refserver.Step {
	steps := drillSchedule()
	for i := range steps {
		steps[i].ID = ""
		if steps[i].Data != "[DONE]" {
			steps[i].ID = ids(i)
		}
	}
	return steps
}

// A run that never resumed gets no resume verdict, whatever its ids do on
// the live stream: millisecond timestamps (missed, missed=144 before), one
// constant id (mismatch, even with opaque ids), ids that skip. A property
// of the live stream is no resume's doing.
func TestPlainRunNeverGetsAResumeVerdict(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name   string
		ids    func(i int) string
		opaque bool
	}{
		{"timestamps", func(i int) string { return strconv.Itoa(1733500000123 + 37*i) }, false},
		{"constant", func(int) string { return "x" }, true},
		{"constant int", func(int) string { return "7" }, false},
		{"skipping", func(i int) string { return strconv.Itoa(i * 2) }, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := reftest.Serve(t, refserver.NewUnstarted(withIDs(tt.ids)))
			rec := runDrill(t, srv, Drill{OpaqueIDs: tt.opaque}).Record
			if rec.Verdict != "" || rec.Missed != 0 || rec.Duplicates != 0 || rec.Replayed != 0 || !rec.Passed() || rec.Chunks != 12 {
				t.Errorf("verdict %q (%s), missed %d, duplicates %d, replayed %d, chunks %d", rec.Verdict, rec.ResumeDetail, rec.Missed, rec.Duplicates, rec.Replayed, rec.Chunks)
			}
		})
	}
}

// A resume from ids that were not consecutive on the live stream
// (timestamps) is judged as one from opaque ids: a correct resume passes,
// and the detail says why the ids were not counted.
func TestResumeWithTimestampIDs(t *testing.T) {
	t.Parallel()
	srv := reftest.Serve(t, refserver.NewUnstarted(withIDs(func(i int) string { return strconv.Itoa(1733500000123 + 37*i) })))
	rec := runDrill(t, srv, Drill{Name: DrillDrop}).Record
	if rec.Verdict != VerdictPass || rec.Missed != 0 || !strings.Contains(rec.ResumeDetail, "not consecutive") {
		t.Errorf("verdict %s (%s), missed %d", rec.Verdict, rec.ResumeDetail, rec.Missed)
	}
}

// A resume from an id the live stream repeated cannot say where it
// resumed: not_supported, never a mismatch or a duplicate.
func TestResumeFromARepeatedID(t *testing.T) {
	t.Parallel()
	srv := reftest.Serve(t, refserver.NewUnstarted(withIDs(func(int) string { return "x" })))
	rec := runDrill(t, srv, Drill{Name: DrillDrop, OpaqueIDs: true}).Record
	if rec.Verdict != VerdictNotSupported || !strings.Contains(rec.ResumeDetail, "repeat") {
		t.Errorf("verdict %s (%s)", rec.Verdict, rec.ResumeDetail)
	}
}

// A resume that comes before the first content chunk (here after MCP's
// priming event: an id, no data) waits before the tail starts: nothing
// of it comes off the tail (tail_excl_reconnect_ms was tail minus the
// whole wait: -53 ms on the built-in poll fault, -503 ms in the
// conformance suite's sse-retry scenario).
func TestTailWithoutReconnectsIsNeverNegative(t *testing.T) {
	t.Parallel()
	steps := append([]refserver.Step{{At: 5 * time.Millisecond, ID: "0"}}, drillSchedule()...)
	srv := refserver.NewUnstarted(steps)
	srv.ResumeHeaderDelay = 300 * time.Millisecond
	reftest.Serve(t, srv)
	rec := runDrill(t, srv, Drill{Name: DrillDrop, DropAt: time.Millisecond}).Record
	if rec.Verdict != VerdictPass || rec.LastEventIDSent != "0" || rec.TailMs == nil || rec.TailExclReconnectMs == nil {
		t.Fatalf("verdict %s (%s), sent %q, tail %v, tail excl %v", rec.Verdict, rec.ResumeDetail, rec.LastEventIDSent, reftest.Shown(rec.TailMs), reftest.Shown(rec.TailExclReconnectMs))
	}
	if *rec.TailExclReconnectMs != *rec.TailMs {
		t.Errorf("tail %.3f ms, tail_excl_reconnect %.3f ms: the wait came before the first chunk, so nothing of it is in the tail", *rec.TailMs, *rec.TailExclReconnectMs)
	}
}

// An event counted missing that comes later was reordered, not lost: by
// integer ids, and by MCP progress with opaque ids. A hole that stays is
// missed, counted once whichever of the two saw it.
func TestResumeCheckLateEventIsReorderedNotMissed(t *testing.T) {
	show := func(s string) string { return s }
	typ := []byte("message")
	for _, tc := range []struct {
		name    string
		opaque  bool
		after   []int // the ids (and progress values) after the resume from 3
		verdict Verdict
		missed  int
	}{
		{"int swapped", false, []int{5, 4, 6}, VerdictReordered, 0},
		{"int hole", false, []int{5, 6}, VerdictMissed, 1},
		{"int two holes one late", false, []int{6, 4, 7}, VerdictMissed, 1},
		{"opaque swapped", true, []int{5, 4, 6}, VerdictReordered, 0},
		{"opaque hole", true, []int{5, 6}, VerdictMissed, 1},
		{"opaque in order", true, []int{4, 5, 6}, "", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newResumeCheck(tc.opaque, false, show, show)
			ev := func(i int, resumed bool) {
				id := strconv.Itoa(i)
				if tc.opaque {
					id = "e-" + id // ids say nothing: the progress tells
				}
				c.event(id, true, typ, []byte("d"+id))
				c.seq(float64(i), resumed)
			}
			for i := 1; i <= 3; i++ {
				ev(i, false)
			}
			sent := "3"
			if tc.opaque {
				sent = "e-3"
			}
			c.reconnected(sent)
			for _, i := range tc.after {
				ev(i, true)
			}
			if c.verdict != tc.verdict || c.missed != tc.missed {
				t.Errorf("verdict %q missed %d (%s), want %q %d", c.verdict, c.missed, c.detail, tc.verdict, tc.missed)
			}
		})
	}
}
