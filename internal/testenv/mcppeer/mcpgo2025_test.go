package mcppeer_test

import (
	"slices"
	"strconv"
	"testing"

	"github.com/streamprobe/streamprobe/internal/testenv/mcppeer"
	"github.com/streamprobe/streamprobe/internal/testenv/mcppeer/mcpgo"
)

// github.com/mark3labs/mcp-go on 2025-11-25 (sessions, its
// InMemoryEventStore), v0.58.0 and v1.2.1: the two behaviours the issue
// names on v0.58.0 are still in v1.2.1 (server/event_store.go is the same
// file in both).

// mcpgoVersions runs f against both pinned versions; the map gives the
// version's line of the request context and of the stored response in
// server/streamable_http.go.
func mcpgoVersions(t *testing.T, f func(t *testing.T, p *mcppeer.Peer, lines mcpgoLines)) {
	for _, v := range []string{mcpgo.V058, mcpgo.V121} {
		t.Run(v, func(t *testing.T) { t.Parallel(); f(t, mcpgo.Start(t, v), mcpgoRefs[v]) })
	}
}

type mcpgoLines struct{ requestCtx, storeCtx, storeResponse string }

var mcpgoRefs = map[string]mcpgoLines{
	mcpgo.V058: {"661", "683", "885-897"},
	mcpgo.V121: {"719", "747", "975-984"},
}

// eventIndex is an mcp-go event id: the store's sequence number.
func eventIndex(t *testing.T, id string) int {
	t.Helper()
	n, err := strconv.Atoi(id)
	if err != nil {
		t.Fatalf("event id %q is not an integer (server/event_store.go:95-96)", id)
	}
	return n
}

// Event ids come from one counter shared by every stream of every session
// (server/event_store.go:80-106: s.seq++ under the store's lock, "a
// store-wide sequence costs nothing extra"). A call in another session
// whose events are stored between two of this stream's takes the ids
// between them: this stream's ids skip, though nothing of it was lost.
// (2025-11-25 asks ids only to be unique per stream.)
func TestMcpGoSharedEventCounter(t *testing.T) {
	mcpgoVersions(t, func(t *testing.T, p *mcppeer.Peer, _ mcpgoLines) {
		a := open(t, p.URL, latest)
		b := open(t, p.URL, latest)
		const interval = 3000 // ms between a's reports: b runs whole in between
		as := a.call(1, args{Steps: 2, IntervalMS: interval, Text: "a"})
		first := as.next(t)
		bEvents := b.call(1, args{Steps: 1, IntervalMS: 0, Text: "b"}).rest(t)
		rest := as.rest(t)
		aIDs := []int{eventIndex(t, first.ID)}
		for _, e := range rest {
			aIDs = append(aIDs, eventIndex(t, e.ID))
		}
		var bIDs []int
		for _, e := range bEvents {
			bIDs = append(bIDs, eventIndex(t, e.ID))
		}
		if got := progressOf(t, append([]sseEvent{first}, rest...), "tok-1"); !slices.Equal(got, []float64{1, 2, -1}) {
			t.Fatalf("a: progress %v, want [1 2 response]", got)
		}
		// b's events (progress, response) came between a's first and second.
		if len(bIDs) != 2 || bIDs[0] != aIDs[0]+1 || bIDs[1] != aIDs[0]+2 || aIDs[1] != aIDs[0]+3 || aIDs[2] != aIDs[1]+1 {
			t.Errorf("a's ids %v, b's %v: want b's two between a's first and second, a's ids skipping by 3 (server/event_store.go:80-106)", aIDs, bIDs)
		}
	})
}

// The tool runs under the POST's request context
// (server/streamable_http.go v0.58.0:661, v1.2.1:719:
// s.server.WithContext(r.ctx(), session)): when the client's connection
// drops the tool is cancelled, and the handler's answer, the error
// "context canceled" (-32603), is stored in the event store regardless
// (storeCtx outlives the request, v0.58.0:683, v1.2.1:747; the interrupted
// response is stored, v0.58.0:885-897, v1.2.1:975-984), so the resume
// replays what was sent meanwhile and then that error, and ends. 2025-11-25 says a disconnection SHOULD NOT be taken
// as the client cancelling its request.
func TestMcpGoCancelOnDropReplaysError(t *testing.T) {
	mcpgoVersions(t, func(t *testing.T, p *mcppeer.Peer, lines mcpgoLines) {
		s := open(t, p.URL, latest)
		st := s.call(1, args{Steps: 20, IntervalMS: 100, Text: "dropped"})
		seen := st.next(t) // progress 1
		st.drop()
		log := waitLog(t, p, "the tool ended", toolDone("dropped"))
		if tool, _ := exchange(log, "TOOL", "", ""); tool.RPC != "cancelled" {
			t.Errorf("the tool %s after its POST's connection dropped; want cancelled (streamable_http.go:%s)", tool.RPC, lines.requestCtx)
		}
		waitEnded(t, p, "POST", "tools/call", "")
		evs := s.resumeStream(seen.ID).rest(t)
		ms := messages(t, evs)
		if len(ms) == 0 {
			t.Fatalf("the resume replayed nothing, want the stored error")
		}
		last := ms[len(ms)-1]
		if last.Error == nil || last.Error.Code != -32603 || last.Error.Message != "context canceled" || string(last.ID) != "1" {
			t.Errorf("the resume's last message %+v, want error -32603 \"context canceled\" for id 1 (streamable_http.go:%s, %s)", last, lines.storeCtx, lines.storeResponse)
		}
		for _, m := range ms[:len(ms)-1] {
			if m.Method != "notifications/progress" {
				t.Errorf("replayed %+v before the error, want progress only", m)
			}
		}
		if p := progressOf(t, evs[:len(evs)-1], "tok-1"); len(p) > 0 && p[0] != 2 {
			t.Errorf("replayed progress %v, want from 2 on", p)
		}
	})
}

// Two calls at once in ONE session: every POST's forwarder reads the
// session's one notification channel (server/streamable_http.go: the
// forwarder's select on session.notificationChannel, v0.58.0:749,
// v1.2.1:819), so a call's progress can arrive on the other call's stream.
// Pinned: each notification arrives once, on one of the two streams; how
// many cross over is the scheduler's and only logged.
func TestMcpGoSessionNotificationsCross(t *testing.T) {
	mcpgoVersions(t, func(t *testing.T, p *mcppeer.Peer, _ mcpgoLines) {
		s := open(t, p.URL, latest)
		const steps = 6
		x := s.call(1, args{Steps: steps, IntervalMS: 40, Text: "x"})
		y := s.call(2, args{Steps: steps, IntervalMS: 40, Text: "y"})
		streams := [][]sseEvent{x.rest(t), y.rest(t)}
		got := map[string][]float64{}
		crossed := 0
		for i, evs := range streams {
			own := []string{"tok-1", "tok-2"}[i]
			for _, m := range messages(t, evs) {
				if m.Method != "notifications/progress" {
					continue
				}
				tok, _ := m.Params.ProgressToken.(string)
				got[tok] = append(got[tok], m.Params.Progress)
				if tok != own {
					crossed++
				}
			}
		}
		for _, tok := range []string{"tok-1", "tok-2"} {
			p := slices.Clone(got[tok])
			slices.Sort(p)
			if !slices.Equal(p, []float64{1, 2, 3, 4, 5, 6}) {
				t.Errorf("%s: progress %v over both streams, want 1..%d once each", tok, got[tok], steps)
			}
		}
		t.Logf("%d of %d progress notifications arrived on the other call's stream", crossed, 2*steps)
	})
}
