package mcppeer_test

import (
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/streamprobe/streamprobe/internal/testenv/mcppeer"
	"github.com/streamprobe/streamprobe/internal/testenv/mcppeer/gosdk"
)

// What each SDK does on resume, pinned on the running servers with the
// source lines that do it, so that an SDK bump that changes any of it
// fails here, naming the line to read again. The mcp dialect's verdicts on
// these peers (probe's tests) rest on these facts; docs/mcp-peers.md says
// them in prose.
//
// TS = @modelcontextprotocol/sdk 1.32.2 (package-lock.json), files under
// node_modules/@modelcontextprotocol/sdk/dist/esm/. Go =
// github.com/modelcontextprotocol/go-sdk v1.8.0 (go.mod), files under
// mcp/ in the module.
const (
	tsTransport = "server/webStandardStreamableHttp.js"
	tsStore     = "examples/shared/inMemoryEventStore.js"
	tsProtocol  = "shared/protocol.js"
	goStream    = "mcp/streamable.go"
	goEvent     = "mcp/event.go"
)

// peers runs f against each SDK peer.
func peers(t *testing.T, f func(t *testing.T, p *mcppeer.Peer, ts bool)) {
	t.Run("typescript-sdk", func(t *testing.T) { t.Parallel(); f(t, mcppeer.StartTS(t), true) })
	t.Run("go-sdk", func(t *testing.T) { t.Parallel(); f(t, gosdk.Start(t), false) })
}

var (
	// TS: "${streamId}_${Date.now()}_${random 8}" with a UUID stream id per
	// POST (inMemoryEventStore.js:13-15, webStandardStreamableHttp.js:582).
	tsID = regexp.MustCompile(`^([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})_([0-9]{13})_([0-9a-z]{1,8})$`)
	// Go: "<streamID>_<index>", the stream id crand.Text() per POST, the
	// index from 0 (the priming event) (streamable.go:1670, 1780-1782).
	goID = regexp.MustCompile(`^([A-Z2-7]{26})_([0-9]+)$`)
)

// streamOf is the stream part of an event id, and the index (Go) or the
// ms (TS).
func streamOf(t *testing.T, ts bool, id string) (string, int64) {
	t.Helper()
	re, where := goID, goStream+":1780-1782 formatEventID"
	if ts {
		re, where = tsID, tsStore+":13-15 generateEventId"
	}
	m := re.FindStringSubmatch(id)
	if m == nil {
		t.Fatalf("event id %q is not of the form %v (%s)", id, re, where)
	}
	n, _ := strconv.ParseInt(m[2], 10, 64)
	return m[1], n
}

// Ids and the priming event (SEP-1699). TS: the priming event is
// "id: X\ndata: \n\n" with no event field, a retry: line when the
// transport has retryInterval, only for protocol >= 2025-11-25 and with an
// event store (webStandardStreamableHttp.js:201-218); every message is
// "event: message" with an id (424-431). Go: "event: prime" with id
// <stream>_0 and an empty data line (streamable.go:1736-1751,
// event.go:44-66), only for 2025-11-25 <= version < 2026-07-28; messages
// "event: message" with ids <stream>_1, _2, ... (1916-1921). Both: one
// stream id per POST, never shared.
func TestPrimingAndIDs(t *testing.T) {
	peers(t, func(t *testing.T, p *mcppeer.Peer, ts bool) {
		s := open(t, p.URL, latest)
		evs := s.call(1, args{Steps: 2, IntervalMS: 20}).rest(t)
		if len(evs) != 4 {
			t.Fatalf("%d events, want priming, 2 progress, response: %+v", len(evs), evs)
		}
		prime := evs[0]
		wantName := "prime" // streamable.go:1747
		if ts {
			wantName = "" // webStandardStreamableHttp.js:212
		}
		if prime.ID == "" || !prime.HasData || prime.Data != "" || prime.Name != wantName || prime.Retry != "" {
			t.Errorf("priming event %+v: want an id, an empty data line and event %q", prime, wantName)
		}
		sid, first := streamOf(t, ts, prime.ID)
		if !ts && first != 0 {
			t.Errorf("priming id %q: index %d, want 0 (%s:1746-1747)", prime.ID, first, goStream)
		}
		seen := map[string]bool{}
		for i, e := range evs {
			if seen[e.ID] {
				t.Errorf("id %q twice in one stream", e.ID)
			}
			seen[e.ID] = true
			got, n := streamOf(t, ts, e.ID)
			if got != sid {
				t.Errorf("event %d: stream %q, the priming event's is %q: one stream id per POST", i, got, sid)
			}
			if !ts && n != int64(i) {
				t.Errorf("event %d id %q: index %d, want %d (%s:1916-1921)", i, e.ID, n, i, goStream)
			}
			if i > 0 && e.Name != "message" {
				t.Errorf("event %d: event %q, want message (%s)", i, e.Name, map[bool]string{true: tsTransport + ":426", false: goStream + ":1135"}[ts])
			}
		}
		if got := progressOf(t, evs, "tok-1"); !slices.Equal(got, []float64{1, 2, -1}) {
			t.Errorf("progress %v, want [1 2 response]", got)
		}
		other := s.call(2, args{Steps: 0}).rest(t)
		if sid2, _ := streamOf(t, ts, other[0].ID); sid2 == sid {
			t.Errorf("two POSTs share stream id %q", sid)
		}

		// An older protocol version gets no priming event; ids stay.
		old := open(t, p.URL, "2025-06-18")
		evs = old.call(1, args{Steps: 1, IntervalMS: 0}).rest(t)
		if len(evs) != 2 || evs[0].Data == "" || evs[0].ID == "" {
			t.Errorf("protocol 2025-06-18: %+v, want progress then response, with ids and no priming event (%s)", evs,
				map[bool]string{true: tsTransport + ":208", false: goStream + ":1736"}[ts])
		}
	})
}

// TS with retryInterval: the priming event carries retry:
// (webStandardStreamableHttp.js:213-214). SEP-1699 close: TS
// extra.closeSSEStream ends the request's stream with no event
// (805-813, offered only with an event store and 2025-11-25: 673); Go
// CloseSSEStream writes "event: close" with retry: and ends it
// (streamable.go:1009-1026, 1593-1611). Both go on: the tool keeps
// running, and a GET with the last id gets the rest, to the response.
func TestSEP1699Close(t *testing.T) {
	peers(t, func(t *testing.T, p *mcppeer.Peer, ts bool) {
		url := p.URL
		if ts {
			url += "?retry=300"
		}
		s := open(t, url, latest)
		evs := s.call(1, args{Steps: 8, IntervalMS: 60, CloseAfter: 2, RetryMS: 300}).rest(t)
		if ts {
			if len(evs) != 3 || evs[0].Retry != "300" {
				t.Fatalf("events %+v: want priming with retry: 300, progress 1 and 2, then the end (%s:213-214, 805-813)", evs, tsTransport)
			}
		} else {
			if len(evs) != 4 || evs[0].Retry != "" || evs[3].Name != "close" || evs[3].Retry != "300" || evs[3].ID != "" || evs[3].Data != "" {
				t.Fatalf("events %+v: want priming, progress 1 and 2, then event close with retry: 300 and no id (%s:1009-1026)", evs, goStream)
			}
			evs = evs[:3]
		}
		if got := progressOf(t, evs, "tok-1"); !slices.Equal(got, []float64{1, 2}) {
			t.Errorf("before the close: progress %v, want [1 2]", got)
		}
		rest := s.resumeStream(evs[2].ID).rest(t)
		if got := progressOf(t, rest, "tok-1"); !slices.Equal(got, []float64{3, 4, 5, 6, 7, 8, -1}) {
			t.Errorf("after the resume: progress %v, want [3 ... 8 response]", got)
		}
	})
}

// waitEnded waits until the server saw the POST or GET of this session
// end (the SDK released its stream): a resume before that is a different
// case (TestResumeWhileConnected).
func waitEnded(t *testing.T, p *mcppeer.Peer, method, rpc, lastEventID string) {
	t.Helper()
	waitLog(t, p, method+" "+rpc+" "+lastEventID+" ended on the server", func(log []mcppeer.Exchange) bool {
		ex, ok := exchange(log, method, rpc, lastEventID)
		return ok && (ex.Ended || ex.EndAt > 0)
	})
}

// Resume after a drop while the tool runs: the GET with the last id seen
// replays what the stream got meanwhile and goes on live, each message
// once, in order, the same ids, the tool not run again. TS: GET +
// Last-Event-ID goes to replayEvents (webStandardStreamableHttp.js:240-246,
// 307-414), the store replays that stream's events after the id
// (inMemoryEventStore.js:36-63), the stream ends after the response
// (947-950). Go: acquireStream replays After(index) and takes the stream
// over (streamable.go:1289-1408).
func TestResume(t *testing.T) {
	peers(t, func(t *testing.T, p *mcppeer.Peer, ts bool) {
		s := open(t, p.URL, latest)
		st := s.call(1, args{Steps: 10, IntervalMS: 80, Text: "resume"})
		seen := []sseEvent{st.next(t), st.next(t), st.next(t)} // priming, progress 1, 2
		st.drop()
		waitEnded(t, p, "POST", "tools/call", "")
		rest := s.resumeStream(seen[2].ID).rest(t)
		if got := progressOf(t, rest, "tok-1"); !slices.Equal(got, []float64{3, 4, 5, 6, 7, 8, 9, 10, -1}) {
			t.Errorf("resumed from progress 2: %v, want [3 ... 10 response]", got)
		}
		sid, last := streamOf(t, ts, seen[2].ID)
		for i, e := range rest {
			got, n := streamOf(t, ts, e.ID)
			if got != sid {
				t.Errorf("resumed event %d is of stream %q, not %q", i, got, sid)
			}
			if !ts && n != last+1+int64(i) {
				t.Errorf("resumed event %d id %q, want index %d", i, e.ID, last+1+int64(i))
			}
		}
		log, _ := p.Log()
		calls, done := 0, 0
		for _, ex := range log {
			if ex.Method == "POST" && ex.RPC == "tools/call" {
				calls++
			}
			if ex.Method == "TOOL" {
				done++
			}
		}
		if calls != 1 || done != 1 {
			t.Errorf("%d tools/call, %d tool runs: the resume must not run the tool again", calls, done)
		}
	})
}

// A resume after the tool ended, its answer stored while no stream was
// connected. TS: send() stores it and lets the stream go
// (webStandardStreamableHttp.js:908-919); the GET replays it and then
// registers the stream again and keeps it open with keep-alive comments
// (393-414): nothing will ever end it, the client must close on the
// response. The InMemoryEventStore orders the replay by the id string
// (inMemoryEventStore.js:47): events stored within the same millisecond
// (the last progress and the response, often) replay in the order of
// their random suffix, not the order sent. Go: the stream is done, the GET
// replays from the store and ends (streamable.go:1296-1317, 1396-1398).
func TestResumeAfterEnd(t *testing.T) {
	peers(t, func(t *testing.T, p *mcppeer.Peer, ts bool) {
		s := open(t, p.URL, latest)
		st := s.call(1, args{Steps: 3, IntervalMS: 30, Text: "after-end"})
		prime := st.next(t)
		st.drop()
		waitLog(t, p, "the tool ended", toolDone("after-end"))
		waitEnded(t, p, "POST", "tools/call", "")
		rs := s.resumeStream(prime.ID)
		got := rs.untilResponse(t)
		if len(got) != 4 {
			t.Fatalf("replay %+v: want 3 progress and the response", got)
		}
		prog := progressOf(t, got, "tok-1")
		sorted := slices.Clone(prog)
		slices.SortFunc(sorted, func(a, b float64) int {
			if a == -1 {
				return 1
			}
			if b == -1 {
				return -1
			}
			return int(a - b)
		})
		if !slices.Equal(sorted, []float64{1, 2, 3, -1}) {
			t.Errorf("replay %v: want progress 1, 2, 3 and the response, each once", prog)
		}
		if ts {
			// The order is the ids' string order (localeCompare, which for
			// these ids, one stream's uuid, 13 digits of Date.now() and a
			// suffix of [0-9a-z], is their byte order), not the order
			// sent: two events of one millisecond come back in the order
			// of their random suffix.
			for i := 1; i < len(got); i++ {
				if got[i-1].ID >= got[i].ID {
					t.Errorf("replay not in id string order: %q before %q (%s:47)", got[i-1].ID, got[i].ID, tsStore)
				}
			}
			if !slices.Equal(prog, []float64{1, 2, 3, -1}) {
				t.Logf("the TypeScript SDK's store replayed out of the order sent: %v (%s:47 sorts by id; same-ms events by their random suffix)", prog, tsStore)
			}
			// The replayed stream stays open: a full call on the session
			// later, the GET has not ended.
			s.call(2, args{Steps: 0}).rest(t)
			log, _ := p.Log()
			if ex, ok := exchange(log, "GET", "", prime.ID); !ok || ex.Ended || ex.EndAt > 0 {
				t.Errorf("the GET that replayed a finished call ended (%+v); %s:393-414 keeps it open", ex, tsTransport)
			}
			return
		}
		if !slices.Equal(prog, []float64{1, 2, 3, -1}) {
			t.Errorf("replay %v, want in order", prog)
		}
		if extra := rs.rest(t); len(extra) != 0 {
			t.Errorf("after the replay: %+v, want the end (%s:1396-1398)", extra, goStream)
		}
	})
}

// A resume only ever replays its own stream: another call of the same
// session running at the same time never shows up in it. TS: the store
// filters by the stream id it takes from the event id
// (inMemoryEventStore.js:41-52). Go: one event list per stream
// (event.go:370-393).
func TestNoCrossStreamReplay(t *testing.T) {
	peers(t, func(t *testing.T, p *mcppeer.Peer, ts bool) {
		s := open(t, p.URL, latest)
		a := s.call(1, args{Steps: 8, IntervalMS: 60, Text: "a"})
		b := s.call(2, args{Steps: 5, IntervalMS: 60, Text: "b"})
		seen := []sseEvent{a.next(t), a.next(t)}
		a.drop()
		waitLog(t, p, "a's POST ended", func(log []mcppeer.Exchange) bool {
			n := 0
			for _, ex := range log {
				if ex.Method == "POST" && ex.RPC == "tools/call" && (ex.Ended || ex.EndAt > 0) {
					n++
				}
			}
			return n >= 1
		})
		rest := s.resumeStream(seen[1].ID).rest(t)
		if got := progressOf(t, rest, "tok-1"); !slices.Equal(got, []float64{2, 3, 4, 5, 6, 7, 8, -1}) {
			t.Errorf("a resumed: %v, want [2 ... 8 response] and nothing of b", got)
		}
		for _, m := range messages(t, rest) {
			if string(m.ID) == "2" {
				t.Errorf("a's resumed stream carried b's response")
			}
		}
		if got := progressOf(t, b.rest(t), "tok-2"); !slices.Equal(got, []float64{1, 2, 3, 4, 5, -1}) {
			t.Errorf("b: %v", got)
		}
	})
}

// An id the server cannot have. TS with its InMemoryEventStore: the store
// answers an empty stream id for an unknown id (inMemoryEventStore.js:37-39), the
// transport has no way to refuse it (it checks only when the store has
// getStreamIdForEventId, webStandardStreamableHttp.js:315-326, which this
// store has not), so it answers 200 text/event-stream, registers a stream
// under the empty id and never writes to it (393-414): an empty stream that
// stays open. Go: an id not of the form <stream>_<n> is 400 "malformed
// Last-Event-ID" (streamable.go:1234-1237); a well-formed id of no stream
// is 400 "failed to replay events" (1337-1348, event.go:380-382); an
// index past the end of a live stream is taken as given: 200, nothing
// replayed, the live events follow numbered after it (event.go:389-391,
// streamable.go:1403-1407): what was sent meanwhile is lost, silently.
func TestStaleID(t *testing.T) {
	peers(t, func(t *testing.T, p *mcppeer.Peer, ts bool) {
		s := open(t, p.URL, latest)
		st := s.call(1, args{Steps: 6, IntervalMS: 60, Text: "stale"})
		seen := []sseEvent{st.next(t), st.next(t)} // priming, progress 1
		st.drop()
		waitEnded(t, p, "POST", "tools/call", "")
		const stale = "streamprobe-stale-id-0"
		if ts {
			for i, id := range []string{stale, "00000000-0000-4000-8000-000000000000_1700000000000_abcdefgh"} {
				rs := s.resumeStream(id)
				s.call(2+i, args{Steps: 0}).rest(t) // a full call later
				waitLog(t, p, "the tool ended", toolDone("stale"))
				log, _ := p.Log()
				ex, _ := exchange(log, "GET", "", id)
				if len(ex.Writes) != 0 || ex.Ended || ex.EndAt > 0 {
					t.Errorf("GET Last-Event-ID %q: %+v, want 200 and an empty stream left open (%s:37-39, %s:393-414)", id, ex, tsStore, tsTransport)
				}
				rs.drop()
			}
			return
		}
		for _, c := range []struct{ id, body string }{
			{stale, "malformed Last-Event-ID"},                          // streamable.go:1234-1237
			{"ABCDEFGHIJKLMNOPQRSTUVWXYZ_3", "failed to replay events"}, // streamable.go:1337-1348
		} {
			resp := s.resume(c.id)
			if b := body(resp); resp.StatusCode != http.StatusBadRequest || !strings.Contains(b, c.body) {
				t.Errorf("GET Last-Event-ID %q: HTTP %d %q, want 400 %q", c.id, resp.StatusCode, b, c.body)
			}
		}
		sid, _ := streamOf(t, false, seen[1].ID)
		ahead := sid + "_99"
		rest := s.resumeStream(ahead).rest(t)
		prog := progressOf(t, rest, "tok-1")
		if len(rest) == 0 || prog[len(prog)-1] != -1 || prog[0] < 2 || rest[0].ID != sid+"_100" {
			t.Errorf("GET Last-Event-ID %q: %+v (progress %v), want the live tail numbered from _100 (%s:389-391, %s:1403-1407)", ahead, rest, prog, goEvent, goStream)
		}
	})
}

// The same Last-Event-ID twice. One after the other: both SDKs replay the
// same events again, byte for byte (the store is read again). At the same
// time (the first resume still connected): TS ends the first stream and
// serves the second (webStandardStreamableHttp.js:390-393); Go refuses the
// second with 409 (streamable.go:1323-1326).
func TestDuplicateID(t *testing.T) {
	peers(t, func(t *testing.T, p *mcppeer.Peer, ts bool) {
		s := open(t, p.URL, latest)
		st := s.call(1, args{Steps: 6, IntervalMS: 60, Text: "dup"})
		seen := []sseEvent{st.next(t), st.next(t)} // priming, progress 1
		st.drop()
		waitEnded(t, p, "POST", "tools/call", "")
		x := seen[1].ID
		r1 := s.resumeStream(x)
		first := r1.next(t)
		r1.drop()
		waitEnded(t, p, "GET", "", x)
		r2 := s.resumeStream(x)
		again := r2.next(t)
		if again != first {
			t.Errorf("the same Last-Event-ID twice: %+v then %+v, want the same event", first, again)
		}
		// r2 is connected: a third GET with x at the same time.
		if ts {
			r3 := s.resumeStream(x)
			if !r2.endedWithin(wait) {
				t.Errorf("the second resume stream was not ended by the third (%s:390-393)", tsTransport)
			}
			if e := r3.next(t); e != first {
				t.Errorf("the third resume: %+v, want %+v", e, first)
			}
			r3.untilResponse(t)
			return
		}
		resp := s.resume(x)
		if b := body(resp); resp.StatusCode != http.StatusConflict || !strings.Contains(b, "conflicts with ongoing stream") {
			t.Errorf("a resume while one is connected: HTTP %d %q, want 409 (%s:1323-1326)", resp.StatusCode, b, goStream)
		}
		r2.untilResponse(t)
	})
}

// A resume while the original POST is still connected (a client that
// believes its connection dead before the server does). TS: the GET
// takes the stream over and ends the POST's (webStandardStreamableHttp.js:
// 390-393). Go: 409 until the server has released the POST's stream
// (streamable.go:1323-1326, 1724): a client that resumes at once after a
// drop can get a 409 for a connection the server has not yet seen close.
func TestResumeWhileConnected(t *testing.T) {
	peers(t, func(t *testing.T, p *mcppeer.Peer, ts bool) {
		s := open(t, p.URL, latest)
		st := s.call(1, args{Steps: 4, IntervalMS: 60})
		prime := st.next(t)
		if ts {
			rs := s.resumeStream(prime.ID)
			if !st.endedWithin(wait) {
				t.Errorf("the POST's stream was not ended by the resume (%s:390-393)", tsTransport)
			}
			if got := progressOf(t, rs.untilResponse(t), "tok-1"); !slices.Equal(got, []float64{1, 2, 3, 4, -1}) {
				t.Errorf("the resume: %v", got)
			}
			return
		}
		resp := s.resume(prime.ID)
		if b := body(resp); resp.StatusCode != http.StatusConflict {
			t.Errorf("a resume while the POST is connected: HTTP %d %q, want 409 (%s:1323-1326)", resp.StatusCode, b, goStream)
		}
		if got := progressOf(t, st.rest(t), "tok-1"); !slices.Equal(got, []float64{1, 2, 3, 4, -1}) {
			t.Errorf("the POST after the refused resume: %v", got)
		}
	})
}

// notifications/cancelled for a running call. TS: the request's
// AbortController is aborted (protocol.js:173-179), progress sent after
// that is dropped (346-347) and no response is sent (397-399, 418-419):
// the call's SSE stream then carries nothing and never ends (the transport
// ends a request stream only with its response,
// webStandardStreamableHttp.js:947-950). Go: the handler's context is
// cancelled (transport.go:259-271) and jsonrpc2 answers every call
// (internal/jsonrpc2/conn.go:694-720), so a response arrives (an error
// result here, the tool returning ctx.Err()) and the stream ends. The spec
// says a receiver SHOULD NOT answer a cancelled request: the Go SDK does.
func TestCancelled(t *testing.T) {
	peers(t, func(t *testing.T, p *mcppeer.Peer, ts bool) {
		s := open(t, p.URL, latest)
		st := s.call(1, args{Steps: 40, IntervalMS: 50, Text: "cancel"})
		st.next(t) // priming
		st.next(t) // progress 1
		resp := s.post(map[string]any{"jsonrpc": "2.0", "method": "notifications/cancelled", "params": map[string]any{"requestId": 1, "reason": "test"}})
		resp.Body.Close()
		if resp.StatusCode != http.StatusAccepted {
			t.Fatalf("notifications/cancelled: HTTP %d, want 202", resp.StatusCode)
		}
		log := waitLog(t, p, "the tool saw the cancel", func(log []mcppeer.Exchange) bool {
			ex, ok := exchange(log, "TOOL", "", "")
			return ok && ex.RPC == "cancelled"
		})
		cancel, _ := exchange(log, "POST", "notifications/cancelled", "")
		if ts {
			s.call(2, args{Steps: 0}).rest(t) // a full call later: a response would be out by now
			log, _ := p.Log()
			call, _ := exchange(log, "POST", "tools/call", "")
			for _, ex := range log {
				if ex.Method == "POST" && ex.RPC == "tools/call" && ex.Seq < call.Seq {
					call = ex // the first call's exchange
				}
			}
			after := 0
			for _, w := range call.Writes {
				if strings.Contains(w.Data, `"result"`) || strings.Contains(w.Data, `"error"`) {
					t.Errorf("a response to the cancelled call: %q (%s:397-399)", w.Data, tsProtocol)
				}
				if call.Start+w.At > cancel.Start+cancel.EndAt {
					after++
				}
			}
			if after > 1 || call.Ended || call.EndAt > 0 {
				t.Errorf("after the cancel: %d write(s), ended %v; want at most the one in flight and the stream left open (%s:346-347, %s:947-950)", after, call.Ended, tsProtocol, tsTransport)
			}
			return
		}
		evs := st.rest(t)
		ms := messages(t, evs)
		if len(ms) == 0 || ms[len(ms)-1].Result == nil || !ms[len(ms)-1].Result.IsError {
			t.Fatalf("after the cancel: %+v, want the stream to end with an error result (%s)", evs, "internal/jsonrpc2/conn.go:694-720")
		}
		t.Logf("the Go SDK answered the cancelled call: %s", evs[len(evs)-1].Data)
		if got := len(progressOf(t, evs, "tok-1")); got > 2 {
			t.Errorf("%d progress after the cancel, want at most the one in flight", got-1)
		}
	})
}

// DELETE ends the session. TS: 200 (webStandardStreamableHttp.js:716-732);
// Go: 204 (streamable.go:601-615). Then the session is unknown: 404.
func TestDelete(t *testing.T) {
	peers(t, func(t *testing.T, p *mcppeer.Peer, ts bool) {
		s := open(t, p.URL, latest)
		resp := s.do(http.MethodDelete, nil, nil)
		resp.Body.Close()
		want := http.StatusNoContent
		if ts {
			want = http.StatusOK
		}
		if resp.StatusCode != want {
			t.Errorf("DELETE: HTTP %d, want %d", resp.StatusCode, want)
		}
		resp = s.callResp(1, args{Steps: 0})
		if b := body(resp); resp.StatusCode != http.StatusNotFound {
			t.Errorf("a call after DELETE: HTTP %d %q, want 404", resp.StatusCode, b)
		}
	})
}

// JSON response mode (?json=1). Both answer tools/call with one
// application/json body, the response. Progress: TS drops it (send() writes
// a request's messages only in SSE mode, webStandardStreamableHttp.js:866);
// Go sends it on the standalone GET stream when one is open
// (streamable.go:1852-1856, 1875-1877).
func TestJSONResponse(t *testing.T) {
	peers(t, func(t *testing.T, p *mcppeer.Peer, ts bool) {
		s := open(t, p.URL+"?json=1", latest)
		standalone := newStream(s.do(http.MethodGet, nil, nil))
		t.Cleanup(standalone.drop)
		if !ts {
			waitLog(t, p, "the standalone GET is open", func(log []mcppeer.Exchange) bool {
				ex, ok := exchange(log, "GET", "", "")
				return ok && len(ex.Writes) > 0 // ": ok" (streamable.go:1378-1382)
			})
		}
		resp := s.callResp(1, args{Steps: 2, IntervalMS: 20})
		if ct := resp.Header.Get("Content-Type"); resp.StatusCode != 200 || !strings.HasPrefix(ct, "application/json") {
			t.Fatalf("tools/call: HTTP %d %s", resp.StatusCode, ct)
		}
		b := body(resp)
		if !strings.Contains(b, `"id":1`) || !strings.Contains(b, "done: 2 steps") {
			t.Errorf("tools/call body %q, want the response", b)
		}
		if ts {
			s.callResp(2, args{Steps: 0}).Body.Close()
			log, _ := p.Log()
			if ex, _ := exchange(log, "GET", "", ""); len(ex.Writes) != 0 {
				t.Errorf("the standalone stream got %+v; %s:866 drops a request's notifications in JSON mode", ex.Writes, tsTransport)
			}
			return
		}
		evs := []sseEvent{standalone.next(t), standalone.next(t)}
		if got := progressOf(t, evs, "tok-1"); !slices.Equal(got, []float64{1, 2}) {
			t.Errorf("standalone stream: %v, want the call's progress (%s:1852-1856)", got, goStream)
		}
	})
}

// No event store (?store=0): no priming event and no ids, so nothing to
// resume from. A GET with a Last-Event-ID then: TS ignores the header and
// opens the standalone stream (webStandardStreamableHttp.js:241-246
// consult it only with a store); Go answers 400 "stream replay
// unsupported" (streamable.go:1239-1241).
func TestNoEventStore(t *testing.T) {
	peers(t, func(t *testing.T, p *mcppeer.Peer, ts bool) {
		s := open(t, p.URL+"?store=0", latest)
		evs := s.call(1, args{Steps: 2, IntervalMS: 10}).rest(t)
		if len(evs) != 3 {
			t.Fatalf("events %+v, want 2 progress and the response", evs)
		}
		for _, e := range evs {
			if e.ID != "" || e.Data == "" {
				t.Errorf("event %+v: want no id, no priming event", e)
			}
		}
		resp := s.resume("x_1")
		if ts {
			if ct := resp.Header.Get("Content-Type"); resp.StatusCode != 200 || !strings.HasPrefix(ct, "text/event-stream") {
				t.Errorf("GET Last-Event-ID without a store: HTTP %d %s, want the standalone stream (%s:241-246)", resp.StatusCode, ct, tsTransport)
			}
			resp.Body.Close()
			return
		}
		if b := body(resp); resp.StatusCode != http.StatusBadRequest || !strings.Contains(b, "stream replay unsupported") {
			t.Errorf("GET Last-Event-ID without a store: HTTP %d %q (%s:1239-1241)", resp.StatusCode, b, goStream)
		}
	})
}
